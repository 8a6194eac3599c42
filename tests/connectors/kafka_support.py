"""Helpers of the Kafka tests (not a test module): the mock cluster fixture, producing and reading topics,
and engine-free processors of a vertex spread like a job's over members.

``mock_cluster`` is module-scoped: import it into a test module (``from tests.connectors.kafka_support import
mock_cluster``) and every test of the module shares one mock cluster of 2 brokers, stopped at the module's end.
"""

from __future__ import annotations

import time
import uuid

import pytest

from connectors.kafka_mock import MockCluster
from dag import ProcessingGuarantee
from processors import Context, Outbox

BIG = 1 << 30


@pytest.fixture(scope="module")
def mock_cluster():
    """A mock Kafka cluster of 2 brokers for the whole module."""
    cluster = MockCluster(brokers=2)
    yield cluster
    cluster.close()


def topic(cluster: MockCluster, partitions: int) -> str:
    """A new topic of ``partitions`` partitions."""
    name = f"t-{uuid.uuid4().hex[:12]}"
    cluster.create_topic(name, partitions)
    return name


def produce(cluster: MockCluster, name: str, records, partition_of=None) -> None:
    """Produce ``records`` (``(key, value[, timestamp])``) to topic ``name``; ``partition_of(i)`` picks the
    partition of the i-th record (default: the producer's partitioner)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for i, record in enumerate(records):
        key, value, *rest = record
        kw = {"timestamp": rest[0]} if rest else {}
        if partition_of is not None:
            kw["partition"] = partition_of(i)
        producer.produce(name, value, key, **kw)
    assert producer.flush(30) == 0, "the mock cluster did not take every record"


def read_topic(cluster: MockCluster, name: str, expected: int, timeout: float = 30, settle: float = 0.5,
               properties: dict | None = None) -> list:
    """``(partition, key, value, timestamp)`` of the records of ``name``, read from the beginning until
    ``expected`` came (fails after ``timeout`` s) and nothing more for ``settle`` s."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": uuid.uuid4().hex,
                         "enable.auto.commit": False, **(properties or {})})
    try:
        count = len(consumer.list_topics(name, timeout=10).topics[name].partitions)
        consumer.assign([TopicPartition(name, p, OFFSET_BEGINNING) for p in range(count)])
        out, deadline, quiet_until = [], time.monotonic() + timeout, None
        while True:
            now = time.monotonic()
            if len(out) >= expected:
                quiet_until = quiet_until or now + settle
                if now >= quiet_until:
                    return out
            elif now >= deadline:
                raise AssertionError(f"timed out after {timeout} s reading {name}: {len(out)} of {expected} records")
            for m in consumer.consume(500, 0.1):
                assert m.error() is None, m.error()
                out.append((m.partition(), m.key(), m.value(), m.timestamp()[1]))
    finally:
        consumer.close()


def start(supplier, members: int = 1, per_member: int = 1, guarantee=ProcessingGuarantee.NONE,
          vertex: str = "kafka", job_id: int = 7):
    """Processors of a vertex as a job of ``members`` members x ``per_member`` processors runs them, each
    initialised with its own outbox: ``[(processor, outbox), ...]``."""
    total = members * per_member
    procs = []
    for g in range(total):
        p = supplier.get([0])(0).get(1)[0]
        outbox = Outbox([BIG], snapshot_capacity=BIG, owner=vertex)
        p.init(outbox, Context(vertex_name=vertex, job_id=job_id, global_processor_index=g,
                               local_processor_index=g % per_member, total_parallelism=total,
                               local_parallelism=per_member, member_index=g // per_member,
                               member_count=members, processing_guarantee=guarantee))
        procs.append((p, outbox))
    return procs
