"""``jetspark`` on stream jobs: the measured DOT and the pipelined ``explain`` (in-process, no Spark), and
``run`` in a subprocess (its own JVM): ``--seconds`` stops the job with status 0, SIGINT cancels it with 130,
both after printing live results and status lines."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from dag.runtime.common.metrics import JobMetrics
from jetspark_cli.main import main
from jetspark_cli.streaming import is_stream_dag, measured_dot

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "examples")]

import trade_monitor  # noqa: E402

from tests.support.cli import LineReader, start_run, write_stream_job  # noqa: E402


@pytest.fixture()
def stream_file(tmp_path: Path) -> Path:
    """``job``: an endless counter source (paced) -> map -> list sink."""
    return write_stream_job(tmp_path / "cli_stream_job.py", '''
        from processors import map_p, write_list_p

        def job():
            dag = DAG()
            src = dag.new_vertex("counter", counter_source(), local_parallelism=1)
            tag = dag.new_vertex("tag", map_p(lambda n: f"item-{n}"))
            sink = dag.new_vertex("sink", write_list_p("cli-stream-out"))
            return dag.edge(between(src, tag)).edge(between(tag, sink))
    ''')


def test_measured_dot_when_metrics_given_then_every_edge_labelled_with_items_and_rate() -> None:
    dag = trade_monitor.build_dag("out")
    metrics = JobMetrics({("trade-source", 0, "emittedCount", 0): 1000, ("sliding-stage-1", 0, "emittedCount", 0): 40,
                          ("sliding-stage-1", 1, "emittedCount", 0): 60})
    dot = measured_dot(dag, metrics, 10.0)
    edges = [line for line in dot.splitlines() if " -> " in line]
    assert len(edges) == 4
    assert 'label="1,000 items, 100/s\\npartitioned"' in edges[0]
    assert 'label="100 items, 10/s\\ndistributed-partitioned"' in edges[1]
    assert 'label="0 items, 0/s"' in edges[2]


def test_explain_when_stream_job_then_pipelined_plan_without_spark(capsys: pytest.CaptureFixture[str]) -> None:
    assert is_stream_dag(trade_monitor.build_dag("out"))
    assert main(["explain", str(REPO / "examples" / "trade_monitor.py"), "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PIPELINED") and "task 1: trade-source#1" in out and "TCP" in out


@pytest.mark.spark
def test_run_stream_when_sigint_then_cancelled_with_status_130(stream_file: Path, tmp_path: Path) -> None:
    proc = start_run([str(stream_file)], tmp_path)
    out, err = LineReader(proc.stdout), LineReader(proc.stderr)
    try:
        out.wait_for(lambda lines: len(lines) >= 20, 180, "20 items on stdout")
        err.wait_for(lambda lines: any("sink" in line and "/s" in line for line in lines), 30, "a status line")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    out.thread.join(timeout=10)
    err.thread.join(timeout=10)
    numbers = [int(line.strip().removeprefix("item-")) for line in out.lines]  # ValueError on anything else
    assert len(numbers) >= 20 and len(set(numbers)) == len(numbers)
    assert "interrupted" in "".join(err.lines) and "snapshots off" in "".join(err.lines)


@pytest.mark.spark
def test_run_stream_when_seconds_then_stopped_with_status_0_and_measured_dot(stream_file: Path, tmp_path: Path) -> None:
    measured = tmp_path / "measured.dot"
    proc = start_run([str(stream_file), "--seconds", "4", "--measured", str(measured), "--guarantee", "at_least_once"],
                  tmp_path)
    try:
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 0, stderr[-3000:]
    assert "stopped after 4 s" in stderr and " restart(s)" in stderr  # the status line's snapshot part
    numbers = [int(item.removeprefix("item-")) for item in stdout.split()]
    assert numbers and len(set(numbers)) == len(numbers)
    dot = measured.read_text()
    assert '"counter" -> "tag" [label="' in dot and " items, " in dot
