"""The driver's collection topics (dag/runtime/common/driver_topics.py), served over a real DriverChannel in-process."""

from __future__ import annotations

import contextlib
import threading

import pytest

from dag.runtime.common.channel import ChannelClient, DriverChannel, new_secret
from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.common.driver_topics import register_collection_topics, slice_bounds
from processors.io import driver_protocol as topics
from processors.io.event_journal import EventType, JournalInitialPosition


@contextlib.contextmanager
def _served(store: DriverCollections):
    secret = new_secret()
    with DriverChannel(secret) as channel:
        register_collection_topics(channel, store)
        with ChannelClient(channel.address, secret) as client:
            yield client


def test_slice_bounds_when_uneven_then_contiguous_cover_with_first_slices_longer():
    for length in range(0, 12):
        for count in range(1, 5):
            bounds = [slice_bounds(length, g, count) for g in range(count)]
            assert bounds[0][0] == 0 and bounds[-1][1] == length
            assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
            sizes = [e - s for s, e in bounds]
            assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


def test_journal_start_when_two_readers_then_partitions_split_by_index_and_offsets_by_position():
    store = DriverCollections(partition_count=5)
    m = store.get("map", "m")
    for i in range(20):
        m[i] = i
    with _served(store) as client:
        shares = [client.request(topics.JOURNAL_START, {"map": "m", "index": g, "total": 2,
                                                        "initial": JournalInitialPosition.START_FROM_OLDEST.value})
                  for g in range(2)]
        current = client.request(topics.JOURNAL_START, {"map": "m", "index": 0, "total": 1,
                                                        "initial": JournalInitialPosition.START_FROM_CURRENT.value})
    assert shares[0]["partitions"] == [0, 2, 4] and shares[1]["partitions"] == [1, 3]
    assert all(o == 0 for share in shares for o in share["offsets"])
    journal = store.journal("m")
    assert current["offsets"] == [journal.next_sequence(p) for p in range(5)]
    assert sum(current["offsets"]) == 20


def test_journal_read_when_events_then_per_partition_lists_and_advanced_offsets():
    store = DriverCollections(partition_count=3)
    m = store.get("map", "m")
    for i in range(30):
        m[i] = i
    del m[0]
    with _served(store) as client:
        start = client.request(topics.JOURNAL_START, {"map": "m", "index": 0, "total": 1, "initial": "START_FROM_OLDEST"})
        reply = client.request(topics.JOURNAL_READ, {"map": "m", "partitions": start["partitions"],
                                                      "offsets": start["offsets"], "max": 1000})
        again = client.request(topics.JOURNAL_READ, {"map": "m", "partitions": start["partitions"],
                                                      "offsets": reply["offsets"], "max": 1000})
    events = [e for part in reply["events"] for e in part]
    assert sorted(e.key for e in events if e.type is EventType.ADDED) == list(range(30))
    assert [e.old_value for e in events if e.type is EventType.REMOVED] == [0]
    assert reply["lost"] == 0 and sum(reply["offsets"]) == 31
    assert again["events"] == [[], [], []] and again["offsets"] == reply["offsets"]


def test_collection_slice_when_list_and_map_then_slices_cover_collection_once():
    store = DriverCollections(partition_count=2)
    store.get("list", "l").extend(range(7))
    store.get("map", "m").update({f"k{i}": i for i in range(5)})
    with _served(store) as client:
        parts = [client.request(topics.COLLECTION_SLICE, {"kind": "list", "name": "l", "index": g, "count": 3})
                 for g in range(3)]
        entries = [client.request(topics.COLLECTION_SLICE, {"kind": "map", "name": "m", "index": g, "count": 2})
                   for g in range(2)]
    assert parts == [[0, 1, 2], [3, 4], [5, 6]]
    assert sorted(e for part in entries for e in part) == sorted((f"k{i}", i) for i in range(5))


def test_sinks_when_sent_then_visible_after_flush_and_map_journals_the_puts():
    store = DriverCollections(partition_count=2)
    with _served(store) as client:
        client.send(topics.SINK_LIST, {"name": "out", "items": ["a", "b"]})
        client.send(topics.SINK_MAP, {"name": "counts", "items": [("x", 1), ("y", 2), ("x", 3)]})
        assert client.request(topics.SINK_FLUSH, {}) is True
    assert store.get("list", "out") == ["a", "b"]
    assert store.get("map", "counts") == {"x": 3, "y": 2}
    journal = store.journal("counts")
    assert sum(journal.next_sequence(p) for p in range(2)) == 3


def test_sinks_when_several_clients_concurrently_then_nothing_lost():
    store = DriverCollections(partition_count=2)
    secret = new_secret()
    with DriverChannel(secret) as channel:
        register_collection_topics(channel, store)

        def writer(w: int) -> None:
            with ChannelClient(channel.address, secret) as client:
                for i in range(50):
                    client.send(topics.SINK_LIST, {"name": "out", "items": [(w, i)]})
                client.request(topics.SINK_FLUSH, {})

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert not any(t.is_alive() for t in threads)
    out = store.get("list", "out")
    assert sorted(out) == sorted((w, i) for w in range(4) for i in range(50))
    for w in range(4):
        assert [i for ww, i in out if ww == w] == list(range(50))


def test_journal_read_when_unknown_initial_position_then_request_fails_with_driver_error():
    with _served(DriverCollections(partition_count=2)) as client:
        with pytest.raises(RuntimeError, match="could not handle 'journal.start'"):
            client.request(topics.JOURNAL_START, {"map": "m", "index": 0, "total": 1, "initial": "NOWHERE"})
