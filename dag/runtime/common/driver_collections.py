"""The engine's driver-side named collections (``engine.get_map``/``get_list``) and every map's event journal.

Pure Python (no pyspark): the driver's channel handlers (``dag.runtime.common.driver_topics``) serve them to tasks.

**Maps journal their changes.** ``engine.get_map(name)`` is a :class:`JournaledMap`, a ``dict`` whose every
put, update and remove (``m[k] = v``, ``del m[k]``, ``update``, ``pop``, ``popitem``, ``setdefault``,
``clear``, ``|=``) appends an :class:`~processors.io.event_journal.EventJournalMapEvent` to the map's
:class:`MapJournal`, from the map's creation on (Jet's event journal of an IMap). Reads are plain dict reads.

**The journal** is split into ``partition_count`` partitions (the engine's, 271 by default) by the default
partitioner of the key, so the events of one key stay in order. Each partition is bounded
(``capacity`` events, oldest dropped first) and numbers its events with consecutive *sequence numbers* from
0. A reader keeps one *offset* per partition (the sequence of the next event it wants) and asks for the events
from it; a reader that fell behind the oldest retained event gets what is left and a count of what it lost
(logged as a warning), and an offset ahead of the journal (e.g. saved before the map was re-created) restarts
at the journal's current end. Offsets are plain ints, so a source can save them in a snapshot.

**Bulk changes are indexed lazily.** A sink writing 124,000 entries and a ``clear()`` of as many journal them
as one pending batch each (the pairs as they are, no event tuple, no partition computed yet); the batches are
spread into their partitions, in order, when the journal is next read or asked for a sequence, before the next
single-entry change, or once pending events pass the journal's total capacity (so memory stays bounded as if
they had been indexed at once). A map nobody streams from, the common case, then costs its writers one list
append per bulk change on the driver instead of a partition hash and a tuple per entry.

>>> maps = DriverCollections(partition_count=4)
>>> m = maps.get("map", "prices"); m["a"] = 1; m["a"] = 2; del m["a"]
>>> journal = maps.journal("prices")
>>> p = journal.partition_of("a"); [e.type.value for e in journal.read(p, 0, 10)[0]]
['ADDED', 'UPDATED', 'REMOVED']
"""

from __future__ import annotations

import collections
import contextlib
import functools
import gc
import itertools
import logging
import threading
from typing import Any, Callable, Iterable, Iterator

from edges.partitioner import Partitioner
from processors.io.event_journal import EventJournalMapEvent, EventType

__all__ = ["DriverCollections", "JournaledMap", "DriverList", "MapJournal", "DEFAULT_JOURNAL_CAPACITY", "gc_paused"]

DEFAULT_JOURNAL_CAPACITY = 10_000
"""Events kept per journal partition before the oldest are dropped."""

_log = logging.getLogger("jetspark.journal")
_MISSING = object()
# A journalled event is kept as a plain tuple ``(key, new_value, old_value, type_name)`` with the type's *name*
# (a str), not the ``EventType`` member: the garbage collector untracks a tuple of untracked objects (strings,
# numbers, None), so a journal of millions of events of a ``str -> int`` map adds nothing to every full
# collection (with the enum member inside, a full journal made each one walk 2.7 million tuples, 0.3-0.8 s).
_ADDED, _UPDATED, _REMOVED = EventType.ADDED.value, EventType.UPDATED.value, EventType.REMOVED.value
_TYPES = {t.value: t for t in EventType}
_DEFAULT = Partitioner.default()


class MapJournal:
    """A bounded, per-partition event journal with sequence numbers (see the module docstring).

    Thread-safe: writers (the map) and readers (channel handlers) take the journal's lock.
    """

    def __init__(self, name: str, partition_count: int, capacity: int = DEFAULT_JOURNAL_CAPACITY):
        if partition_count < 1 or capacity < 1:
            raise ValueError(f"journal of map '{name}': partition_count ({partition_count}) and capacity "
                             f"({capacity}) must be >= 1")
        self.name = name
        self.partition_count = partition_count
        self.capacity = capacity
        self._partition = functools.partial(Partitioner.default().get_partition, partition_count=partition_count)
        self._events = [collections.deque(maxlen=capacity) for _ in range(partition_count)]
        self._next_seq = [0] * partition_count
        self._pending: list[tuple[list, str]] = []  # bulk changes not indexed yet: (pairs, type name), in order
        self._pending_count = 0
        self.lock = threading.RLock()

    def partition_of(self, key: Any) -> int:
        """The journal partition of ``key`` (the default partitioner)."""
        return self._partition(key)

    def append(self, event: EventJournalMapEvent) -> None:
        """Record one event in its key's partition (the oldest event goes if the partition is full)."""
        with self.lock:
            self.record(event.key, event.new_value, event.old_value, event.type.value)

    def record(self, key: Any, new_value: Any, old_value: Any, type_name: str) -> None:
        """:meth:`append` for a caller that holds :attr:`lock` (``type_name``: an ``EventType``'s value); the
        event is kept as a plain tuple and becomes an ``EventJournalMapEvent`` only when read (most events of a
        big map are never read)."""
        self._index_pending()
        p = self._partition(key)
        self._events[p].append((key, new_value, old_value, type_name))
        self._next_seq[p] += 1

    def record_all(self, raw_events: list) -> None:
        """:meth:`record` for many ``(key, new_value, old_value, type_name)`` tuples (caller holds :attr:`lock`),
        indexed lazily (see the module docstring)."""
        self._defer(raw_events, "")

    def record_pairs(self, pairs: list, type_name: str) -> None:
        """Journal ``(key, value)`` pairs, all of one type (caller holds :attr:`lock`): ``ADDED`` pairs carry the
        new value, ``REMOVED`` pairs the old one. ``pairs`` is kept as it is until indexed: the caller gives it up."""
        if type_name not in (_ADDED, _REMOVED):
            raise ValueError(f"record_pairs takes ADDED or REMOVED pairs, not {type_name!r}")
        self._defer(pairs, type_name)

    def _defer(self, batch: list, type_name: str) -> None:
        if batch:
            self._pending.append((batch, type_name))
            self._pending_count += len(batch)
            if self._pending_count > self.partition_count * self.capacity:
                self._index_pending()

    def _index_pending(self) -> None:
        """Spread the pending bulk changes into their partitions, in order (caller holds :attr:`lock`); nothing
        when none are pending."""
        if not self._pending:
            return
        pending, self._pending, self._pending_count = self._pending, [], 0
        events, sequences, count = self._events, self._next_seq, self.partition_count
        with gc_paused():
            for batch, type_name in pending:
                partitions = _DEFAULT.get_partitions([item[0] for item in batch], count)
                if type_name == _ADDED:
                    batch = [(key, value, None, _ADDED) for key, value in batch]
                elif type_name == _REMOVED:
                    batch = [(key, None, old, _REMOVED) for key, old in batch]
                for p, raw in zip(partitions, batch):
                    events[p].append(raw)
                    sequences[p] += 1

    def oldest_sequence(self, partition: int) -> int:
        """The sequence of the oldest event still held in ``partition``."""
        with self.lock:
            self._index_pending()
            return self._next_seq[partition] - len(self._events[partition])

    def next_sequence(self, partition: int) -> int:
        """The sequence the next event of ``partition`` will get (the offset of "from now on")."""
        with self.lock:
            self._index_pending()
            return self._next_seq[partition]

    def read(self, partition: int, offset: int, max_count: int) -> tuple[list, int, int]:
        """Up to ``max_count`` events of ``partition`` from sequence ``offset`` on.

        Returns ``(events, next_offset, lost)``: ``lost`` counts the events before the oldest retained one
        that the reader missed (it then reads from the oldest).
        """
        with self.lock:
            self._index_pending()
            events, end = self._events[partition], self._next_seq[partition]
            oldest = end - len(events)
            lost = 0
            if offset > end:  # offset from an older incarnation of the journal: continue from now on
                offset = end
            elif offset < oldest:
                lost, offset = oldest - offset, oldest
            start = offset - oldest
            taken = [EventJournalMapEvent(key, new, old, _TYPES[type_name])
                     for key, new, old, type_name in itertools.islice(events, start, start + max(0, max_count))]
        if lost:
            _log.warning("event journal of map '%s', partition %d: %d event(s) were dropped before they were "
                         "read (the journal keeps %d events per partition); reading on from sequence %d",
                         self.name, partition, lost, self.capacity, offset)
        return taken, offset + len(taken), lost


class JournaledMap(dict):
    """A ``dict`` that records every put, update and remove in its :class:`MapJournal` (``.journal``).

    Pickles and copies as a plain ``dict`` (the journal stays on the driver).

    >>> m = JournaledMap(MapJournal("m", 1)); m.update(a=1); m.pop("a")
    1
    >>> [e.type.value for e in m.journal.read(0, 0, 10)[0]]
    ['ADDED', 'REMOVED']
    """

    def __init__(self, journal: MapJournal):
        super().__init__()
        self.journal = journal

    @property
    def name(self) -> str:
        """The map's name (``engine.get_map(name)``)."""
        return self.journal.name

    def _put(self, key: Any, value: Any) -> None:
        """Put under the journal's lock (held by the caller)."""
        old = dict.get(self, key, _MISSING)
        dict.__setitem__(self, key, value)
        if old is _MISSING:
            self.journal.record(key, value, None, _ADDED)
        else:
            self.journal.record(key, value, old, _UPDATED)

    def _removed(self, key: Any, old: Any) -> None:
        self.journal.record(key, None, old, _REMOVED)

    def __setitem__(self, key: Any, value: Any) -> None:
        with self.journal.lock:
            self._put(key, value)

    def __delitem__(self, key: Any) -> None:
        with self.journal.lock:
            old = dict.pop(self, key)
            self._removed(key, old)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        self.put_entries(itertools.chain(_pairs(other), kwargs.items()))

    def put_entries(self, entries: Iterable[Any], check: Callable[[Any], None] | None = None) -> None:
        """Put every ``(key, value)`` of ``entries`` in order, journalled in bulk (a driver-side sink writes
        through this). ``check(item)`` is called for an item that is not a 2-tuple, before anything of the
        batch is put, and must raise (without it such an item fails as ``dict.update`` fails)."""
        if check is not None:
            if type(entries) is not list:
                entries = list(entries)
            for item in entries:
                if type(item) is not tuple or len(item) != 2:
                    check(item)
        with self.journal.lock, gc_paused():
            added = self._put_all_new(list(entries)) if not self and type(entries) is list else None
            if added is not None:
                self.journal.record_pairs(added, _ADDED)
                return
            get, put, raw = dict.get, dict.__setitem__, []
            for key, value in entries:
                old = get(self, key, _MISSING)
                put(self, key, value)
                raw.append((key, value, None, _ADDED) if old is _MISSING else (key, value, old, _UPDATED))
            self.journal.record_all(raw)

    def _put_all_new(self, entries: list) -> list | None:
        """Put ``entries`` (a list of its own) into this *empty* map with one ``dict.update`` and return it, every
        entry ADDED (a sink writing into a cleared map); ``None``, the map left empty, when a key repeats in
        ``entries`` (its later puts are updates: the caller's per-entry loop journals them)."""
        try:
            dict.update(self, entries)
        except BaseException:
            dict.clear(self)
            raise
        if len(self) != len(entries):
            dict.clear(self)
            return None
        return entries

    def __ior__(self, other: Any) -> "JournaledMap":
        self.update(other)
        return self

    def setdefault(self, key: Any, default: Any = None) -> Any:
        with self.journal.lock:
            if key not in self:
                self._put(key, default)
            return dict.__getitem__(self, key)

    def pop(self, key: Any, *default: Any) -> Any:
        with self.journal.lock:
            if key not in self:
                return dict.pop(self, key, *default)
            old = dict.pop(self, key)
            self._removed(key, old)
            return old

    def popitem(self) -> tuple:
        with self.journal.lock:
            key, old = dict.popitem(self)
            self._removed(key, old)
            return key, old

    def clear(self) -> None:
        with self.journal.lock, gc_paused():
            removed = list(dict.items(self))
            dict.clear(self)
            self.journal.record_pairs(removed, _REMOVED)

    def copy(self) -> dict:
        return dict(self)

    def __reduce__(self):
        return (dict, (dict(self),))


class DriverList(list):
    """A driver-side list that knows its ``name`` (so ``Sources.list(engine.get_list("x"))`` can name it, as
    Jet's ``Sources.list(IList)``). Pickles and copies as a plain ``list``.

    >>> DriverList("out").name
    'out'
    """

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def __reduce__(self):
        return (list, (list(self),))


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a bulk operation makes many objects that live on: journalling many
    entries, or unpickling a job's results on the driver. Objects that hold containers (the TF-IDF index's
    posting lists) are tracked by the collector, and every 700 new ones start a collection, which every so often
    walks all the driver's objects: clearing and refilling a 123k-entry index took 3x the CPU, and loading it
    from the tasks 0.6-1.0 s in ~1,600 collections. Nothing is freed later than it would be: these objects are
    not garbage."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _pairs(source: Any) -> Iterable[tuple]:
    """The ``(key, value)`` pairs of a mapping or of an iterable of pairs (as ``dict.update`` takes them)."""
    if hasattr(source, "keys"):
        return ((key, source[key]) for key in source.keys())
    return source


class DriverCollections:
    """The engine's named maps (:class:`JournaledMap`) and lists, created empty on first use; also its
    replicated maps (kind ``"replicated"``: journaled maps of their own namespace, which ``map_using_replicated_map``
    copies into every processor), observables and reliable topics (``dag.runtime.common.observables``; kinds
    ``"observable"`` and ``"topic"``)."""

    def __init__(self, partition_count: int = 271, journal_capacity: int = DEFAULT_JOURNAL_CAPACITY):
        self._partition_count = partition_count
        self._journal_capacity = journal_capacity
        self._maps: dict[str, JournaledMap] = {}
        self._replicated: dict[str, JournaledMap] = {}
        self._lists: dict[str, DriverList] = {}
        self._others: dict[str, dict[str, Any]] = {"observable": {}, "topic": {}}
        self._lock = threading.Lock()

    def get(self, kind: str, name: str) -> Any:
        """The map (``kind == "map"``), list (``"list"``), replicated map, observable or reliable topic named
        ``name``."""
        with self._lock:
            if kind in self._others:
                return self._other(kind, name)
            if kind in ("map", "replicated"):
                maps = self._maps if kind == "map" else self._replicated
                if name not in maps:
                    maps[name] = JournaledMap(MapJournal(name, self._partition_count, self._journal_capacity))
                return maps[name]
            if name not in self._lists:
                self._lists[name] = DriverList(name)
            return self._lists[name]

    def _other(self, kind: str, name: str) -> Any:
        from dag.runtime.common.observables import Observable, ReliableTopic

        known = self._others[kind]
        if name not in known:
            known[name] = Observable(name, on_destroy=self._forget_observable) if kind == "observable" else \
                ReliableTopic(name)
        return known[name]

    def _forget_observable(self, observable: Any) -> None:
        with self._lock:
            known = self._others["observable"]
            if known.get(observable.name) is observable:
                del known[observable.name]

    def exists(self, kind: str, name: str) -> bool:
        """Whether the observable or reliable topic ``name`` exists (``kind``: ``"observable"``/``"topic"``)."""
        with self._lock:
            return name in self._others[kind]

    def observables(self) -> list:
        """Every observable, in creation order."""
        with self._lock:
            return list(self._others["observable"].values())

    def journal(self, name: str, kind: str = "map") -> MapJournal:
        """The event journal of map ``name`` (of replicated map ``name`` with ``kind="replicated"``; the map is
        created if needed)."""
        return self.get(kind, name).journal
