"""Stream sources of the Pipeline API: ``TestSources.item_stream``, ``Sources.socket``, ``Sources.map_journal``,
``Sources.stream_from_processor`` and ``SourceBuilder`` stream products.

Each is a :class:`~pipeline.descriptors.StreamSource`: the supplier without timestamps and, where the source can
stamp items itself, ``timestamped_fn(params)`` giving a supplier whose items leave it as ``JetEvent`` with
watermarks (see :mod:`pipeline.timestamps`):

==================================  ======================  ===========================================
source                              vertex                  timestamps in the source
==================================  ======================  ===========================================
``TestSources.item_stream(n)``      ``itemStream``          native (the event's time) or a function
``SourceBuilder.timestamped_stream``  its name              native (``buf.add(item, ts)``)
``Sources.map_journal(name)``       ``mapJournalSource(N)``  a function (``stream_map_p``'s parameters)
``Sources.socket(host, port)``      ``socketSource(H:P)``    none: ``with_timestamps`` adds a vertex
``SourceBuilder.stream``, ``Sources.stream_from_processor``  none: ``with_timestamps`` adds a vertex
==================================  ======================  ===========================================

:class:`ItemStreamP` emits ``items_per_second`` items, item ``n`` due ``n / items_per_second`` seconds after
the processor started and stamped with that due time (epoch ms), as Jet's ``itemStream``; one processor in
the whole job. It never completes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.descriptors import StreamSource
from pipeline.events import SimpleEvent
from pipeline.internal import MappedMetaSupplier
from processors.windowing.event_time import EventTimeMapper, WmGenParams
from processors.api.inbox import Inbox
from processors.api.processor import Processor
from processors.io.text_streams import mark_stream_source
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["ItemStreamP", "item_stream_source", "builder_stream_source", "processor_stream_source",
           "socket_source", "map_journal_source"]

_MAX_BATCH = 1024


class ItemStreamP(Processor):
    """``TestSources.item_stream``'s processor (see the module docstring). With ``params`` it emits
    ``JetEvent`` items and watermarks, else the plain items."""

    def __init__(self, items_per_second: int, generator_fn: Callable[[int, int], Any] | None,
                 params: WmGenParams | None = None):
        self.items_per_second = items_per_second
        self.generator_fn = generator_fn
        self.params = params
        self._outbox: Any = None
        self._mapper: EventTimeMapper | None = None
        self._start_ns = 0
        self._start_ms = 0
        self._sequence = 0
        self._pending: list = []
        self._position = 0

    def init(self, outbox: Any, context: Any) -> None:
        self._outbox = outbox
        self._start_ns = time.monotonic_ns()
        self._start_ms = time.time_ns() // 1_000_000
        if self.params is not None:
            self._mapper = EventTimeMapper(self.params, 1, owner=f"source '{getattr(context, 'vertex_name', '')}'")

    def process(self, ordinal: int, inbox: Inbox) -> None:  # pragma: no cover - a source has no input
        inbox.clear()

    def _due(self) -> int:
        return (time.monotonic_ns() - self._start_ns) * self.items_per_second // 1_000_000_000 + 1

    def _next_batch(self) -> list:
        out: list = []
        due = min(self._due(), self._sequence + _MAX_BATCH)
        while self._sequence < due:
            sequence = self._sequence
            timestamp = self._start_ms + sequence * 1000 // self.items_per_second
            item = (SimpleEvent(timestamp, sequence) if self.generator_fn is None
                    else self.generator_fn(timestamp, sequence))
            self._sequence += 1
            if item is None:
                continue
            if self._mapper is None:
                out.append(item)
            else:
                native = timestamp if self.params.timestamp_fn is None else None
                out += self._mapper.handle_event(item, 0, native)
        if not out and self._mapper is not None:
            out = self._mapper.handle_no_event()
        return out

    def complete(self) -> bool:
        if self._position == len(self._pending):
            self._pending, self._position = self._next_batch(), 0
        self._position = self._outbox.offer_many(self._pending, self._position)
        return False


class _ItemStreamFactory:
    def __init__(self, items_per_second: int, generator_fn: Callable | None, params: WmGenParams | None):
        self.args = (items_per_second, generator_fn, params)

    def __call__(self) -> ItemStreamP:
        return ItemStreamP(*self.args)


def item_stream_source(items_per_second: int, generator_fn: Callable[[int, int], Any] | None) -> StreamSource:
    """``TestSources.item_stream(items_per_second, generator_fn)``."""
    if isinstance(items_per_second, bool) or not isinstance(items_per_second, int) or items_per_second < 1:
        raise DagValidationError(f"TestSources.item_stream: items_per_second must be an int >= 1, got "
                                 f"{items_per_second!r}")
    if generator_fn is not None and not callable(generator_fn):
        raise DagValidationError(f"TestSources.item_stream: generator_fn must be callable, got {generator_fn!r}")

    def supplier(params: WmGenParams | None) -> ProcessorMetaSupplier:
        return mark_stream_source(ProcessorMetaSupplier.force_total_parallelism_one(
            _ItemStreamFactory(items_per_second, generator_fn, params)))

    return StreamSource("itemStream", supplier(None), supplier, native_timestamps=True, accepts_timestamp_fn=True)


class _SetParams:
    """Gives a builder's timestamped source processor the pipeline's watermark parameters."""

    def __init__(self, params: WmGenParams):
        self.params = params

    def __call__(self, processor: Processor) -> Processor:
        setter = getattr(processor, "set_wm_gen_params", None)
        if setter is not None:  # processors of the other members expect no input and have no setter
            setter(self.params)
        return processor


def builder_stream_source(source: Any) -> StreamSource:
    """A ``SourceBuilder.stream``/``timestamped_stream`` product as a pipeline stream source."""
    native = getattr(source, "kind", "") == "timestamped_stream"

    def timestamped(params: WmGenParams) -> MappedMetaSupplier:
        return MappedMetaSupplier(source, _SetParams(params))

    return StreamSource(source.name, source, timestamped if native else None, native_timestamps=native)


def processor_stream_source(name: str, meta_supplier: Any) -> StreamSource:
    """``Sources.stream_from_processor(name, meta_supplier)``: no timestamps of its own."""
    return StreamSource(name, meta_supplier)


def socket_source(host: str, port: int, encoding: str = "utf-8") -> StreamSource:
    """``Sources.socket``: the lines a TCP server sends (``stream_socket_p``)."""
    from processors.io.text_streams import stream_socket_p

    return StreamSource(f"socketSource({host}:{port})", stream_socket_p(host, port, encoding))


def map_journal_source(name: str, initial_position: Any, predicate_fn: Callable | None,
                       projection_fn: Callable | None) -> StreamSource:
    """``Sources.map_journal``: the event journal of a driver-side map (``stream_map_p``)."""
    from processors.io.map_journal import stream_map_p

    def supplier(params: WmGenParams | None) -> Any:
        return stream_map_p(name, initial_position, wm_gen_params=params, predicate_fn=predicate_fn,
                            projection_fn=projection_fn)

    return StreamSource(f"mapJournalSource({name})", supplier(None), supplier, accepts_timestamp_fn=True)
