"""examples/trade_monitor.py (manual 8.2.2): the DAG's shape, a short real run on the pipelined runtime whose
window lines are checked against the trades the generator actually made, and EXACTLY_ONCE runs on one and two
members that survive a RestartableError and a killed Python worker with every window line published once."""

from __future__ import annotations

import os
import signal
import sys
import threading
import uuid
from collections import Counter
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "examples")]

import trade_monitor as tm  # noqa: E402

from dag import RestartableError  # noqa: E402
from edges import RoutingPolicy  # noqa: E402
from processors.io.text_streams import is_stream_source  # noqa: E402
from tests.support import running, wait_for  # noqa: E402


def expected_windows(trades: list[tuple], window_ms: int, slide_ms: int) -> dict[tuple[int, str], int]:
    """(window end, ticker) -> trades in [end - window_ms, end), for every window holding a trade."""
    counts: Counter = Counter()
    for ticker, ts, _, _ in trades:
        first_end = (ts // slide_ms + 1) * slide_ms
        for end in range(first_end, ts + window_ms + 1, slide_ms):
            if end - window_ms <= ts < end:
                counts[end, ticker] += 1
    return dict(counts)


def windows_to_expect(generated: list[tuple]) -> tuple[int, dict, set]:
    """For the trades ``generated``: the top trade time, each window line's count by ``(time, ticker)``, and the
    lines that must be out once the source, idle, forwarded its top watermark (top - ``LAG_MS``)."""
    top = max(ts for _, ts, _, _ in generated)
    expected = expected_windows(generated, tm.WINDOW_MS, tm.SLIDE_MS)
    fmt = tm.TimeFormatter()
    by_line_key = {(fmt(end), ticker): count for (end, ticker), count in expected.items()}
    must_have = {(fmt(end), t) for (end, t) in expected if end <= top - tm.LAG_MS - tm.SLIDE_MS}
    assert must_have
    return top, by_line_key, must_have


def emitted(output) -> list[tuple[str, str, int]]:
    """The window lines published so far in ``output`` as ``(time, ticker, count)``."""
    return [(w[0], w[1], int(w[2])) for w in map(str.split, tm.read_output(output))]


def assert_each_window_once_with_its_count(lines: list[tuple], by_line_key: dict) -> None:
    """Every ``(time, ticker, count)`` line appears once and carries the count the generated trades give."""
    assert len(lines) == len({(t, k) for t, k, _ in lines}), "a window line was emitted twice"
    wrong = [(t, k, n, by_line_key.get((t, k))) for t, k, n in lines if by_line_key.get((t, k)) != n]
    assert wrong == []


def test_trade_monitor_dag_is_the_manuals() -> None:
    dag = tm.build_dag("out")
    assert [v.name for v in dag] == ["trade-source", "sliding-stage-1", "sliding-stage-2", "format-output", "sink"]
    assert is_stream_source(dag.get_vertex("trade-source").meta_supplier)
    to_stage1, = dag.get_inbound_edges("sliding-stage-1")
    to_stage2, = dag.get_inbound_edges("sliding-stage-2")
    assert to_stage1.routing_policy is RoutingPolicy.PARTITIONED and not to_stage1.is_distributed
    assert to_stage2.routing_policy is RoutingPolicy.PARTITIONED and to_stage2.is_distributed


def test_trade_monitor_line_has_the_manuals_format() -> None:
    from processors import TimestampedEntry

    formatter = tm.TimeFormatter()
    line = tm.format_window(formatter, TimestampedEntry(1_700_000_000_123, "AAPL", 7))
    assert line == f"{formatter(1_700_000_000_123)}  AAPL    7" and line[8:12] == ".123"


@pytest.mark.spark
def test_trade_monitor_when_run_then_window_counts_match_the_generated_trades(engine, tmp_path) -> None:
    map_name = f"trades-{uuid.uuid4().hex}"
    tickers = ("AAPL", "GOOG", "MSFT", "SAP")
    generator = tm.TradeGenerator(engine.get_map(map_name), rate=200, tickers=tickers, seed=7)
    with running(engine, tm.build_dag(tmp_path, map_name=map_name)) as job, generator:
        wait_for(lambda: job.metrics().total("trade-source", "emittedCount") > 0, 180, "the source to emit")
        trades = generator.generated  # the watermark (top timestamp - 3 s) must pass a few windows
        wait_for(lambda: trades[-1][1] - trades[0][1] >= tm.LAG_MS + 2500, 60,
                 lambda: f"trades spanning the lag and a few windows ({len(trades)} so far)")
        generator.stop()
        # once the generator stops, the source goes idle after 3 s and forwards its top watermark
        top, by_line_key, must_have = windows_to_expect(generator.generated)
        wait_for(lambda: must_have <= {(t, k) for t, k, _ in emitted(tmp_path)}, 60,
                 "the windows before the watermark")

        def forwarded() -> int:  # lastForwardedWm, refreshed by the tasks' status polls
            return job.metrics().watermark("sliding-stage-2") or 0

        wait_for(lambda: forwarded() >= top - tm.LAG_MS - 2 * tm.SLIDE_MS, 30, "the watermark metric")
        assert forwarded() <= top - tm.LAG_MS
    lines = emitted(tmp_path)
    assert_each_window_once_with_its_count(lines, by_line_key)
    assert sum(n for _, _, n in lines) >= len(generator.generated)  # each trade counted in about 10 windows
    assert not [t for t in threading.enumerate() if t.name == "trade-generator"]


class Faults:
    """``line -> line`` in format-output: once output was published, raises a ``RestartableError`` (once); once
    more output was published after that, kills its Python worker (once). Marker files decide across processes."""

    def __init__(self, markers: Path, output: Path):
        self.markers, self.output = markers, output

    def _published_after(self, since: float) -> bool:
        return self.output.is_dir() and any(
            f.is_file() and not f.name.startswith(".") and f.stat().st_mtime > since for f in self.output.iterdir())

    def _first(self, name: str) -> bool:
        try:
            os.close(os.open(self.markers / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def __call__(self, line: str) -> str:
        error = self.markers / "error"
        if not error.exists():
            if self._published_after(0.0) and self._first("error"):
                raise RestartableError(f"injected before {line!r}")
        elif not (self.markers / "kill").exists() and self._published_after(error.stat().st_mtime):
            if self._first("kill"):
                os.kill(os.getpid(), signal.SIGKILL)
        return line


@pytest.fixture(params=[1, 2], ids=["members1", "members2"])
def engine_with_members(request, engine):
    """The shared engine (one member) or an engine with two members on the same session."""
    from dag import Engine, EngineConfig

    return engine if request.param == 1 else Engine(EngineConfig(members=2), spark=engine.spark)


@pytest.mark.spark
def test_trade_monitor_when_error_and_killed_worker_injected_then_every_window_line_exactly_once(
        engine_with_members, tmp_path) -> None:
    map_name = f"trades-{uuid.uuid4().hex}"
    out, markers = tmp_path / "out", tmp_path / "markers"
    markers.mkdir()
    engine = engine_with_members
    dag = tm.build_dag(out, map_name=map_name, exactly_once=True, line_fn=Faults(markers, out))
    generator = tm.TradeGenerator(engine.get_map(map_name), rate=200, tickers=("AAPL", "GOOG", "MSFT"), seed=11)
    with running(engine, dag, tm.exactly_once_config()) as job, generator:
        def restarted_twice() -> bool:
            if job.status.is_terminal:
                try:
                    job.join(timeout=5)
                except Exception as exc:  # noqa: BLE001 - the job's own failure names the cause
                    raise AssertionError(f"the job ended: {job.status}: {exc}") from exc
                raise AssertionError(f"the job ended: {job.status}")
            return (markers / "kill").exists() and job.metrics().restarts == 2

        wait_for(restarted_twice, 240, "both faults and restarts")
        before = len(generator.generated)
        wait_for(lambda: len(generator.generated) >= before + 200, 60, "trades after the second restart")
        generator.stop()
        _, by_line_key, must_have = windows_to_expect(generator.generated)
        # the idle source forwards its top watermark; the windows before it are published with a snapshot
        wait_for(lambda: must_have <= {(t, k) for t, k, _ in emitted(out)}, 90, "the windows before the watermark")
    lines = emitted(out)
    assert_each_window_once_with_its_count(lines, by_line_key)  # no trade lost or counted twice in any window
    assert job.metrics().restarts == 2
