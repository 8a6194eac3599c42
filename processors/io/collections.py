"""Driver-side collection sources and sinks, Jet's ``readMapP``/``readListP``/``writeMapP``/``writeListP``.

The collections are the engine's named driver-side maps and lists (``engine.get_map(name)``,
``engine.get_list(name)``), Jet's IMap/IList stand-ins. These suppliers are *runtime-bound* markers: the
engine implements them with Spark operations instead of processors (``docs/architecture.md``):

- ``read_map_p(name)`` / ``read_list_p(name)`` (``runtime_kind = "driver_source"``): the collection's items
  (a map as ``(key, value)`` entries) are sliced into the vertex's P partitions with ``parallelize``, one
  contiguous slice per processor, and emitted to every outbound ordinal;
- ``write_map_p(name)`` / ``write_list_p(name)`` (``runtime_kind = "driver_sink"``): the vertex's input is
  brought to the driver with ``toLocalIterator`` and stored (a map takes ``(key, value)`` entries). Like Jet's,
  they prefer local parallelism 1.

Use them for small data: everything passes through the driver.

On the pipelined runtime (and in any job that gives processors a driver channel, ``Context.driver``) they
run as ordinary processors instead, made by ``marker.live_supplier()``:

- :class:`DriverCollectionReaderP` asks the driver for its slice (topic ``collection.slice``: processor ``g``
  of ``n`` gets the ``g``-th of ``n`` contiguous slices, the same split as above) and emits it;
- :class:`DriverCollectionWriterP` sends every inbox batch to the driver as it arrives (one-way topics
  ``sink.list``/``sink.map``), so results show up in ``engine.get_list/get_map`` while a stream job runs, and
  in ``complete()`` waits until the driver has stored everything it sent (``sink.flush``). ``write_map_p``
  checks each item is a ``(key, value)`` entry before sending, naming the vertex otherwise.

Snapshots: the reader saves its position in its slice (``broadcast_key(("slice", g))``; a restored processor of
the same index and slice length resumes there). In an ``EXACTLY_ONCE`` job the writer sends its batches to
``sink.stage`` instead and, in ``snapshot_commit_prepare``, ``sink.seal``: the driver's ``SinkLedger`` publishes
them when the snapshot that covers them completes (``dag/runtime/pipelined/sink_ledger.py``), so a restart neither loses
nor repeats results.

>>> src = read_list_p("lines"); src.runtime_kind, src.collection
('driver_source', ('list', 'lines'))
"""

from __future__ import annotations

import functools
from typing import Any

from jetspark_base.errors import DagValidationError
from processors.io import driver_protocol as topics
from processors.api.snapshot_keys import broadcast_key
from processors.api.processor import Processor
from processors.api.suppliers import ProcessorMetaSupplier, RuntimeBound

__all__ = ["read_map_p", "read_list_p", "write_map_p", "write_list_p", "DriverCollectionSource",
           "DriverCollectionSink", "DriverCollectionReaderP", "DriverCollectionWriterP"]


def _checked_name(factory: str, name: object) -> str:
    if not isinstance(name, str) or not name:
        raise DagValidationError(f"{factory}: the collection name must be a non-empty str, got {name!r}")
    return name


class DriverCollectionSource(RuntimeBound, ProcessorMetaSupplier):
    """The meta-supplier of :func:`read_map_p` / :func:`read_list_p`; ``collection`` is ``(kind, name)``."""

    runtime_kind = "driver_source"

    def __init__(self, kind: str, name: str):
        self.collection = (kind, name)

    def live_supplier(self) -> ProcessorMetaSupplier:
        """The processors that read the collection over the job's driver channel."""
        return ProcessorMetaSupplier.of(functools.partial(DriverCollectionReaderP, *self.collection))

    def __repr__(self) -> str:
        return f"read_{self.collection[0]}_p({self.collection[1]!r})"


class DriverCollectionSink(RuntimeBound, ProcessorMetaSupplier):
    """The meta-supplier of :func:`write_map_p` / :func:`write_list_p`; ``collection`` is ``(kind, name)``."""

    runtime_kind = "driver_sink"

    def __init__(self, kind: str, name: str):
        self.collection = (kind, name)

    def preferred_local_parallelism(self) -> int | None:
        return 1

    def live_supplier(self) -> ProcessorMetaSupplier:
        """The processors that deliver to the collection over the job's driver channel, batch by batch."""
        return ProcessorMetaSupplier.of(functools.partial(DriverCollectionWriterP, *self.collection),
                                        preferred_local_parallelism=1)

    def __repr__(self) -> str:
        return f"write_{self.collection[0]}_p({self.collection[1]!r})"


def check_entry(item: object, vertex: str, map_name: str) -> None:
    """Raise a ``DagValidationError`` naming the vertex unless ``item`` is a ``(key, value)`` tuple."""
    if not (isinstance(item, tuple) and len(item) == 2):
        raise DagValidationError(
            f"vertex '{vertex}' (write_map_p({map_name!r})) received {item!r:.100}, not a (key, value) entry; "
            "emit entries with processors.entry(key, value) upstream"
        )


class DriverCollectionReaderP(Processor):
    """Emits this processor's slice of a driver-side list or map (a map as ``(key, value)`` entries)."""

    def __init__(self, kind: str, name: str):
        self._kind, self._name = kind, name
        self._items: list = []
        self._pos = 0
        self._outbox = None

    def init(self, outbox, context) -> None:
        self._outbox = outbox
        self._index = context.global_processor_index
        driver = topics.require_driver(context, f"read_{self._kind}_p({self._name!r})")
        self._items = driver.request(topics.COLLECTION_SLICE, {
            "kind": self._kind, "name": self._name, "index": context.global_processor_index,
            "count": context.total_parallelism})

    def complete(self) -> bool:
        self._pos = self._outbox.offer_many(self._items, self._pos)
        return self._pos >= len(self._items)

    def save_to_snapshot(self) -> bool:
        """The position in the slice, under a broadcast key naming the processor (each takes back its own)."""
        return self._outbox.offer_to_snapshot(broadcast_key(("slice", self._index)), (len(self._items), self._pos))

    def restore_from_snapshot(self, inbox) -> None:
        for key, (length, position) in inbox.take_all():
            if key.key[1] == self._index and length == len(self._items):  # else the slices changed: start over
                self._pos = position


class DriverSinkWriterP(Processor):
    """What every sink that sends its batches to the driver shares: the driver client, and under
    ``EXACTLY_ONCE`` the staging of batches (``sink.stage``) sealed at each snapshot (``sink.seal``) and
    published by the driver when the snapshot completes; ``complete()`` waits until the driver handled all.
    Subclasses send in ``process`` (:meth:`_stage` when ``self._staged``)."""

    def __init__(self, what: str):
        self._what = what
        self._driver: Any = None
        self._vertex = ""
        self._index = 0
        self._staged = False

    def is_cooperative(self) -> bool:
        return False  # sending may block on the socket, or wait for the driver's reply

    def init(self, outbox, context) -> None:
        self._vertex = context.vertex_name
        self._index = context.global_processor_index
        self._driver = topics.require_driver(context, self._what)
        guarantee = getattr(context, "processing_guarantee", None)
        self._staged = getattr(guarantee, "value", guarantee) == "EXACTLY_ONCE"

    def _stage(self, kind: str, name: str, items: list) -> None:
        """EXACTLY_ONCE: the driver stages the items until a snapshot that covers them completes."""
        self._driver.send(topics.SINK_STAGE, {"vertex": self._vertex, "g": self._index, "kind": kind,
                                               "name": name, "items": items})

    def snapshot_commit_prepare(self) -> bool:
        if self._staged:  # a request: every staged batch sent before it is on the driver when it returns
            self._driver.request(topics.SINK_SEAL, {"vertex": self._vertex, "g": self._index})
        return True

    def restore_from_snapshot(self, inbox) -> None:  # saves nothing (the driver holds what is staged)
        inbox.clear()

    def complete(self) -> bool:
        self._driver.request(topics.SINK_FLUSH, {})
        return True


class DriverCollectionWriterP(DriverSinkWriterP):
    """Sends every inbox batch to a driver-side list or map; ``complete()`` waits until all of it is stored."""

    def __init__(self, kind: str, name: str):
        super().__init__(f"write_{kind}_p({name!r})")
        self._kind, self._name = kind, name
        self._topic = topics.SINK_MAP if kind == "map" else topics.SINK_LIST

    def process(self, ordinal: int, inbox) -> None:
        items = inbox.take_all()
        if not items:
            return
        if self._kind == "map":
            for item in items:
                check_entry(item, self._vertex, self._name)
        if self._staged:
            self._stage(self._kind, self._name, items)
        else:
            self._driver.send(self._topic, {"name": self._name, "items": items})


def read_map_p(name: str) -> DriverCollectionSource:
    """A source emitting the ``(key, value)`` entries of the engine's map ``name``."""
    return DriverCollectionSource("map", _checked_name("read_map_p", name))


def read_list_p(name: str) -> DriverCollectionSource:
    """A source emitting the items of the engine's list ``name``, sliced across the processors."""
    return DriverCollectionSource("list", _checked_name("read_list_p", name))


def write_map_p(name: str) -> DriverCollectionSink:
    """A sink putting ``(key, value)`` entries into the engine's map ``name``."""
    return DriverCollectionSink("map", _checked_name("write_map_p", name))


def write_list_p(name: str) -> DriverCollectionSink:
    """A sink appending items to the engine's list ``name``."""
    return DriverCollectionSink("list", _checked_name("write_list_p", name))
