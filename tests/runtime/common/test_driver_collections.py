"""Driver-side collections (dag/runtime/common/driver_collections.py): every map's bounded per-partition event journal."""

from __future__ import annotations

import collections
import copy
import logging
import pickle

from dag.runtime.common.driver_collections import DriverCollections, JournaledMap, MapJournal
from edges.partitioner import Partitioner
from processors.io.event_journal import EventJournalMapEvent, EventType


def _all_events(journal: MapJournal) -> list:
    out = []
    for p in range(journal.partition_count):
        out.extend(journal.read(p, 0, 10**6)[0])
    return out


def test_map_when_put_update_remove_then_journal_has_events_with_old_and_new_values():
    m = JournaledMap(MapJournal("m", 1))
    m["k"] = 1
    m["k"] = 2
    del m["k"]
    assert _all_events(m.journal) == [
        EventJournalMapEvent("k", 1, None, EventType.ADDED),
        EventJournalMapEvent("k", 2, 1, EventType.UPDATED),
        EventJournalMapEvent("k", None, 2, EventType.REMOVED),
    ]


def test_map_when_every_mutating_method_used_then_each_change_journaled():
    m = JournaledMap(MapJournal("m", 1))
    m.update({"a": 1}, b=2)
    m.update([("c", 3)])
    m |= {"a": 10}
    assert m.setdefault("d", 4) == 4 and m.setdefault("d", 5) == 4
    assert m.pop("b") == 2 and m.pop("missing", None) is None
    m.popitem()
    m.clear()
    types = [(e.key, e.type.value) for e in _all_events(m.journal)]
    assert types[:5] == [("a", "ADDED"), ("b", "ADDED"), ("c", "ADDED"), ("a", "UPDATED"), ("d", "ADDED")]
    assert types[5] == ("b", "REMOVED")
    assert sorted(types[6:]) == [("a", "REMOVED"), ("c", "REMOVED"), ("d", "REMOVED")]
    assert m == {}


def test_map_when_pickled_or_copied_then_plain_dict_without_journal():
    m = JournaledMap(MapJournal("m", 2))
    m["a"] = 1
    for clone in (pickle.loads(pickle.dumps(m)), copy.copy(m), m.copy()):
        assert type(clone) is dict and clone == {"a": 1}


def test_journal_when_keys_spread_then_partition_is_default_partitioner_and_key_order_kept():
    journal = MapJournal("m", 7)
    m = JournaledMap(journal)
    for i in range(50):
        m[i % 10] = i
    for key in range(10):
        p = Partitioner.default().get_partition(key, 7)
        assert journal.partition_of(key) == p
        values = [e.new_value for e in journal.read(p, 0, 1000)[0] if e.key == key]
        assert values == list(range(key, 50, 10))


def test_journal_when_read_from_offset_then_next_offset_continues_without_gaps():
    journal = MapJournal("m", 1)
    m = JournaledMap(journal)
    for i in range(10):
        m[i] = i
    first, offset, lost = journal.read(0, 0, 4)
    second, offset2, _ = journal.read(0, offset, 100)
    assert [e.key for e in first + second] == list(range(10))
    assert (offset, offset2, lost) == (4, 10, 0)
    assert journal.read(0, offset2, 100) == ([], 10, 0)


def test_journal_when_capacity_exceeded_then_oldest_dropped_and_loss_logged(caplog):
    journal = MapJournal("m", 1, capacity=5)
    m = JournaledMap(journal)
    for i in range(8):
        m[i] = i
    assert (journal.oldest_sequence(0), journal.next_sequence(0)) == (3, 8)
    with caplog.at_level(logging.WARNING, logger="jetspark.journal"):
        events, offset, lost = journal.read(0, 0, 100)
    assert [e.key for e in events] == [3, 4, 5, 6, 7] and (offset, lost) == (8, 3)
    assert "3 event(s) were dropped" in caplog.text and "map 'm'" in caplog.text


def test_journal_when_offset_ahead_of_journal_then_reads_new_events_from_current_end():
    journal = MapJournal("m", 1)
    m = JournaledMap(journal)
    assert journal.read(0, 42, 10) == ([], 0, 0)
    m["x"] = 1
    events, offset, lost = journal.read(0, 0, 10)
    assert [e.key for e in events] == ["x"] and (offset, lost) == (1, 0)


def test_collections_when_same_name_then_same_object_and_map_journals_from_creation():
    store = DriverCollections(partition_count=3)
    m = store.get("map", "prices")
    m["a"] = 1
    assert store.get("map", "prices") is m and store.journal("prices") is m.journal
    assert store.journal("prices").partition_count == 3
    assert store.get("list", "out") is store.get("list", "out") == []


def test_map_when_cleared_then_one_removed_event_per_entry_in_map_order():
    m = JournaledMap(MapJournal("m", 3))
    m.update((f"k{i}", i) for i in range(50))
    m.clear()
    removed = [e for e in _all_events(m.journal) if e.type is EventType.REMOVED]
    assert sorted((e.key, e.old_value) for e in removed) == sorted((f"k{i}", i) for i in range(50))
    for p in range(3):  # within a partition the removals follow the map's order
        keys = [e.key for e in m.journal.read(p, 0, 10**6)[0] if e.type is EventType.REMOVED]
        assert keys == sorted(keys, key=lambda k: int(k[1:]))
    assert m == {} and all(m.journal.partition_of(e.key) == p for p in range(3) for e in m.journal.read(p, 0, 99)[0])


def test_map_when_put_entries_with_a_bad_item_then_check_raises_before_anything_is_put():
    m = JournaledMap(MapJournal("m", 2))

    def check(item):
        raise ValueError(f"bad {item!r}")

    try:
        m.put_entries([("a", 1), ["b", 2]], check)
    except ValueError as exc:
        assert "bad ['b', 2]" in str(exc)
    else:
        raise AssertionError("put_entries accepted a list as an entry")
    assert m == {} and _all_events(m.journal) == []
    m.put_entries([("a", 1), ("a", 2)], check)
    assert m == {"a": 2} and [e.type.value for e in _all_events(m.journal)] == ["ADDED", "UPDATED"]


def test_default_partitioner_when_bulk_then_same_partitions_as_one_by_one():
    keys = ["the", "", "naïve", 7, (1, "a"), 2.5, None, b"x", "\ud800"]
    default = Partitioner.default()
    assert default.get_partitions(keys, 271) == [default.get_partition(k, 271) for k in keys]


def test_hash_code_partitioner_when_bulk_then_same_partitions_as_one_by_one():
    keys = ["the", "", 7, -3, (1, "a"), 2.5, None, b"x"]
    hash_code = Partitioner.HASH_CODE
    assert hash_code.get_partitions(keys, 271) == [hash_code.get_partition(k, 271) for k in keys]


def test_journal_when_map_of_strings_to_ints_changes_then_collector_stops_tracking_its_events():
    # a journal holds up to partition_count * capacity events: if each stayed tracked, every full collection of
    # the driver would walk them all (2.7 million for the default journal)
    import gc

    m = JournaledMap(MapJournal("m", 4))
    m.update({f"w{i}": i for i in range(1000)})
    m["w1"] = -1
    m.clear()
    m.journal.next_sequence(0)  # indexes the pending bulk changes
    gc.collect()
    tracked = [ev for q in m.journal._events for ev in q if gc.is_tracked(ev)]  # noqa: SLF001
    assert sum(map(len, m.journal._events)) == 2001 and tracked == []  # noqa: SLF001
    assert {e.type for e in _all_events(m.journal)} == set(EventType)


def test_map_when_empty_and_batch_repeats_a_key_then_later_put_journaled_as_update():
    m = JournaledMap(MapJournal("m", 1))
    m.put_entries([("a", 1), ("b", 2), ("a", 3)])
    assert m == {"a": 3, "b": 2}
    assert _all_events(m.journal) == [
        EventJournalMapEvent("a", 1, None, EventType.ADDED),
        EventJournalMapEvent("b", 2, None, EventType.ADDED),
        EventJournalMapEvent("a", 3, 1, EventType.UPDATED),
    ]


def test_map_when_empty_and_batch_has_a_bad_item_without_check_then_fails_like_dict_update_and_stays_empty():
    m = JournaledMap(MapJournal("m", 1))
    try:
        m.put_entries([("a", 1), ("b", 2, 3)])
    except ValueError as exc:
        assert "length 3" in str(exc)
    else:
        raise AssertionError("a 3-tuple was put")
    assert m == {} and _all_events(m.journal) == []


def test_journal_when_bulk_and_single_changes_mix_then_events_keep_their_order_and_sequences():
    m = JournaledMap(MapJournal("m", 1))
    m.put_entries([("a", 1), ("b", 2)])       # bulk into the empty map: pending, not indexed yet
    assert m.journal._events[0] == collections.deque() and m.journal._pending  # noqa: SLF001
    m["a"] = 3                                # a single change indexes what is pending first
    m.clear()                                 # bulk again
    m.put_entries([("c", 4)])
    assert m.journal.next_sequence(0) == 6
    assert _all_events(m.journal) == [
        EventJournalMapEvent("a", 1, None, EventType.ADDED),
        EventJournalMapEvent("b", 2, None, EventType.ADDED),
        EventJournalMapEvent("a", 3, 1, EventType.UPDATED),
        EventJournalMapEvent("a", None, 3, EventType.REMOVED),
        EventJournalMapEvent("b", None, 2, EventType.REMOVED),
        EventJournalMapEvent("c", 4, None, EventType.ADDED),
    ]


def test_journal_when_bulk_changes_nobody_reads_pass_capacity_then_indexed_and_trimmed(caplog):
    m = JournaledMap(MapJournal("m", 1, capacity=5))
    for round_ in range(4):
        m.clear()
        m.put_entries([(f"k{i}", round_) for i in range(4)])
        assert m.journal._pending_count <= 5 + 4  # noqa: SLF001  (bounded like the indexed journal)
    assert len(m.journal._events[0]) <= 5  # noqa: SLF001
    with caplog.at_level(logging.WARNING, logger="jetspark.journal"):
        events, offset, lost = m.journal.read(0, 0, 100)
    assert (len(events), offset, lost) == (5, 4 + 3 * 8, 4 + 3 * 8 - 5)
    assert [(e.key, e.new_value) for e in events[-4:]] == [(f"k{i}", 3) for i in range(4)]
