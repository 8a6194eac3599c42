"""The driver's handlers for the collection topics of ``processors.io.driver_protocol`` (pure Python).

:func:`register_collection_topics` installs them on a job's :class:`~dag.runtime.common.channel.DriverChannel`, over
the engine's :class:`~dag.runtime.common.driver_collections.DriverCollections`: event-journal reads for
``stream_map_p``, slices for ``read_list_p``/``read_map_p``, and the live list and map sinks. Handlers run on
the channel's connection threads; the collections take their own locks.

>>> from dag.runtime.common.channel import ChannelClient, DriverChannel, new_secret
>>> from dag.runtime.common.driver_collections import DriverCollections
>>> store, secret = DriverCollections(partition_count=2), new_secret()
>>> with DriverChannel(secret) as channel:
...     register_collection_topics(channel, store)
...     with ChannelClient(channel.address, secret) as client:
...         client.send("sink.list", {"name": "out", "items": [1, 2]})
...         client.request("sink.flush", {})
True
>>> store.get("list", "out")
[1, 2]
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from jetspark_base.errors import JobFailedError
from processors.io import driver_protocol as topics
from processors.io.event_journal import JournalInitialPosition

__all__ = ["register_collection_topics", "register_apply_topic", "apply_on_driver", "end_driver_sinks",
           "slice_bounds", "MapMirror"]

MAX_READ = 1024
"""The most events one ``journal.read`` returns per partition."""


def slice_bounds(length: int, index: int, count: int) -> tuple[int, int]:
    """``[start, end)`` of the ``index``-th of ``count`` contiguous, near-equal slices of ``length`` items
    (the first ``length % count`` slices are one longer).

    >>> [slice_bounds(5, g, 2) for g in range(2)]
    [(0, 3), (3, 5)]
    """
    size, extra = divmod(length, count)
    start = index * size + min(index, extra)
    return start, start + size + (1 if index < extra else 0)


class MapMirror:
    """What ``sink.map.apply`` (``CdcSinks.map``) remembers of one driver map for the job, so that a replayed,
    late or out-of-order record never moves the map back in time: the sequence last applied to each key
    (removed keys too), the table whose record put each present key, and the sequence of each table's last
    truncate.

    A record is ignored unless its sequence is newer than both its key's last one and its table's last truncate
    (so a row older than a truncate cannot come back). A truncate removes the keys its table put with an older
    sequence; keys put by a newer record (one that overtook it on another processor) stay.

    >>> m, target = MapMirror(), {}
    >>> t = ("db", "public", "orders")
    >>> m.apply(target, [(t, 1, (10, 1), "put", "a"), (t, 2, (30, 1), "put", "b"),  # 2 overtook the truncate
    ...                  (t, None, (20, 1), "truncate", None)])
    >>> m.apply(target, [(t, 1, (10, 1), "put", "a")])  # a replay of a row older than the truncate
    >>> target
    {2: 'b'}
    """

    def __init__(self) -> None:
        self.sequences: dict[Any, Any] = {}  # key -> the sequence last applied to it
        self.owners: dict[Any, Any] = {}  # present key -> the table that put it
        self.keys: dict[Any, set] = {}  # table -> its present keys
        self.truncated: dict[Any, Any] = {}  # table -> the sequence of its last truncate

    def apply(self, target: Any, items: list) -> None:
        """Apply ``(table, key, sequence, action, value)`` items to ``target`` (a mapping), in order."""
        for table, key, sequence, action, value in items:
            if table in self.truncated and sequence <= self.truncated[table]:
                continue
            if action == topics.APPLY_TRUNCATE:
                self._truncate(target, table, sequence)
                continue
            if key in self.sequences and sequence <= self.sequences[key]:
                continue
            self.sequences[key] = sequence
            owner = self.owners.pop(key, None)
            if owner is not None:
                self.keys[owner].discard(key)
            if action == topics.APPLY_DELETE:
                target.pop(key, None)
            else:
                target[key] = value
                self.owners[key] = table
                self.keys.setdefault(table, set()).add(key)

    def _truncate(self, target: Any, table: Any, sequence: Any) -> None:
        self.truncated[table] = sequence
        keys = self.keys.get(table, set())
        for key in [k for k in keys if self.sequences[k] < sequence]:
            keys.discard(key)
            del self.owners[key]
            target.pop(key, None)


def _map_apply_handler(collections: Any) -> Any:
    """``sink.map.apply`` (``CdcSinks.map``): one :class:`MapMirror` per map name for the job."""
    mirrors: dict[str, MapMirror] = {}
    lock = threading.Lock()

    def sink_map_apply(body: dict) -> None:
        target = collections.get("map", body["name"])
        with lock:
            mirrors.setdefault(body["name"], MapMirror()).apply(target, body["items"])

    return sink_map_apply


def apply_on_driver(dag: Any, collections: Any, vertex: str, items: list) -> None:
    """Hand ``items`` of the driver-applied sink ``vertex`` of ``dag`` (``processors.io.driver_apply``) to its driver
    object in ``collections``; a user function's failure raises the sink's ``JobFailedError``."""
    sink = dag.get_vertex(vertex).meta_supplier
    sink.apply_items(collections.get(*sink.collection), items, vertex)


def end_driver_sinks(dag: Any, collections: Any, error: BaseException | None) -> None:
    """Tell every driver-applied sink of ``dag`` that its job ended (``error``: the job's failure or ``None``)."""
    for vertex in dag:
        sink = vertex.meta_supplier
        if callable(getattr(sink, "job_ended", None)):
            sink.job_ended(collections.get(*sink.collection), error)


def register_apply_topic(channel: Any, dag: Any, collections: Any) -> None:
    """Serve ``sink.apply`` for the driver-applied sinks of the job's ``dag``: the driver applies each batch with
    the sink's own functions (the originals, never shipped back) and replies ``None`` or the failure."""

    def sink_apply(body: dict) -> dict | None:
        try:
            apply_on_driver(dag, collections, body["vertex"], body["items"])
        except JobFailedError as exc:
            return {"message": str(exc), "exc_type": exc.exc_type, "exc_message": exc.exc_message}
        return None

    channel.register(topics.SINK_APPLY, sink_apply)


def register_collection_topics(channel: Any, collections: Any) -> None:
    """Register every collection topic's handler on ``channel`` (a ``DriverChannel``)."""

    def journal_start(body: dict) -> dict:
        journal = collections.journal(body["map"], body.get("kind", "map"))
        index, total = body["index"], body["total"]
        partitions = [p for p in range(journal.partition_count) if p % total == index]
        initial = JournalInitialPosition(body["initial"])
        with journal.lock:
            if initial is JournalInitialPosition.START_FROM_OLDEST:
                offsets = [journal.oldest_sequence(p) for p in partitions]
            else:
                offsets = [journal.next_sequence(p) for p in partitions]
        return {"partitions": partitions, "offsets": offsets}

    def journal_read(body: dict) -> dict:
        journal = collections.journal(body["map"], body.get("kind", "map"))
        limit = min(int(body.get("max") or MAX_READ), MAX_READ)
        events, offsets, lost = [], [], 0
        for partition, offset in zip(body["partitions"], body["offsets"]):
            got, next_offset, missed = journal.read(partition, offset, limit)
            events.append(got)
            offsets.append(next_offset)
            lost += missed
        return {"events": events, "offsets": offsets, "lost": lost}

    def collection_slice(body: dict) -> list:
        kind, name = body["kind"], body["name"]
        target = collections.get(kind, name)
        is_map = kind in ("map", "replicated")
        with target.journal.lock if is_map else contextlib.nullcontext():
            items = list(target.items()) if is_map else list(target)
        start, end = slice_bounds(len(items), body["index"], body["count"])
        return items[start:end]

    def map_get(body: dict) -> list:
        target = collections.get(body.get("kind", "map"), body["name"])
        with target.journal.lock:
            return [target.get(key) for key in body["keys"]]

    def sink_list(body: dict) -> None:
        collections.get("list", body["name"]).extend(body["items"])

    def sink_map(body: dict) -> None:
        collections.get("map", body["name"]).update(body["items"])

    channel.register(topics.JOURNAL_START, journal_start)
    channel.register(topics.JOURNAL_READ, journal_read)
    channel.register(topics.COLLECTION_SLICE, collection_slice)
    channel.register(topics.MAP_GET, map_get)
    channel.register(topics.SINK_LIST, sink_list)
    channel.register(topics.SINK_MAP, sink_map)
    channel.register(topics.SINK_MAP_APPLY, _map_apply_handler(collections))
    channel.register(topics.SINK_FLUSH, lambda body: True)
