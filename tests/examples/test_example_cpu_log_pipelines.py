"""examples/cpu_log_pipelines.py: the tutorials' pipelines. The producer's DOT is the tutorial's; the batch
consumer runs and reads back what the CPU-log sink wrote; the network consumer lowers to one peeked source."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "examples")]

import cpu_log_pipelines as cpu  # noqa: E402

from pipeline import Sinks  # noqa: E402
from processors.io.text_streams import is_stream_source  # noqa: E402
from tests.support import running, wait_for  # noqa: E402


def test_producer_when_lowered_then_dot_is_the_one_jet_printed(tmp_path: Path) -> None:
    assert cpu.producer_pipeline(tmp_path).to_dot().replace("\t", "    ") == cpu.TUTORIAL_DOT


def test_network_consumer_when_lowered_then_peek_wraps_the_stream_source() -> None:
    for timestamped in (False, True):
        dag = cpu.network_consumer_pipeline(timestamped).to_dag()
        assert [v.name for v in dag.vertices] == ["network-source", "noop"]
        assert is_stream_source(dag.get_vertex("network-source").meta_supplier)


@pytest.mark.spark
def test_consumer_when_run_then_reads_back_the_cpu_log(engine, tmp_path: Path) -> None:
    log = tmp_path / "data.0.csv"
    log.write_text("".join(f"1583309377{i:03d},0.5,SimpleEvent(sequence={i})\n" for i in range(300)))
    engine.get_list("cpu-lines").clear()
    engine.new_job(cpu.consumer_pipeline(log, Sinks.list("cpu-lines"))).join(timeout=300)
    lines = list(engine.get_list("cpu-lines"))
    engine.get_list("cpu-lines").clear()
    assert lines == log.read_text().splitlines()
    engine.new_job(cpu.consumer_pipeline(log)).join(timeout=300)  # the tutorial's logger sink


@pytest.mark.spark
def test_producer_when_run_then_cpu_log_lines_of_simple_events_until_cancelled(engine, tmp_path: Path) -> None:
    log = tmp_path / "data.0.csv"
    with running(engine, cpu.producer_pipeline(tmp_path), join_timeout=120):
        wait_for(lambda: log.exists() and len(log.read_text().splitlines()) >= 5, 180, "5 lines in the log")
    lines = log.read_text().splitlines()
    assert len(lines) >= 5
    for line in lines:
        millis, usage, item = line.split(",", 2)
        assert int(millis) > 0 and 0.0 <= float(usage) <= 1.0
        assert item.startswith("SimpleEvent(timestamp=") and ", sequence=" in item
