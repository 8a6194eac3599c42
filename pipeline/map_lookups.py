"""Looking items up in driver maps: ``map_using_imap`` and ``map_using_replicated_map`` (Jet 4's stage operations).

Jet builds both on its service operations, and so does jetspark; what differs is where the map lives. The
engine's maps are on the driver, so a processor reaches them over the job's authenticated channel
(``context.driver``, given to the processors of STAGED and PIPELINED jobs alike):

- ``map_using_imap(map_or_name, key_fn, map_fn(item, value))`` reads the map *when the item is processed*: a
  :class:`DriverMapLookup` service (one per processor) asks the driver for the values of a whole inbox batch at
  once (topic ``map.get``, one round trip per batch of up to :data:`LOOKUP_BATCH` items), through the async
  batched service machinery (``pipeline.async_service``), so order, timestamps and snapshots behave as for
  ``map_using_service_async_batched``. Vertex ``map-using-imap``.
- ``map_using_replicated_map(map_or_name, key_fn, map_fn)`` works on ``engine.get_replicated_map(name)``, whose
  whole content every processor holds: a :class:`ReplicatedMapView` copies it when the processor starts and,
  at most every :data:`REFRESH_SECONDS` while items come, applies the changes since from the map's event
  journal (``journal.start``/``journal.read``), so a change made on the driver reaches the lookups within about
  that time; a reader that fell behind the journal copies the whole map again. The journal position is taken
  *before* the copy, so a change made in between is applied twice, which leaves the same content. Lookups are
  then local dict reads (a ``map_using_service`` stage, vertex ``map-using-replicated-map``).

A missing key gives ``value=None``; a ``None`` result of ``map_fn`` drops the item (as ``map``). The keyed forms
(``stage.grouping_key(fn).map_using_imap(map, map_fn)``) look up the grouping key.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from pipeline.descriptors import collection_name
from pipeline.services import ServiceFactories
from pipeline.stateful_ops import async_service
from pipeline.stateless_ops import using
from pipeline.transform_graph import Transform
from processors.io import driver_protocol as topics
from processors.io.event_journal import EventType, JournalInitialPosition

__all__ = ["map_using_imap", "map_using_replicated_map", "DriverMapLookup", "ReplicatedMapView", "LOOKUP_BATCH",
           "REFRESH_SECONDS"]

LOOKUP_BATCH = 1024
"""The most items whose keys one ``map.get`` request carries."""
REFRESH_SECONDS = 0.1
"""How often (at most) a processor of ``map_using_replicated_map`` applies the replicated map's changes."""


class DriverMapLookup:
    """A processor's service for ``map_using_imap``: batched reads of a driver map (``get_all``)."""

    def __init__(self, context: Any, name: str):
        self.name = name
        self._driver = topics.require_driver(context, f"map_using_imap({name!r})")

    def get_all(self, keys: list) -> list:
        """The values of ``keys`` now (``None`` for a missing key), in one request."""
        return self._driver.request(topics.MAP_GET, {"name": self.name, "keys": keys})


class ReplicatedMapView:
    """A processor's copy of a replicated map for ``map_using_replicated_map`` (see the module docstring)."""

    def __init__(self, context: Any, name: str, refresh_seconds: float = REFRESH_SECONDS):
        self.name = name
        self._driver = topics.require_driver(context, f"map_using_replicated_map({name!r})")
        self._refresh_seconds = refresh_seconds
        self._copy()

    def _copy(self) -> None:
        start = self._driver.request(topics.JOURNAL_START, {
            "map": self.name, "kind": "replicated", "index": 0, "total": 1,
            "initial": JournalInitialPosition.START_FROM_CURRENT.value})
        self._partitions, self._offsets = start["partitions"], start["offsets"]
        self.data = dict(self._driver.request(topics.COLLECTION_SLICE,
                                              {"kind": "replicated", "name": self.name, "index": 0, "count": 1}))
        self._checked = time.monotonic()

    def get(self, key: Any) -> Any:
        """The key's value in this processor's copy (``None`` when missing), refreshed when it is due."""
        if time.monotonic() - self._checked >= self._refresh_seconds:
            self.refresh()
        return self.data.get(key)

    def refresh(self) -> None:
        """Apply every change journalled since the last refresh (copy the map again if some were lost)."""
        while True:
            reply = self._driver.request(topics.JOURNAL_READ, {
                "map": self.name, "kind": "replicated", "partitions": self._partitions, "offsets": self._offsets,
                "max": None})
            if reply["lost"]:
                self._copy()
                return
            moved = reply["offsets"] != self._offsets
            for events in reply["events"]:
                for event in events:
                    if event.type is EventType.REMOVED:
                        self.data.pop(event.key, None)
                    else:
                        self.data[event.key] = event.new_value
            self._offsets = reply["offsets"]
            if not moved:
                break
        self._checked = time.monotonic()


class _ImapCreate:
    def __init__(self, name: str):
        self.name = name

    def __call__(self, context: Any) -> DriverMapLookup:
        return DriverMapLookup(context, self.name)


class _ReplicatedCreate:
    def __init__(self, name: str):
        self.name = name

    def __call__(self, context: Any) -> ReplicatedMapView:
        return ReplicatedMapView(context, self.name)


class _ImapBatch:
    """``fn(service, items)`` of the batched async stage: one ``map.get`` for the batch, then ``map_fn`` per item
    (a failure becomes the future's, so the job's error names the item's position)."""

    def __init__(self, key_fn: Callable[[Any], Any], map_fn: Callable[[Any, Any], Any]):
        self.key_fn, self.map_fn = key_fn, map_fn

    def __call__(self, lookup: DriverMapLookup, items: list) -> Future:
        future: Future = Future()
        try:
            values = lookup.get_all([self.key_fn(item) for item in items])
            future.set_result([self.map_fn(item, value) for item, value in zip(items, values)])
        except Exception as exc:  # noqa: BLE001 - reported by the async stage with the item's position
            future.set_exception(exc)
        return future


class _ReplicatedLookup:
    """``fn(service, item)`` of the ``map_using_service`` stage: ``map_fn(item, view.get(key_fn(item)))``."""

    def __init__(self, key_fn: Callable[[Any], Any], map_fn: Callable[[Any, Any], Any]):
        self.key_fn, self.map_fn = key_fn, map_fn

    def __call__(self, view: ReplicatedMapView, item: Any) -> Any:
        return self.map_fn(item, view.get(self.key_fn(item)))


def _check(stage: str, operation: str, **fns: Any) -> None:
    for label, fn in fns.items():
        if not callable(fn):
            raise TypeError(f"stage '{stage}': {operation} needs {label} to be a function, got {fn!r:.60}")


def map_using_imap(upstream: Transform, map_or_name: Any, key_fn: Callable[[Any], Any],
                   map_fn: Callable[[Any, Any], Any]) -> Transform:
    """The ``map-using-imap`` transform: ``map_fn(item, value)`` with ``value`` the driver map's value of
    ``key_fn(item)`` when the item is processed (a batched async service, one ``map.get`` per batch)."""
    name = collection_name("map_using_imap", map_or_name, "map")
    _check(upstream.name, "map_using_imap(map, key_fn, map_fn)", key_fn=key_fn, map_fn=map_fn)
    factory = ServiceFactories.non_shared_service(_ImapCreate(name)).to_non_cooperative()
    return async_service(upstream, "map-using-imap", factory, _ImapBatch(key_fn, map_fn), LOOKUP_BATCH, 1, 60.0)


def map_using_replicated_map(upstream: Transform, map_or_name: Any, key_fn: Callable[[Any], Any],
                             map_fn: Callable[[Any, Any], Any]) -> Transform:
    """The ``map-using-replicated-map`` transform: ``map_fn(item, value)`` with ``value`` from this processor's
    copy of the replicated map (:class:`ReplicatedMapView`)."""
    name = collection_name("map_using_replicated_map", map_or_name, "replicated_map")
    _check(upstream.name, "map_using_replicated_map(map, key_fn, map_fn)", key_fn=key_fn, map_fn=map_fn)
    factory = ServiceFactories.non_shared_service(_ReplicatedCreate(name)).to_non_cooperative()
    return using(upstream, "map", factory.to_context_factory(), _ReplicatedLookup(key_fn, map_fn), "replicated-map")
