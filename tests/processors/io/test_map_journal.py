"""stream_map_p (processors/io/map_journal.py) over a real DriverChannel serving DriverCollections, in-process."""

from __future__ import annotations

import contextlib
import logging

import pytest

from dag.errors import DagValidationError
from dag.runtime.common.channel import ChannelClient, DriverChannel, new_secret
from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.common.driver_topics import register_collection_topics
from processors import (
    Context, EventJournalMapEvent, EventType, JournalInitialPosition, Outbox, stream_map_p,
)
from processors.io.text_streams import is_stream_source

OLDEST, CURRENT = JournalInitialPosition.START_FROM_OLDEST, JournalInitialPosition.START_FROM_CURRENT


@contextlib.contextmanager
def _driver(partition_count=4, capacity=10_000):
    store = DriverCollections(partition_count=partition_count, journal_capacity=capacity)
    secret = new_secret()
    with DriverChannel(secret) as channel:
        register_collection_topics(channel, store)
        with ChannelClient(channel.address, secret) as client:
            yield store, client


def _processors(supplier, client, total=1, capacity=10_000):
    out = []
    for g in range(total):
        (proc,) = supplier.get([0])(0).get(1)
        outbox = Outbox([capacity], snapshot_capacity=2)
        proc.init(outbox, Context(vertex_name="journal", total_parallelism=total, local_parallelism=total,
                                  global_processor_index=g, local_processor_index=g, driver=client))
        out.append((proc, outbox))
    return out


def _poll(proc, outbox, calls=3):
    items = []
    for _ in range(calls):
        outbox.reset()
        assert proc.complete() is False  # a stream source never completes
        items += outbox.drain(0)
    return items


def test_stream_map_when_oldest_then_sees_puts_before_start_and_updates_after_as_entries():
    with _driver() as (store, client):
        prices = store.get("map", "prices")
        prices.update({"a": 1, "b": 2})
        [(proc, outbox)] = _processors(stream_map_p("prices"), client)
        assert not proc.is_cooperative()
        first = _poll(proc, outbox)
        prices["a"] = 10
        del prices["b"]
        prices["c"] = 3
        later = _poll(proc, outbox)
    assert sorted(first) == [("a", 1), ("b", 2)]
    assert sorted(later) == [("a", 10), ("c", 3)]  # the remove is not a put: filtered by default


def test_stream_map_when_current_then_skips_what_happened_before_start():
    with _driver() as (store, client):
        m = store.get("map", "m")
        m.update({i: i for i in range(10)})
        [(proc, outbox)] = _processors(stream_map_p("m", CURRENT), client)
        assert _poll(proc, outbox) == []
        m[99] = "new"
        assert _poll(proc, outbox) == [(99, "new")]


def test_stream_map_when_predicate_and_projection_then_events_with_old_and_new_values():
    with _driver() as (store, client):
        m = store.get("map", "m")
        src = stream_map_p("m", OLDEST, predicate_fn=lambda e: True, projection_fn=lambda e: e)
        [(proc, outbox)] = _processors(src, client)
        m["k"] = 1
        m["k"] = 2
        m.pop("k")
        events = _poll(proc, outbox)
    assert events == [EventJournalMapEvent("k", 1, None, EventType.ADDED),
                      EventJournalMapEvent("k", 2, 1, EventType.UPDATED),
                      EventJournalMapEvent("k", None, 2, EventType.REMOVED)]


def test_stream_map_when_projection_returns_none_then_item_dropped():
    with _driver() as (store, client):
        m = store.get("map", "m")
        m.update({i: i for i in range(6)})
        src = stream_map_p("m", projection_fn=lambda e: e.new_value if e.new_value % 2 else None)
        [(proc, outbox)] = _processors(src, client)
        assert sorted(_poll(proc, outbox)) == [1, 3, 5]


def test_stream_map_when_three_processors_then_partitions_shared_and_every_event_read_once():
    with _driver(partition_count=7) as (store, client):
        m = store.get("map", "m")
        procs = _processors(stream_map_p("m"), client, total=3)
        assert sorted(p for proc, _ in procs for p in proc.partitions) == list(range(7))
        for i in range(300):
            m[i % 50] = i
        items = [item for proc, outbox in procs for item in _poll(proc, outbox, calls=4)]
    assert sorted(items) == sorted((i % 50, i) for i in range(300))
    for key in range(50):  # one key, one partition: its events stay in order
        assert [v for k, v in items if k == key] == list(range(key, 300, 50))


def test_stream_map_when_outbox_small_then_nothing_lost_and_order_kept():
    with _driver(partition_count=1) as (store, client):
        m = store.get("map", "m")
        for i in range(100):
            m[i] = i
        [(proc, outbox)] = _processors(stream_map_p("m"), client, capacity=3)
        items = _poll(proc, outbox, calls=200)
    assert items == [(i, i) for i in range(100)]


def test_stream_map_when_reader_falls_behind_capacity_then_reads_rest_and_driver_logs_loss(caplog):
    with _driver(partition_count=2, capacity=5) as (store, client):
        m = store.get("map", "m")
        [(proc, outbox)] = _processors(stream_map_p("m"), client)
        with caplog.at_level(logging.WARNING, logger="jetspark.journal"):
            for i in range(30):
                m[i] = i
            items = _poll(proc, outbox)
    assert len(items) == 10  # 5 per partition survive
    assert "were dropped before they were read" in caplog.text


def test_stream_map_when_no_driver_channel_then_error_says_engine_job_needed():
    (proc,) = stream_map_p("m").get([0])(0).get(1)
    with pytest.raises(DagValidationError, match="vertex 'journal'.*stream_map_p\\('m'\\).*PIPELINED Engine job"):
        proc.init(Outbox([10]), Context(vertex_name="journal"))


def test_stream_map_when_bad_arguments_then_rejected_eagerly():
    with pytest.raises(DagValidationError, match="initial_position must be a JournalInitialPosition"):
        stream_map_p("m", "SOMEWHERE")
    with pytest.raises(DagValidationError, match="predicate_fn must be callable"):
        stream_map_p("m", predicate_fn=3)
    with pytest.raises(DagValidationError, match="non-empty str"):
        stream_map_p("")
    assert is_stream_source(stream_map_p("m", "START_FROM_CURRENT"))


def _snapshot(proc, outbox):
    """Call save_to_snapshot() until True, draining the 2-slot snapshot bucket in between."""
    entries = []
    for _ in range(100):
        outbox.reset()
        done = proc.save_to_snapshot()
        entries += outbox.drain_snapshot()
        if done:
            return entries
    raise AssertionError("save_to_snapshot never finished")


def test_stream_map_when_snapshot_restored_with_other_parallelism_then_resumes_at_saved_offsets():
    from processors import Inbox

    with _driver(partition_count=5) as (store, client):
        m = store.get("map", "m")
        for i in range(40):
            m[i] = i
        old = _processors(stream_map_p("m"), client, total=2)
        before = [item for proc, outbox in old for item in _poll(proc, outbox)]
        entries = [e for proc, outbox in old for e in _snapshot(proc, outbox)]
        assert len(entries) == 5  # one per partition
        for i in range(40, 60):
            m[i] = i
        new = _processors(stream_map_p("m"), client, total=3)
        for proc, _outbox in new:
            proc.restore_from_snapshot(Inbox(list(entries)))
            assert proc.finish_snapshot_restore() is True
        after = [item for proc, outbox in new for item in _poll(proc, outbox)]
    assert sorted(before) == [(i, i) for i in range(40)]
    assert sorted(after) == [(i, i) for i in range(40, 60)]  # nothing repeated, nothing lost


def test_stream_map_when_snapshot_with_watermarks_then_restored_watermark_holds():
    from processors import Inbox, Watermark, limiting_lag, no_throttling, wm_gen_params

    params = wm_gen_params(lambda item: item[1], limiting_lag(0), no_throttling(), idle_timeout_ms=0)
    with _driver(partition_count=1) as (store, client):
        m = store.get("map", "m")
        m["a"] = 100
        [(proc, outbox)] = _processors(stream_map_p("m", wm_gen_params=params), client)
        assert _poll(proc, outbox) == [Watermark(100), ("a", 100)]
        entries = _snapshot(proc, outbox)
        m["b"] = 50  # late after the restore too: no watermark below 100 again
        m["c"] = 120
        [(fresh, fresh_outbox)] = _processors(stream_map_p("m", wm_gen_params=params), client)
        fresh.restore_from_snapshot(Inbox(entries))
        fresh.finish_snapshot_restore()
        assert _poll(fresh, fresh_outbox) == [("b", 50), Watermark(120), ("c", 120)]


def test_stream_map_when_partitions_go_idle_then_one_watermark_for_all_and_idle_message_once():
    """V100-like: 2 journal partitions, limiting_lag(0), value = timestamp; a manual clock drives the idle rule."""
    from processors import Watermark, limiting_lag, no_throttling, wm_gen_params
    from processors.api.clock import ManualClock, use_clock
    from processors.windowing.event_time import IDLE_MESSAGE

    clock = ManualClock()
    with use_clock(clock), _driver(partition_count=2) as (store, client):
        params = wm_gen_params(lambda item: item, limiting_lag(0), no_throttling(), idle_timeout_ms=2000)
        m = store.get("map", "m")
        journal = store.journal("m")
        keys = {}
        for k in range(100):  # one key per journal partition
            keys.setdefault(journal.partition_of(k), k)
        [(proc, outbox)] = _processors(stream_map_p("m", wm_gen_params=params, projection_fn=lambda e: e.new_value),
                                       client)
        m[keys[0]] = 10
        assert _poll(proc, outbox) == [10]  # partition 1 has no watermark yet: it holds the minimum back
        m[keys[1]] = 12
        assert _poll(proc, outbox) == [Watermark(10), 12]
        clock.advance_ms(1000)
        m[keys[1]] = 20  # only partition 1 stays active
        assert _poll(proc, outbox) == [20]
        clock.advance_ms(1500)  # partition 0 idle now: the watermark follows partition 1 alone
        assert _poll(proc, outbox) == [Watermark(20)]
        clock.advance_ms(2000)  # both idle: the idle message, once
        assert _poll(proc, outbox) == [IDLE_MESSAGE]
        clock.advance_ms(5000)
        assert _poll(proc, outbox) == []


def test_stream_map_when_reader_has_no_partitions_then_idle_at_once():
    from processors import limiting_lag, no_throttling, wm_gen_params
    from processors.windowing.event_time import IDLE_MESSAGE

    with _driver(partition_count=1) as (store, client):
        params = wm_gen_params(lambda item: item[1], limiting_lag(0), no_throttling(), idle_timeout_ms=500)
        procs = _processors(stream_map_p("m", wm_gen_params=params), client, total=2)
        (proc, outbox) = next((p, o) for p, o in procs if not p.partitions)
        assert _poll(proc, outbox) == [IDLE_MESSAGE]
