"""connectors.kafka_recovery.transaction_committed against librdkafka's mock cluster: the probe record is
there, the log ends before it (lost), retention removed it, the topic is gone, servers that never answer. (The mock does not hide
aborted records from read_committed consumers, so the "aborted" answer is reached on a real broker only.)"""

from __future__ import annotations

import socket

import pytest

import connectors.kafka_client as kafka_client
from connectors.kafka_recovery import transaction_committed
from dag import DagError
from tests.connectors.kafka_support import mock_cluster, produce, topic  # noqa: F401 - fixture

OWNER = "vertex 'kafkaSink(t)' (write_kafka_p, processor 0)"


def _props(cluster):
    return {"bootstrap.servers": cluster.bootstrap_servers, "sasl.password": "s3cret", "security.protocol":
            "plaintext"}


def test_probe_when_record_in_log_then_committed_and_when_log_ends_before_it_then_not(mock_cluster):
    name = topic(mock_cluster, 2)
    produce(mock_cluster, name, [(None, b"%d" % i) for i in range(5)], lambda i: 0)
    props = _props(mock_cluster)
    assert transaction_committed(props, (name, 0, 0), OWNER, timeout_s=20)
    assert transaction_committed(props, (name, 0, 4), OWNER, timeout_s=20)
    assert not transaction_committed(props, (name, 0, 5), OWNER, timeout_s=20)  # at the end: never written
    assert not transaction_committed(props, (name, 0, 9), OWNER, timeout_s=20)  # past the end
    assert not transaction_committed(props, (name, 1, 0), OWNER, timeout_s=20)  # an empty partition
    mock_cluster.recreate_topic(name, 2)
    assert not transaction_committed(props, (name, 0, 2), OWNER, timeout_s=20)  # the log lost it


def test_probe_when_retention_removed_the_record_then_taken_as_committed(mock_cluster, caplog):
    name = topic(mock_cluster, 1)
    big = b"x" * 200_000
    produce(mock_cluster, name, [(None, big) for _ in range(40)], lambda i: 0)  # 8 MB: the mock keeps ~5 MB
    with caplog.at_level("WARNING", logger="jetspark.kafka"):
        assert transaction_committed(_props(mock_cluster), (name, 0, 0), OWNER, timeout_s=20)
    assert "removed by retention" in caplog.text and "kafkaSink(t)" in caplog.text


def test_probe_when_topic_gone_then_not_committed_with_a_warning(mock_cluster, caplog):
    with caplog.at_level("WARNING", logger="jetspark.kafka"):
        assert not transaction_committed(_props(mock_cluster), ("no-such-topic", 0, 3), OWNER, timeout_s=20)
    assert "no-such-topic" in caplog.text and "does not have" in caplog.text


def test_probe_when_servers_never_answer_then_error_names_vertex_and_servers_not_secrets(monkeypatch):
    monkeypatch.setattr(kafka_client, "METADATA_TIMEOUT_S", 2.0)
    silent = socket.create_server(("127.0.0.1", 0))
    servers = f"127.0.0.1:{silent.getsockname()[1]}"
    try:
        with pytest.raises(DagError) as raised:
            transaction_committed({"bootstrap.servers": servers, "sasl.password": "s3cret"}, ("t", 0, 3), OWNER)
    finally:
        silent.close()
    message = str(raised.value)
    assert servers in message and "kafkaSink(t)" in message and "s3cret" not in message
