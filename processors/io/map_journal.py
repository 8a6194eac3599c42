"""``stream_map_p``: a stream source over the event journal of a driver-side map (Jet's ``streamMapP``).

Every driver-side map (``engine.get_map(name)``) journals its puts, updates and removes from its creation,
split into the engine's ``partition_count`` journal partitions by the default partitioner of the key (see
``dag.runtime.common.driver_collections``). The source's processors share the partitions: processor ``g`` of ``n``
(global index, total parallelism) reads the partitions ``p`` with ``p % n == g``, through the job's driver
channel (``context.driver``, topics ``journal.start``/``journal.read`` of ``processors.io.driver_protocol``).

- ``initial_position``: ``START_FROM_OLDEST`` reads from the oldest event still journaled (so it sees what
  was put before the job started, as far as the bounded journal kept it); ``START_FROM_CURRENT`` from the
  journal's end when the processor starts.
- Each event (:class:`~processors.io.event_journal.EventJournalMapEvent`) passes ``predicate_fn`` (default: puts
  and updates, Jet's ``mapPutEvents``) and is emitted as ``projection_fn(event)`` (default: the entry
  ``(key, new_value)``, Jet's ``mapEventToEntry``); a ``None`` projection is dropped.
- ``wm_gen_params`` (``processors.windowing.event_time.wm_gen_params``): timestamps are taken from the projected item;
  one watermark policy per journal partition the processor reads, and **one** watermark for all of them: the
  minimum over the partitions that are not idle (a partition without events for the idle timeout is idle;
  when all are, the idle message goes out once), as Jet's ``EventTimeMapper``. Without it, no watermarks.
- Events of one key keep their order (one key, one partition). A reader that falls behind the journal's
  capacity loses the oldest events; the driver logs how many.
- Non-cooperative (each poll is a request to the driver); when a poll returns nothing the runtime backs off.
- Snapshots: after emitting what it has read, each processor saves one entry per journal partition it reads,
  ``broadcast_key(("stream_map_p", name, partition)) -> (offset, watermark or None)``. On restore every
  processor receives every entry (broadcast) and keeps those of the partitions it now reads, whatever the new
  parallelism: it reads on from the saved offsets, and the saved watermarks take effect (Jet 4's rule).

>>> src = stream_map_p("trades", JournalInitialPosition.START_FROM_CURRENT)
>>> dag.new_vertex("trades", src)   # doctest: +SKIP
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from jetspark_base.errors import DagValidationError
from processors.io import driver_protocol as topics
from processors.io.event_journal import JournalInitialPosition, map_event_to_entry, map_put_events
from processors.api.snapshot_keys import broadcast_key
from processors.io.partitioned_source import PartitionedStreamSource
from processors.io.text_streams import mark_stream_source
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["stream_map_p", "StreamMapJournalP", "READ_BATCH"]

READ_BATCH = 256
"""The most events one poll takes from each partition."""


def stream_map_p(
    name: str,
    initial_position: JournalInitialPosition = JournalInitialPosition.START_FROM_OLDEST,
    wm_gen_params: Any = None,
    predicate_fn: Callable[[Any], bool] | None = None,
    projection_fn: Callable[[Any], Any] | None = None,
) -> ProcessorMetaSupplier:
    """A stream source of the changes of the driver-side map ``name`` (see the module docstring).

    >>> stream_map_p("prices", predicate_fn=lambda e: e.new_value > 0, projection_fn=lambda e: e.new_value)
    ... # doctest: +ELLIPSIS
    <processors.api.suppliers...>
    """
    if not isinstance(name, str) or not name:
        raise DagValidationError(f"stream_map_p: the map name must be a non-empty str, got {name!r}")
    try:
        initial_position = JournalInitialPosition(initial_position)
    except ValueError:
        raise DagValidationError(
            f"stream_map_p('{name}'): initial_position must be a JournalInitialPosition "
            f"(START_FROM_OLDEST or START_FROM_CURRENT), got {initial_position!r}") from None
    for argument, fn in (("predicate_fn", predicate_fn), ("projection_fn", projection_fn)):
        if fn is not None and not callable(fn):
            raise DagValidationError(f"stream_map_p('{name}'): {argument} must be callable, got {fn!r}")
    factory = functools.partial(StreamMapJournalP, name, initial_position, wm_gen_params,
                                predicate_fn or map_put_events, projection_fn or map_event_to_entry)
    return mark_stream_source(ProcessorMetaSupplier.of(factory))


class StreamMapJournalP(PartitionedStreamSource):
    """The processor of :func:`stream_map_p`."""

    def __init__(self, name: str, initial_position: JournalInitialPosition, wm_gen_params: Any,
                 predicate_fn: Callable[[Any], bool], projection_fn: Callable[[Any], Any]):
        super().__init__()
        self._name = name
        self._initial = initial_position
        self._wm_params = wm_gen_params
        self._predicate = predicate_fn
        self._projection = projection_fn
        self._driver = None
        self.partitions: list[int] = []
        self.offsets: list[int] = []
        self._restored: dict[int, tuple] = {}

    def init_source(self, context) -> None:
        self._driver = topics.require_driver(context, f"stream_map_p('{self._name}')")
        reply = self._driver.request(topics.JOURNAL_START, {
            "map": self._name, "index": context.global_processor_index, "total": context.total_parallelism,
            "initial": self._initial.value})
        self.partitions, self.offsets = list(reply["partitions"]), list(reply["offsets"])
        if self._wm_params is not None:
            from processors.windowing.event_time import EventTimeMapper

            self._mapper = EventTimeMapper(self._wm_params, len(self.partitions),
                                           owner=f"stream_map_p('{self._name}')")

    def complete(self) -> bool:
        if self._emit_pending():
            self._pending = self._poll()
            self._emit_pending()
        return False

    def _poll(self) -> list:
        """The items (and watermarks) of the events that arrived since the last poll."""
        if not self.partitions:
            return self._mapper.handle_no_event() if self._mapper is not None else []
        reply = self._driver.request(topics.JOURNAL_READ, {
            "map": self._name, "partitions": self.partitions, "offsets": self.offsets, "max": READ_BATCH})
        self.offsets = list(reply["offsets"])
        out: list = []
        predicate, projection, add = self._predicate, self._projection, self._add_item
        for index, events in enumerate(reply["events"]):
            for event in events:
                if predicate(event):
                    add(out, projection(event), index)
        if self._mapper is not None and not out:
            out = self._mapper.handle_no_event()
        return out

    # ------------------------------------------------------------------------------------------ snapshots
    def _snapshot_key(self, partition: int) -> Any:
        return broadcast_key(("stream_map_p", self._name, partition))

    def _snapshot_entries(self) -> list[tuple[Any, Any]]:
        return [(self._snapshot_key(p), (offset, self._watermark(i)))
                for i, (p, offset) in enumerate(zip(self.partitions, self.offsets))]

    def restore_from_snapshot(self, inbox) -> None:
        for key, value in inbox.take_all():
            kind, name, partition = key.key
            if kind == "stream_map_p" and name == self._name:
                self._restored[partition] = value

    def finish_snapshot_restore(self) -> bool:
        for i, partition in enumerate(self.partitions):
            if partition in self._restored:
                offset, wm = self._restored[partition]
                self.offsets[i] = offset
                if wm is not None and self._mapper is not None:
                    self._mapper.restore_watermark(i, wm)
        self._restored = {}
        return True
