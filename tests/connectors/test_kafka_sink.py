"""write_kafka_p and KafkaSinks engine-free against librdkafka's mock cluster: records, encoding errors,
flush at snapshots, the transactional life cycle, the transaction kept in the snapshot and its recovery after a
crash before or after the commit, unreachable servers; the Pipeline API's names."""

from __future__ import annotations

import socket
import time
from collections import Counter
from contextlib import contextmanager

import pytest

import connectors.kafka_client as kafka_client
from connectors.kafka import KafkaSinks, KafkaSources, write_kafka_p
from dag import DagError, DagValidationError, ProcessingGuarantee, RestartableError
from processors import Inbox
from processors.api.snapshot_keys import broadcast_key
from tests.connectors.kafka_support import mock_cluster, read_topic, start, topic  # noqa: F401 - fixture

EXACTLY_ONCE = ProcessingGuarantee.EXACTLY_ONCE


def _props(cluster):
    return {"bootstrap.servers": cluster.bootstrap_servers}


def test_sink_when_items_then_each_a_record_with_str_encoded_and_none_key(mock_cluster):
    name = topic(mock_cluster, 2)
    procs = start(write_kafka_p(_props(mock_cluster), name), vertex="kafkaSink")
    p, _ = procs[0]
    p.process(0, Inbox([("k", "v1"), (None, b"v2"), (b"k3", None)]))
    assert p.complete()
    p.close()
    records = read_topic(mock_cluster, name, 3)
    assert sorted(((k, v) for _, k, v, _ in records), key=repr) == sorted(
        [(b"k", b"v1"), (None, b"v2"), (b"k3", None)], key=repr)


def test_sink_when_snapshot_prepared_then_records_already_delivered(mock_cluster):
    name = topic(mock_cluster, 1)
    procs = start(write_kafka_p(_props(mock_cluster), name, extract_key_fn=lambda x: None,
                                extract_value_fn=lambda x: str(x)), guarantee=ProcessingGuarantee.AT_LEAST_ONCE)
    p, _ = procs[0]
    p.process(0, Inbox(range(100)))
    assert p.snapshot_commit_prepare()
    assert len(p._producer) == 0  # noqa: SLF001 - prepare waited until every record was acknowledged
    assert p.snapshot_commit_finish(True)
    records = read_topic(mock_cluster, name, 100)
    p.close()
    assert [int(v) for _, _, v, _ in records] == list(range(100))


def test_sink_when_value_cannot_be_encoded_then_error_names_type_and_vertex(mock_cluster):
    name = topic(mock_cluster, 1)
    procs = start(write_kafka_p(_props(mock_cluster), name), vertex="kafkaSink(counts)")
    try:
        with pytest.raises(DagError) as raised:
            procs[0][0].process(0, Inbox([("word", 3)]))
    finally:
        procs[0][0].close()
    message = str(raised.value)
    assert "kafkaSink(counts)" in message and "type int" in message and "tuple" in message
    assert "extract_value_fn" in message


def test_exactly_once_sink_when_prepared_then_waits_for_finish_and_commits(mock_cluster):
    name = topic(mock_cluster, 1)
    supplier = write_kafka_p(_props(mock_cluster), name, extract_value_fn=str, exactly_once=True)
    procs = start(supplier, guarantee=EXACTLY_ONCE, vertex="kafkaSink(eo)")
    p, _ = procs[0]
    try:
        p.process(0, Inbox([("a", 1), ("b", 2)]))
        assert p.snapshot_commit_prepare()
        held = Inbox([("c", 3)])
        p.process(0, held)  # the open transaction waits for phase 2: nothing taken
        assert len(held) == 1 and p.complete() is False
        assert p.snapshot_commit_finish(True)
        p.process(0, held)
        assert len(held) == 0
        assert p.snapshot_commit_prepare() and p.snapshot_commit_finish(False)  # failed: stays open
        assert p.complete()  # input over: the open transaction is committed
    finally:
        p.close()
    records = read_topic(mock_cluster, name, 3, properties={"isolation.level": "read_committed"})
    assert sorted(v for _, _, v, _ in records) == [b"('a', 1)", b"('b', 2)", b"('c', 3)"]


def test_exactly_once_sink_when_restarted_then_same_transactional_id_takes_over(mock_cluster):
    name = topic(mock_cluster, 1)
    supplier = write_kafka_p(_props(mock_cluster), name, extract_value_fn=str, exactly_once=True)
    before = start(supplier, guarantee=EXACTLY_ONCE)[0][0]
    before.process(0, Inbox([("lost", 0)]))  # an open transaction when the execution dies
    after = start(supplier, guarantee=EXACTLY_ONCE)[0][0]  # init_transactions with the same id
    try:
        after.process(0, Inbox([("kept", 1)]))
        assert after.snapshot_commit_prepare() and after.snapshot_commit_finish(True)
    finally:
        before.close()
        after.close()
    assert b"('kept', 1)" in [v for _, _, v, _ in read_topic(mock_cluster, name, 1)]


def test_bootstrap_servers_when_they_never_answer_then_sink_fails_naming_them_within_bound(monkeypatch):
    monkeypatch.setattr(kafka_client, "METADATA_TIMEOUT_S", 2.0)
    silent = socket.create_server(("127.0.0.1", 0))
    servers = f"127.0.0.1:{silent.getsockname()[1]}"
    started = time.monotonic()
    try:
        with pytest.raises(DagError) as raised:
            start(write_kafka_p({"bootstrap.servers": servers, "sasl.password": "s3cret"}, "out"),
                  vertex="kafkaSink(out)")
    finally:
        silent.close()
    assert time.monotonic() - started < 30  # the 2 s bound, not librdkafka's endless retrying
    message = str(raised.value)
    assert servers in message and "kafkaSink(out)" in message and "s3cret" not in message


def test_pipeline_names_and_builder_validation():
    props = {"bootstrap.servers": "b:9092"}
    assert KafkaSources.kafka(props, "a", "b").name == "kafkaSource(a,b)"
    assert KafkaSinks.kafka(props, "out").name == "kafkaSink(out)"
    builder = KafkaSinks.kafka_builder(props).to_record_fn(lambda x: ("t", None, x))
    assert builder.build().name == "kafkaSink"
    with pytest.raises(DagValidationError, match="topic"):
        KafkaSinks.kafka_builder(props).build()
    with pytest.raises(DagValidationError, match="bootstrap.servers"):
        KafkaSinks.kafka({}, "out")


@pytest.mark.parametrize("properties", [[("sasl.password", "s3cret")], {1: "x", "sasl.password": "s3cret"}])
def test_properties_when_refused_then_message_names_the_problem_but_no_value(properties):
    with pytest.raises(DagValidationError, match="write_kafka_p: properties must") as raised:
        write_kafka_p(properties, "out")
    assert "s3cret" not in str(raised.value)


def test_sink_when_kafka_refuses_a_record_then_error_names_vertex_and_reason(mock_cluster):
    name = topic(mock_cluster, 1)
    procs = start(write_kafka_p({**_props(mock_cluster), "message.max.bytes": 1000}, name), vertex="kafkaSink(big)")
    try:
        with pytest.raises(DagError, match=r"kafkaSink\(big\).*refused a record.*(?i:too large)"):
            procs[0][0].process(0, Inbox([(None, b"x" * 5000)]))
    finally:
        procs[0][0].close()


def _crash_at_commit(processor):
    """The fault injection point: the execution dies in phase 2, before this processor's commit reached Kafka."""
    def crash():
        raise RestartableError("injected: the execution died before the commit")
    processor._commit_transaction = crash  # noqa: SLF001


def _eo_sink(cluster, name):
    return write_kafka_p(_props(cluster), name, extract_key_fn=lambda x: None, extract_value_fn=str,
                         exactly_once=True)


def _prepare(p, outbox, items, commit: bool) -> list:
    """``p`` takes ``items`` and prepares a snapshot, then commits it or (``commit=False``) the execution dies in
    phase 2 before the commit reached Kafka; the snapshot's entries."""
    p.process(0, Inbox(items))
    assert p.snapshot_commit_prepare()
    saved = outbox.drain_snapshot()
    if commit:
        assert p.snapshot_commit_finish(True)
    else:
        _crash_at_commit(p)
        with pytest.raises(RestartableError, match="injected"):
            p.snapshot_commit_finish(True)
    return saved


def _fifty_prepared(supplier, commit: bool) -> list:
    """An execution of one processor that prepares "0" .. "49" and commits them or dies (:func:`_prepare`)."""
    before, outbox = start(supplier, guarantee=EXACTLY_ONCE)[0]
    try:
        return _prepare(before, outbox, [str(i) for i in range(50)], commit)
    finally:
        before.close()


@contextmanager
def _restored(supplier, saved):
    """A new execution's processor restored from ``saved`` (restore finished), closed at the end."""
    after, outbox = start(supplier, guarantee=EXACTLY_ONCE)[0]
    try:
        after.restore_from_snapshot(Inbox(saved))
        assert after.finish_snapshot_restore()
        yield after, outbox
    finally:
        after.close()


def test_exactly_once_sink_when_prepared_then_snapshot_holds_the_transaction_records_and_first_position(
        mock_cluster):
    name = topic(mock_cluster, 1)
    p, outbox = start(_eo_sink(mock_cluster, name), guarantee=EXACTLY_ONCE)[0]
    try:
        p.process(0, Inbox(["a", "b"]))
        assert p.snapshot_commit_prepare()
        [(key, (probe, records))] = outbox.drain_snapshot()
        assert key == broadcast_key(("write_kafka_p.txn", 0))
        assert probe == (name, 0, 0) and records == [(name, None, b"a"), (name, None, b"b")]
        assert p.snapshot_commit_finish(True)
        assert p.snapshot_commit_prepare() and outbox.drain_snapshot() == []  # committed: nothing to keep
        assert p.snapshot_commit_finish(True)
        p.process(0, Inbox(["c"]))
        assert p.snapshot_commit_prepare()
        [(_, (probe, records))] = outbox.drain_snapshot()
        assert probe[:2] == (name, 0) and probe[2] >= 2  # a new transaction (after a, b and a commit marker)
        assert records == [(name, None, b"c")]
        assert p.snapshot_commit_finish(True)
    finally:
        p.close()


def test_exactly_once_sink_when_restored_after_its_commit_then_nothing_sent_again(mock_cluster):
    name = topic(mock_cluster, 2)
    supplier = _eo_sink(mock_cluster, name)
    saved = _fifty_prepared(supplier, commit=True)  # committed, then the execution dies
    with _restored(supplier, saved) as (after, _):
        after.process(0, Inbox(["50"]))
        assert after.complete()
    records = read_topic(mock_cluster, name, 51, settle=1.0, properties={"isolation.level": "read_committed"})
    assert Counter(int(v) for _, _, v, _ in records) == Counter(range(51))


def test_exactly_once_sink_when_crash_before_commit_on_mock_then_read_committed_sees_each_once(mock_cluster):
    # On a real broker the restart aborts the transaction and the probe sends its records again; the mock
    # aborts nothing (module docstring of connectors.kafka_recovery), so the probe finds them there
    name = topic(mock_cluster, 2)
    supplier = _eo_sink(mock_cluster, name)
    saved = _fifty_prepared(supplier, commit=False)
    with _restored(supplier, saved) as (after, _):
        assert after.complete()
    records = read_topic(mock_cluster, name, 50, settle=1.0, properties={"isolation.level": "read_committed"})
    assert Counter(int(v) for _, _, v, _ in records) == Counter(range(50))


def test_exactly_once_sink_when_restored_transactions_not_in_log_then_sent_again_in_the_next_commit(mock_cluster):
    name = topic(mock_cluster, 1)
    supplier = _eo_sink(mock_cluster, name)
    saved = []
    procs = start(supplier, per_member=2, guarantee=EXACTLY_ONCE)  # two owners, restored into one processor
    try:
        for index, (p, outbox) in enumerate(procs):
            saved += _prepare(p, outbox, [f"{index}-{i}" for i in range(20)], commit=False)
    finally:
        for p, _ in procs:
            p.close()
    # the log loses them: what a real broker's abort does to a read_committed consumer, which the mock lacks
    mock_cluster.recreate_topic(name, 1)
    with _restored(supplier, saved) as (after, outbox):
        after.process(0, Inbox(["new"]))
        assert after.snapshot_commit_prepare()
        [(_, (_, records))] = outbox.drain_snapshot()  # resent records are saved again until committed
        assert len(records) == 41
        assert after.snapshot_commit_finish(True)
    records = read_topic(mock_cluster, name, 41, settle=1.0, properties={"isolation.level": "read_committed"})
    expected = [f"{o}-{i}".encode() for o in range(2) for i in range(20)] + [b"new"]
    assert Counter(v for _, _, v, _ in records) == Counter(expected)
