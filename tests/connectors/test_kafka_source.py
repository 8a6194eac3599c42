"""stream_kafka_p engine-free against librdkafka's mock cluster: partition spread, added partitions, native
timestamps and per-partition watermarks with the idle rule, offsets through snapshots, unreachable servers."""

from __future__ import annotations

import socket
import time
from collections import Counter

import pytest

import connectors.kafka_client as kafka_client
from connectors.kafka import stream_kafka_p
from connectors.kafka_source import owner_of_partition
from dag import DagError, ProcessingGuarantee
from processors import Inbox, Watermark
from processors.windowing.event_time import WmGenParams
from processors.windowing.watermark_policies import limiting_lag, no_throttling
from processors.windowing.definitions import MAX_TIMESTAMP
from tests.connectors.kafka_support import mock_cluster, produce, start, topic  # noqa: F401 - fixture
from tests.support import wait_for

EXACTLY_ONCE = ProcessingGuarantee.EXACTLY_ONCE


def _props(cluster, **extra):
    return {"bootstrap.servers": cluster.bootstrap_servers, "auto.offset.reset": "earliest", **extra}


def _poll_all(procs, until, timeout=30.0, what="the records", settle=0.0):
    """Call every processor's complete() until ``until(per_processor_items)``, then for ``settle`` s more (to
    catch what should not come); returns the items of each."""
    got = [[] for _ in procs]

    def step():
        for i, (p, outbox) in enumerate(procs):
            outbox.reset()
            assert p.complete() is False
            got[i] += outbox.drain(0)
        return until(got)

    wait_for(step, timeout, lambda: f"{what}; got {[len(g) for g in got]} items per processor", interval=0.01)
    settled = time.monotonic() + settle
    while time.monotonic() < settled:
        step()
        time.sleep(0.01)  # an observation window (the behaviour): nothing more may arrive while settling
    return got


def _close(procs):
    for p, _ in procs:
        p.close()


def test_partitions_when_two_members_of_two_processors_then_each_read_by_exactly_one(mock_cluster):
    first, second = topic(mock_cluster, 6), topic(mock_cluster, 3)
    produce(mock_cluster, first, [(b"k", b"a%d" % i) for i in range(60)], lambda i: i % 6)
    produce(mock_cluster, second, [(None, b"b%d" % i) for i in range(30)], lambda i: i % 3)
    projection = lambda m: (m.topic(), m.partition(), m.value())  # noqa: E731
    procs = start(stream_kafka_p(_props(mock_cluster), first, second, projection_fn=projection),
                  members=2, per_member=2)
    try:
        got = _poll_all(procs, lambda got: sum(map(len, got)) >= 90, settle=0.5)
    finally:
        _close(procs)
    values = Counter(v for items in got for _, _, v in items)
    assert set(values) == {b"a%d" % i for i in range(60)} | {b"b%d" % i for i in range(30)}
    assert set(values.values()) == {1}
    for index, items in enumerate(got):  # each processor read exactly its share of the partitions
        topics = (first, second)
        assert {(t, p) for t, p, _ in items} == {
            (t, p) for ti, t in enumerate(topics) for p in range((6, 3)[ti]) if owner_of_partition(ti, p, 4) == index}


def test_items_when_no_projection_then_raw_key_value_and_none_projection_drops(mock_cluster):
    name = topic(mock_cluster, 1)
    produce(mock_cluster, name, [(b"k1", b"v1"), (None, b"drop"), (None, b"v3")])
    plain = start(stream_kafka_p(_props(mock_cluster), name))
    dropping = start(stream_kafka_p(_props(mock_cluster), name,
                                    projection_fn=lambda m: None if m.value() == b"drop" else m.value()))
    try:
        assert _poll_all(plain, lambda got: len(got[0]) >= 3)[0] == [(b"k1", b"v1"), (None, b"drop"), (None, b"v3")]
        assert _poll_all(dropping, lambda got: len(got[0]) >= 2)[0] == [b"v1", b"v3"]
    finally:
        _close(plain + dropping)


def test_partitions_when_added_while_running_then_picked_up_within_seconds(mock_cluster):
    name = topic(mock_cluster, 2)
    procs = start(stream_kafka_p(_props(mock_cluster), name, projection_fn=lambda m: (m.partition(), m.value())),
                  members=1, per_member=2)
    try:
        produce(mock_cluster, name, [(None, b"old0"), (None, b"old1")], lambda i: i)
        _poll_all(procs, lambda got: sum(map(len, got)) >= 2)
        mock_cluster.recreate_topic(name, 4)  # the mock cannot add partitions: it replaces the topic
        produce(mock_cluster, name, [(None, b"new%d" % p) for p in range(4)], lambda i: i)
        got = _poll_all(procs, lambda got: {v for items in got for _, v in items} >= {b"new2", b"new3"},
                        timeout=20, what="records of the added partitions 2 and 3")
    finally:
        _close(procs)
    assert (2, b"new2") in got[0] and (3, b"new3") in got[1]  # owners: partition % 2


def _native_params(idle_ms):
    return WmGenParams(timestamp_fn=None, new_wm_policy_fn=limiting_lag(0), wm_emit_policy=no_throttling(),
                       idle_timeout_ms=idle_ms)


def test_watermarks_when_native_timestamps_then_min_over_partitions_and_idle_partition_released(mock_cluster):
    name = topic(mock_cluster, 2)
    # a partition goes idle after 5 s without events: long enough that a loaded machine's pause between the
    # assignment and the first records does not make both partitions idle before they arrive
    procs = start(stream_kafka_p(_props(mock_cluster), name, projection_fn=lambda m: m.value(),
                                 event_time_params=_native_params(5000)))
    try:
        produce(mock_cluster, name, [(None, b"a", 1000), (None, b"b", 5000)], lambda i: i)
        got = _poll_all(procs, lambda got: b"a" in got[0] and b"b" in got[0])[0]
        wms = [x.timestamp for x in got if isinstance(x, Watermark)]
        assert wms == [1000]  # partition 0 at 1000 holds partition 1 (at 5000) back
        # partition 0 goes idle (no more events) while partition 1 stays active (a record a second, so the two
        # never go idle in the same call, however slow the machine): the watermark moves to partition 1's
        last_sent = [0.0]

        def partition_0_released(got):
            if time.monotonic() - last_sent[0] >= 1:
                produce(mock_cluster, name, [(None, b"c", 6000)], lambda i: 1)
                last_sent[0] = time.monotonic()
            return Watermark(6000) in got[0]

        later = _poll_all(procs, partition_0_released, timeout=30,
                          what="partition 0 to go idle and the watermark to reach partition 1's 6000")[0]
        assert b"c" in later
        # then every partition idle: the idle message, once
        idle = _poll_all(procs, lambda got: Watermark(MAX_TIMESTAMP) in got[0], timeout=30, what="the idle message")
        assert idle[0].count(Watermark(MAX_TIMESTAMP)) == 1
    finally:
        _close(procs)


def _save(procs):
    entries = []
    for p, outbox in procs:
        outbox.reset()
        assert p.save_to_snapshot()
        entries += outbox.drain_snapshot()
    return entries


def _restore(supplier, entries, members, per_member):
    procs = start(supplier, members, per_member, guarantee=EXACTLY_ONCE)
    for p, _ in procs:
        p.restore_from_snapshot(Inbox(list(entries)))
        assert p.finish_snapshot_restore()
    return procs


def test_snapshot_when_restored_into_other_parallelism_then_resumes_at_saved_offsets(mock_cluster):
    name = topic(mock_cluster, 3)
    supplier = stream_kafka_p(_props(mock_cluster, **{"auto.offset.reset": "latest"}), name,
                              projection_fn=lambda m: int(m.value()))
    procs = start(supplier, 1, 2, guarantee=EXACTLY_ONCE)
    try:
        _poll_all(procs, lambda got: True)  # assigned at the end of each partition ("latest")
        produce(mock_cluster, name, [(None, b"%d" % i) for i in range(30)], lambda i: i % 3)
        first = _poll_all(procs, lambda got: sum(map(len, got)) >= 30, settle=0.3)
        entries = _save(procs)
    finally:
        _close(procs)
    assert sorted(x for items in first for x in items) == list(range(30))
    assert len(entries) == 3 and all(value[0] == 10 for _key, value in entries)  # next offset of each partition
    produce(mock_cluster, name, [(None, b"%d" % i) for i in range(30, 60)], lambda i: i % 3)
    restored = _restore(supplier, entries, 3, 1)
    try:
        second = _poll_all(restored, lambda got: sum(map(len, got)) >= 30, settle=0.5)
    finally:
        _close(restored)
    assert sorted(x for items in second for x in items) == list(range(30, 60))


def test_bootstrap_servers_when_they_never_answer_then_error_names_them_within_bound(monkeypatch):
    monkeypatch.setattr(kafka_client, "METADATA_TIMEOUT_S", 2.0)
    silent = socket.create_server(("127.0.0.1", 0))  # accepts connections, never answers
    servers = f"127.0.0.1:{silent.getsockname()[1]}"
    procs = start(stream_kafka_p({"bootstrap.servers": servers}, "lines"), vertex="kafkaSource(lines)")
    started = time.monotonic()
    try:
        with pytest.raises(DagError) as raised:
            procs[0][0].complete()
    finally:
        _close(procs)
        silent.close()
    assert time.monotonic() - started < 30  # the 2 s bound, not librdkafka's endless retrying
    message = str(raised.value)
    assert servers in message and "kafkaSource(lines)" in message and "'lines'" in message and "2 s" in message
