"""Word counts over a sliding window, from a Kafka topic of lines to a Kafka topic of counts, exactly once.

::

    p.read_from(KafkaSources.kafka(properties, "lines", projection_fn=message_text))  # each message a line
     .with_native_timestamps(LAG_MS)              # the messages' own timestamps, per-partition watermarks
     .flat_map(words)
     .window(WindowDefinition.sliding(WINDOW_MS, SLIDE_MS))
     .grouping_key(whole_item)
     .aggregate(counting())                        # TimestampedEntry(window end, word, count)
     .write_to(KafkaSinks.kafka_builder(properties).topic("counts")
               .extract_key_fn(entry_key).extract_value_fn(count_record).build())   # transactional

Run it on the pipelined runtime with the exactly-once guarantee, against a broker::

    jetspark run examples/kafka_word_count.py --bootstrap-servers HOST:9092 --guarantee exactly_once

or, without ``--bootstrap-servers``, against a mock Kafka cluster started in this process (librdkafka's, see
``connectors.kafka_mock``) with a thread writing random lines to ``lines``; ``--seconds 20`` stops it and the
counts of the last complete window are printed. ``jetspark dot``/``render`` draw it without any broker. A
record of ``counts`` is ``key = word``, ``value = "<window end ms> <count>"``; a ``read_committed`` consumer
sees each once (on a real broker; the mock shows aborted records too).
"""

from __future__ import annotations

import random
import re
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from connectors.kafka import KafkaSinks, KafkaSources  # noqa: E402
from jetspark_cli.spec import JobSpec  # noqa: E402
from pipeline import Pipeline, WindowDefinition  # noqa: E402
from processors import counting, entry_key, whole_item  # noqa: E402

WINDOW_MS = 10_000
SLIDE_MS = 1_000
LAG_MS = 500
VOCABULARY = ("kafka", "spark", "jet", "stream", "window", "count", "word", "exactly", "once", "topic")
_NON_WORD = re.compile(r"\W+")


def message_text(message: Any) -> str:
    """The line a Kafka message holds (UTF-8)."""
    return message.value().decode("utf-8")


def words(line: str) -> list[str]:
    """The lower-cased words of ``line``."""
    return [w for w in _NON_WORD.split(line.lower()) if w]


def count_record(entry: Any) -> str:
    """The record value of a window's count: ``"<window end> <count>"``."""
    return f"{entry.timestamp} {entry.value}"


def word_count_pipeline(properties: dict, lines: str = "lines", counts: str = "counts",
                        window_ms: int = WINDOW_MS, slide_ms: int = SLIDE_MS) -> Pipeline:
    """The pipeline of the module docstring."""
    p = Pipeline.create()
    (p.read_from(KafkaSources.kafka(properties, lines, projection_fn=message_text))
     .with_native_timestamps(LAG_MS)
     .flat_map(words)
     .window(WindowDefinition.sliding(window_ms, slide_ms))
     .grouping_key(whole_item)
     .aggregate(counting())
     .write_to(KafkaSinks.kafka_builder(properties).topic(counts)
               .extract_key_fn(entry_key).extract_value_fn(count_record).build()))
    return p


class LineWriter:
    """A daemon thread producing ``rate`` random lines a second to ``topic`` until :meth:`stop`."""

    def __init__(self, bootstrap_servers: str, topic: str, rate: int = 200, seed: int | None = None):
        from confluent_kafka import Producer

        self._producer = Producer({"bootstrap.servers": bootstrap_servers})
        self._topic, self._rate, self._random = topic, rate, random.Random(seed)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kafka-word-count-lines", daemon=True)

    def start(self) -> "LineWriter":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(1 / self._rate):
            line = " ".join(self._random.choice(VOCABULARY) for _ in range(self._random.randint(1, 8)))
            self._producer.produce(self._topic, line.encode())
            self._producer.poll(0)
        self._producer.flush(10)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(15)


def read_counts(bootstrap_servers: str, topic: str, timeout_s: float = 5.0) -> dict[tuple[int, str], int]:
    """``{(window end, word): count}`` of the committed records of ``topic`` (read for ``timeout_s``)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": uuid.uuid4().hex,
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        counts, deadline = {}, time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for m in consumer.consume(1000, 0.2):
                if m.error() is None:
                    end, count = m.value().decode().split()
                    counts[int(end), m.key().decode()] = int(count)
        return counts
    finally:
        consumer.close()


def job(bootstrap_servers: str = "", lines: str = "lines", counts: str = "counts", rate: int = 200) -> JobSpec:
    """``jetspark run examples/kafka_word_count.py [--bootstrap-servers H:P] --guarantee exactly_once``."""
    state: dict[str, Any] = {}
    if not bootstrap_servers:  # a mock cluster in this process, topics included
        from connectors.kafka_mock import MockCluster

        cluster = state["cluster"] = MockCluster(brokers=1)
        cluster.create_topic(lines, 4)
        cluster.create_topic(counts, 2)
        bootstrap_servers = cluster.bootstrap_servers
    properties = {"bootstrap.servers": bootstrap_servers, "auto.offset.reset": "earliest"}

    def prepare(engine: Any) -> None:
        if "cluster" in state:
            state["writer"] = LineWriter(bootstrap_servers, lines, rate).start()

    def report(engine: Any, finished: Any) -> None:
        if "writer" in state:
            state["writer"].stop()
        result = read_counts(bootstrap_servers, counts)
        if result:
            last = max(end for end, _ in result)
            top = sorted(((n, w) for (end, w), n in result.items() if end == last), reverse=True)[:10]
            print(f"window ending {last} ms:", ", ".join(f"{w} {n}" for n, w in top))
        else:
            print("no window completed yet")
        if "cluster" in state:
            state["cluster"].close()

    return JobSpec(word_count_pipeline(properties, lines, counts).to_dag(), prepare=prepare, report=report,
                   name="kafka-word-count")
