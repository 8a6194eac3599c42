"""examples/kafka_word_count.py: drawn without a broker, and run on local Spark (EXACTLY_ONCE) against the mock
cluster: every window's count of the lines written to the topic comes out once, as the windows say."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "examples")]

import kafka_word_count as example  # noqa: E402

from dag import ExecutionMode, JobConfig, ProcessingGuarantee  # noqa: E402
from jetspark_cli.main import main  # noqa: E402
from tests.connectors.kafka_support import mock_cluster, produce, read_topic, topic  # noqa: E402,F401
from tests.support import running  # noqa: E402

BASE = 1_700_000_000_000


def test_dot_when_no_broker_then_drawn_with_kafka_vertices(capsys):
    assert main(["dot", "examples/kafka_word_count.py", "--bootstrap-servers", "127.0.0.1:1"]) == 0
    dot = capsys.readouterr().out
    assert '"kafkaSource(lines)" -> "flat-map"' in dot and '"sliding-window" -> "kafkaSink(counts)"' in dot


def _expected(lines: list[tuple[int, str]]) -> Counter:
    counts: Counter = Counter()
    for ts, line in lines:
        for word in example.words(line):
            first_end = (ts // example.SLIDE_MS + 1) * example.SLIDE_MS
            for end in range(first_end, ts + example.WINDOW_MS + 1, example.SLIDE_MS):
                counts[end, word] += 1
    return counts


@pytest.mark.spark
def test_run_when_lines_in_topic_then_each_window_count_once_in_counts_topic(engine, mock_cluster):
    lines_topic, counts_topic = topic(mock_cluster, 2), topic(mock_cluster, 2)
    vocabulary = example.VOCABULARY[:4]
    lines = [(BASE + i * 50, " ".join(vocabulary[(i + k) % 4] for k in range(i % 3 + 1))) for i in range(200)]
    produce(mock_cluster, lines_topic, [(None, text.encode(), ts) for ts, text in lines], lambda i: i % 2)
    # a late line on each partition moves the watermark past every window of the lines above
    produce(mock_cluster, lines_topic, [(None, b"end", BASE + 60_000)] * 2, lambda i: i)
    expected = _expected(lines)
    properties = {"bootstrap.servers": mock_cluster.bootstrap_servers, "auto.offset.reset": "earliest"}
    dag = example.word_count_pipeline(properties, lines_topic, counts_topic).to_dag()
    config = JobConfig(execution_mode=ExecutionMode.PIPELINED, processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE,
                       snapshot_interval_ms=200)
    with running(engine, dag, config):
        records = read_topic(mock_cluster, counts_topic, len(expected), timeout=120, settle=1.0,
                             properties={"isolation.level": "read_committed"})
    got = Counter()
    for _, key, value, _ in records:
        end, count = value.decode().split()
        got[int(end), key.decode(), int(count)] += 1
    assert got == Counter({(end, word, n): 1 for (end, word), n in expected.items()})
