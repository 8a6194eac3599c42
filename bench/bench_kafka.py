"""Throughput of Kafka source -> map -> Kafka sink: a jetspark stream job against a plain confluent-kafka loop.

Both read ``--records`` records (``--size`` bytes each) from a topic of 8 partitions, upper-case each value and
write it to a second topic, on librdkafka's mock cluster in this process (``connectors.kafka_mock``; no broker
can be installed here, so both sides pay the same mock brokers).

- plain: one ``Consumer`` assigned to every partition, ``consume(1000)`` batches, ``produce`` each mapped value,
  ``flush`` at the end (what a hand-written at-least-once copier does);
- jetspark: ``stream_kafka_p -> map_p -> write_kafka_p`` on a local[2] engine, processing guarantee NONE
  (the sink flushes at snapshots only under a guarantee), default parallelism.

Each run fills a fresh input topic first, then times the copy by the output topic's end offsets: the rate from
10% to 100% of the records are out (so Spark's job start-up is not counted; a job reaches 10% only once its
tasks run). Runs alternate (plain, jetspark, plain, ...), ``--rounds`` each; the median rates and their ratio
are printed (target: jetspark >= 0.7x plain).

Run: ``.venv/bin/python bench/bench_kafka.py [--records N] [--size B] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from connectors.kafka import stream_kafka_p, write_kafka_p  # noqa: E402
from connectors.kafka_mock import MockCluster  # noqa: E402
from dag import DAG, Engine, EngineConfig, ExecutionMode, JobConfig  # noqa: E402
from edges import between  # noqa: E402
from processors import map_p  # noqa: E402

PARTITIONS = 8


def upper(entry: tuple) -> tuple:
    """The benchmark's map: the value upper-cased, the key kept."""
    return entry[0], entry[1].upper()


def fill(cluster: MockCluster, records: int, size: int) -> str:
    from confluent_kafka import Producer

    name = f"in-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(name, PARTITIONS)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 20})
    value = (b"abcdefghij" * (size // 10 + 1))[:size]
    for i in range(records):
        while True:
            try:
                producer.produce(name, value, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(120):
        raise RuntimeError("the mock cluster did not take every input record within 120 s")
    check = OutputCounter(cluster, name)
    try:
        if check.lowest() > 0:  # the mock keeps about 5 MB per partition and drops older records
            raise RuntimeError(f"the mock cluster dropped the oldest input records: use fewer --records or a "
                               f"smaller --size (at most ~5 MB per partition, {PARTITIONS} partitions)")
    finally:
        check.close()
    return name


class OutputCounter:
    """The number of records in a topic now (sum of its partitions' end offsets)."""

    def __init__(self, cluster: MockCluster, name: str):
        from confluent_kafka import Consumer, TopicPartition

        self._consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "bench-counter"})
        self._partitions = [TopicPartition(name, p) for p in range(PARTITIONS)]

    def __call__(self) -> int:
        return sum(self._consumer.get_watermark_offsets(tp, timeout=10, cached=False)[1] for tp in self._partitions)

    def lowest(self) -> int:
        """The highest start offset of the partitions (0: none dropped a record)."""
        return max(self._consumer.get_watermark_offsets(tp, timeout=10, cached=False)[0] for tp in self._partitions)

    def close(self) -> None:
        self._consumer.close()


def timed_rate(count: OutputCounter, records: int, timeout: float = 600) -> float:
    """Records per second between 10% and 100% of ``records`` in the output topic."""
    deadline, t10 = time.monotonic() + timeout, None
    while True:
        n = count()
        now = time.monotonic()
        if t10 is None and n >= records // 10:
            t10, n10 = now, n
        if n >= records:
            return (n - n10) / max(now - t10, 1e-9)
        if now > deadline:
            raise TimeoutError(f"only {n} of {records} records came out in {timeout} s")
        time.sleep(0.01)


def plain_copy(cluster: MockCluster, source: str, sink: str, records: int) -> float:
    import threading

    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": uuid.uuid4().hex,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(source, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})

    def copy() -> None:
        done = 0
        while done < records:
            for m in consumer.consume(1000, 0.1):
                key, value = upper((m.key(), m.value()))
                while True:
                    try:
                        producer.produce(sink, value, key)
                        break
                    except BufferError:
                        producer.poll(0.01)
                done += 1
            producer.poll(0)
        producer.flush(120)

    worker = threading.Thread(target=copy, name="plain-copy")
    counter = OutputCounter(cluster, sink)
    worker.start()
    try:
        return timed_rate(counter, records)
    finally:
        worker.join(600)
        counter.close()
        consumer.close()


def jetspark_copy(engine: Engine, cluster: MockCluster, source: str, sink: str, records: int) -> float:
    properties = {"bootstrap.servers": cluster.bootstrap_servers, "auto.offset.reset": "earliest"}
    dag = DAG()
    read = dag.new_vertex(f"kafkaSource({source})", stream_kafka_p(properties, source))
    mapped = dag.new_vertex("map", map_p(upper))
    write = dag.new_vertex(f"kafkaSink({sink})", write_kafka_p(properties, sink))
    dag.edge(between(read, mapped))
    dag.edge(between(mapped, write))
    counter = OutputCounter(cluster, sink)
    job = engine.new_job(dag, JobConfig(execution_mode=ExecutionMode.PIPELINED))
    try:
        return timed_rate(counter, records)
    finally:
        job.cancel()
        try:
            job.join(120)
        except Exception:  # noqa: BLE001 - a cancelled job ends with CancellationError
            pass
        counter.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rates: dict[str, list[float]] = {"plain": [], "jetspark": []}
    with MockCluster(brokers=1) as cluster, Engine(EngineConfig(master="local[2]")) as engine:
        for round_ in range(args.rounds):
            for side in ("plain", "jetspark"):
                source = fill(cluster, args.records, args.size)
                sink = f"out-{uuid.uuid4().hex[:8]}"
                cluster.create_topic(sink, PARTITIONS)
                rate = (plain_copy(cluster, source, sink, args.records) if side == "plain"
                        else jetspark_copy(engine, cluster, source, sink, args.records))
                rates[side].append(rate)
                print(f"round {round_ + 1} {side:8s} {rate:10,.0f} records/s", flush=True)
    plain, jet = statistics.median(rates["plain"]), statistics.median(rates["jetspark"])
    print(f"median: plain {plain:,.0f}/s, jetspark {jet:,.0f}/s, ratio {jet / plain:.2f}x (target >= 0.7x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
