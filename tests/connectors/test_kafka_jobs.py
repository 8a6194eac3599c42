"""Kafka jobs on local Spark against librdkafka's mock cluster (brokers in the test process, reached by the
Spark workers over loopback): the source on 2 members x 2 processors, offsets across a crash restart into an
exactly-once list sink, and a Kafka -> map -> transactional Kafka sink pipeline across a restart."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from connectors.kafka import KafkaSinks, KafkaSources, stream_kafka_p
from dag import DAG, Engine, EngineConfig, ExecutionMode, JobConfig, ProcessingGuarantee, RestartableError
from edges import between
from pipeline import Pipeline
from processors import AbstractProcessor, write_list_p
from tests.connectors.kafka_support import mock_cluster, produce, read_topic, topic  # noqa: F401 - fixture
from tests.support import once, running, unique, wait_for

pytestmark = pytest.mark.spark

EXACTLY_ONCE = ProcessingGuarantee.EXACTLY_ONCE
TIMEOUT = 120


def _config(guarantee=ProcessingGuarantee.NONE):
    return JobConfig(execution_mode=ExecutionMode.PIPELINED, processing_guarantee=guarantee,
                     snapshot_interval_ms=200)


def _props(cluster):
    return {"bootstrap.servers": cluster.bootstrap_servers, "auto.offset.reset": "earliest"}


def _value(message):
    return int(message.value())


def _records(values):
    return [(None, b"%d" % v) for v in values]


def test_source_when_two_members_of_two_processors_then_every_record_once(engine, mock_cluster):
    name = topic(mock_cluster, 8)
    produce(mock_cluster, name, _records(range(400)), lambda i: i % 8)
    two = Engine(EngineConfig(members=2), spark=engine.spark)
    dag = DAG()
    source = dag.new_vertex(f"kafkaSource({name})", stream_kafka_p(_props(mock_cluster), name, projection_fn=_value),
                            local_parallelism=2)
    out_name = unique("kafka-members")
    sink = dag.new_vertex("sink", write_list_p(out_name), local_parallelism=1)
    dag.edge(between(source, sink))
    out = two.get_list(out_name)
    with running(two, dag, _config()):
        wait_for(lambda: len(out) >= 400, TIMEOUT, lambda: f"400 records, got {len(out)}")
        produce(mock_cluster, name, _records(range(400, 480)), lambda i: i % 8)  # while running, too
        wait_for(lambda: len(out) >= 480, TIMEOUT, lambda: f"480 records, got {len(out)}")
    assert Counter(out) == Counter(range(480))


class FailOnceAfterCommit(AbstractProcessor):
    """Passes items on; at the first item after a completed snapshot reached it, raises RestartableError once
    (a marker file: the processor runs in a Spark worker)."""

    def __init__(self, marker: Path):
        super().__init__()
        self.marker, self.committed = marker, False

    def snapshot_commit_finish(self, success):
        self.committed = self.committed or success
        return True

    def try_process0(self, item):
        if self.committed and item >= 200 and once(self.marker):
            raise RestartableError(f"injected at item {item}")
        return self.try_emit(item)


def test_source_when_crash_restart_then_offsets_from_snapshot_and_every_record_once(engine, mock_cluster, tmp_path):
    name = topic(mock_cluster, 4)
    marker = tmp_path / "failed"
    dag = DAG()
    source = dag.new_vertex("kafka", stream_kafka_p(_props(mock_cluster), name, projection_fn=_value),
                            local_parallelism=2)
    fail = dag.new_vertex("fail", lambda: FailOnceAfterCommit(marker), local_parallelism=1)
    out_name = unique("kafka-restart")
    sink = dag.new_vertex("sink", write_list_p(out_name), local_parallelism=1)
    dag.edge(between(source, fail))
    dag.edge(between(fail, sink))
    out = engine.get_list(out_name)
    with running(engine, dag, _config(EXACTLY_ONCE)) as job:
        produce(mock_cluster, name, _records(range(200)), lambda i: i % 4)
        wait_for(lambda: len(out) >= 200, TIMEOUT, lambda: f"the first 200 records, got {len(out)}")  # committed
        produce(mock_cluster, name, _records(range(200, 400)), lambda i: i % 4)
        wait_for(lambda: len(out) >= 400, TIMEOUT, lambda: f"400 records, got {len(out)}")
        assert marker.exists() and job.metrics().restarts >= 1
        produce(mock_cluster, name, _records(range(400, 410)), lambda i: i % 4)
        wait_for(lambda: len(out) >= 410, TIMEOUT, lambda: f"410 records, got {len(out)}")
    assert Counter(out) == Counter(range(410))  # a source ignoring the snapshot would read 0.. again


def test_pipeline_when_kafka_to_transactional_kafka_and_restarted_then_read_committed_sees_each_once(
        engine, mock_cluster):
    source_topic, sink_topic = topic(mock_cluster, 4), topic(mock_cluster, 2)
    produce(mock_cluster, source_topic, _records(range(300)), lambda i: i % 4)
    p = Pipeline.create()
    (p.read_from(KafkaSources.kafka(_props(mock_cluster), source_topic, projection_fn=_value))
     .with_native_timestamps(0)
     .map(lambda x: x * 10)
     .write_to(KafkaSinks.kafka_builder(_props(mock_cluster)).topic(sink_topic)
               .extract_key_fn(lambda x: None).extract_value_fn(str).build()))
    committed = {"isolation.level": "read_committed"}
    with running(engine, p.to_dag(), _config(EXACTLY_ONCE)) as job:
        read_topic(mock_cluster, sink_topic, 300, timeout=TIMEOUT, settle=0, properties=committed)
        job.restart()  # a snapshot now (its transactions committed), then a new execution from it
        produce(mock_cluster, source_topic, _records(range(300, 400)), lambda i: i % 4)
        records = read_topic(mock_cluster, sink_topic, 400, timeout=TIMEOUT, settle=1.0, properties=committed)
    assert Counter(int(v) for _, _, v, _ in records) == Counter(x * 10 for x in range(400))
