"""Live driver-side collection processors (processors/io/collections.py live_supplier) over a real channel."""

from __future__ import annotations

import contextlib

import pytest

from dag.errors import DagValidationError
from dag.runtime.common.channel import ChannelClient, DriverChannel, new_secret
from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.common.driver_topics import register_collection_topics
from processors import Context, Inbox, Outbox, read_list_p, read_map_p, write_list_p, write_map_p


@contextlib.contextmanager
def _driver():
    store, secret = DriverCollections(partition_count=3), new_secret()
    with DriverChannel(secret) as channel:
        register_collection_topics(channel, store)
        with ChannelClient(channel.address, secret) as client:
            yield store, client


def _live(marker, client, g=0, total=1, capacity=100):
    (proc,) = marker.live_supplier().get([0])(0).get(1)
    outbox = Outbox([capacity])
    proc.init(outbox, Context(vertex_name="v", global_processor_index=g, local_processor_index=g,
                              total_parallelism=total, local_parallelism=total, driver=client))
    return proc, outbox


def _drain_source(proc, outbox):
    out = []
    for _ in range(1000):
        outbox.reset()
        done = proc.complete()
        out += outbox.drain(0)
        if done:
            return out
    raise AssertionError("the source did not complete")


def test_live_read_list_when_three_processors_then_contiguous_slices_cover_list():
    with _driver() as (store, client):
        store.get("list", "in").extend(range(10))
        parts = [_drain_source(*_live(read_list_p("in"), client, g, 3, capacity=2)) for g in range(3)]
    assert parts == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]


def test_live_read_map_when_two_processors_then_every_entry_once():
    with _driver() as (store, client):
        store.get("map", "in").update({f"k{i}": i for i in range(7)})
        entries = [e for g in range(2) for e in _drain_source(*_live(read_map_p("in"), client, g, 2))]
    assert sorted(entries) == sorted((f"k{i}", i) for i in range(7))


def test_live_write_list_when_batches_then_visible_after_complete_in_order():
    with _driver() as (store, client):
        proc, outbox = _live(write_list_p("out"), client)
        assert write_list_p("out").live_supplier().preferred_local_parallelism() == 1
        for batch in ([1, 2], [], [3]):
            proc.process(0, Inbox(batch))
        assert proc.complete() is True
        assert store.get("list", "out") == [1, 2, 3]


def test_live_write_map_when_entries_then_put_and_journaled():
    with _driver() as (store, client):
        proc, _ = _live(write_map_p("counts"), client)
        proc.process(0, Inbox([("a", 1), ("b", 2), ("a", 3)]))
        assert proc.complete() is True
        assert store.get("map", "counts") == {"a": 3, "b": 2}
        journal = store.journal("counts")
        assert sum(journal.next_sequence(p) for p in range(3)) == 3


def test_live_write_map_when_not_an_entry_then_error_names_vertex_and_item():
    with _driver() as (_store, client):
        proc, _ = _live(write_map_p("counts"), client)
        with pytest.raises(DagValidationError, match=r"vertex 'v' \(write_map_p\('counts'\)\) received 'oops'"):
            proc.process(0, Inbox(["oops"]))


def test_live_collection_processors_when_no_driver_channel_then_clear_error():
    (proc,) = write_list_p("out").live_supplier().get([0])(0).get(1)
    with pytest.raises(DagValidationError, match=r"write_list_p\('out'\).*PIPELINED Engine job"):
        proc.init(Outbox([1]), Context(vertex_name="v"))
