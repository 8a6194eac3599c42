"""examples/session_windows.py: sessionize (the plain-Python reference), the DAG, and a short real run on the
pipelined runtime whose sessions are checked against the plain-Python sessions of the clicks actually made."""

from __future__ import annotations

import sys
import threading
import uuid
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "examples")]

import session_windows as sw  # noqa: E402

from processors import Watermark, verify_processor  # noqa: E402
from tests.support import running, wait_for  # noqa: E402


def test_sessionize_when_gap_exceeds_timeout_then_new_session() -> None:
    clicks = [("a", 0, "/"), ("b", 10, "/x"), ("a", 500, "/y"), ("a", 1001, "/"), ("b", 700, "/")]
    assert sw.sessionize(clicks, 500) == [
        ("a", 0, 1000, 2, frozenset({"/", "/y"})), ("a", 1001, 1501, 1, frozenset({"/"})),
        ("b", 10, 510, 1, frozenset({"/x"})), ("b", 700, 1200, 1, frozenset({"/"}))]


def test_session_processor_when_fed_clicks_then_same_as_sessionize() -> None:
    clicks = [("a", 0, "/"), ("b", 10, "/x"), ("a", 500, "/y"), ("b", 700, "/"), ("a", 1001, "/")]
    results = []
    verify_processor(sw.build_dag().get_vertex("sessions").supplier).disable_snapshots() \
        .input(clicks + [Watermark(10_000)]) \
        .assert_output(1, lambda mode, out: results.append([r for r in out[0] if not isinstance(r, Watermark)]))
    assert sorted(map(sw.as_tuple, results[0])) == sw.sessionize(clicks)


@pytest.mark.spark
def test_session_windows_when_run_then_sessions_match_plain_python(engine) -> None:
    map_name, list_name = f"clicks-{uuid.uuid4().hex}", f"sessions-{uuid.uuid4().hex}"
    generator = sw.ClickGenerator(engine.get_map(map_name), users=3, seed=11)
    sessions = engine.get_list(list_name)
    with running(engine, sw.build_dag(map_name, list_name)) as job, generator:
        wait_for(lambda: job.metrics().total("click-source", "emittedCount") > 0, 180, "the source to emit")
        clicks = generator.generated
        # emittedCount may count a watermark before the first click: the list can still be empty here
        wait_for(lambda: len(clicks) > 1 and sw.click_time(clicks[-1]) - sw.click_time(clicks[0]) >= 4000, 60,
                 lambda: f"clicks spanning 4 s ({len(clicks)} so far)")
        generator.stop()
        expected = sw.sessionize(generator.generated)
        top = max(sw.click_time(c) for c in generator.generated)
        # the clicks stop: after the idle timeout the source forwards its top watermark, top - LAG_MS
        must_have = {s for s in expected if s[2] < top - sw.LAG_MS - 10}
        assert must_have
        wait_for(lambda: must_have <= set(map(sw.as_tuple, list(sessions))), 60, "the closed sessions")
    emitted = [sw.as_tuple(r) for r in sessions]
    assert len(emitted) == len(set(emitted)), "a session was emitted twice"
    assert set(emitted) <= set(expected)
    assert not [t for t in threading.enumerate() if t.name == "click-generator"]
