"""``WindowDefinition.set_early_results_period`` on Spark (issue 27): tumbling, sliding and session windows emit
the current results of their open windows while they are open (``is_early`` True), then their final results
(``is_early`` False), an early result never above its window's final one."""

from __future__ import annotations

import pytest

from pipeline import Pipeline, Sinks, TestSources, WindowDefinition
from processors import counting
from tests.support import running, unique, wait_for

pytestmark = pytest.mark.spark


def _finals(results: list) -> list:
    return [r for r in results if not r.is_early]


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "un-keyed"])
def test_tumbling_window_when_early_results_period_set_then_early_results_before_final_ones(engine, keyed) -> None:
    out = unique("early")
    p = Pipeline.create()
    stage = p.read_from(TestSources.item_stream(40)).with_native_timestamps(0)
    windowed = (stage.grouping_key(lambda e: e.sequence % 2) if keyed else stage) \
        .window(WindowDefinition.tumbling(1000).set_early_results_period(100))
    # one sink processor: the list's order is then the window processor's emission order (with two, an early
    # result and its window's final one may take different sink processors and reach the list in either order)
    windowed.aggregate(counting()).write_to(Sinks.list(out)).set_local_parallelism(1)
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(_finals(list(engine.get_list(out)))) >= 4, 120, "final results of several windows")
    results = list(engine.get_list(out))
    engine.get_list(out).clear()
    assert {type(r).__name__ for r in results} == (
        {"TimestampedEntry", "EarlyTimestampedEntry"} if keyed else {"TimestampedItem", "EarlyTimestampedItem"})
    value = (lambda r: r.value) if keyed else (lambda r: r.item)
    ident = (lambda r: (r.timestamp, r.key)) if keyed else (lambda r: r.timestamp)
    finals = {ident(r): (i, value(r)) for i, r in enumerate(results) if not r.is_early}
    early = [(i, r) for i, r in enumerate(results) if r.is_early]
    assert any(ident(r) in finals for _, r in early)  # windows reported early that then closed
    for i, r in early:
        if ident(r) in finals:
            position, final = finals[ident(r)]
            assert i < position and 0 < value(r) <= final  # early: before, and never above, the final count


def test_sliding_window_when_early_results_then_early_counts_cover_the_window(engine) -> None:
    out = unique("early-sliding")
    p = Pipeline.create()
    (p.read_from(TestSources.item_stream(40)).with_native_timestamps(0)
     .window(WindowDefinition.sliding(1000, 500).set_early_results_period(100))
     .aggregate(counting()).write_to(Sinks.list(out)))
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(_finals(list(engine.get_list(out)))) >= 3, 120, "final results of several windows")
    results = list(engine.get_list(out))
    engine.get_list(out).clear()
    finals = {r.timestamp: r.item for r in results if not r.is_early}
    early = [r for r in results if r.is_early and r.timestamp in finals]
    assert early and all(0 < r.item <= finals[r.timestamp] for r in early)


def test_session_window_when_early_results_then_open_sessions_reported_early(engine) -> None:
    out = unique("early-session")
    p = Pipeline.create()
    (p.read_from(TestSources.item_stream(40)).with_native_timestamps(0)
     .filter(lambda e: e.sequence % 20 < 10)  # bursts of 10 events (0.25 s), then 0.25 s of quiet
     .grouping_key(lambda e: 0)
     .window(WindowDefinition.session(100).set_early_results_period(50))
     .aggregate(counting()).write_to(Sinks.list(out)))
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(_finals(list(engine.get_list(out)))) >= 3, 120, "several closed sessions")
    results = list(engine.get_list(out))
    engine.get_list(out).clear()
    assert {type(r).__name__ for r in results} == {"WindowResult", "EarlyWindowResult"}
    finals = [r for r in results if not r.is_early]
    assert all(r.value == 10 for r in finals[1:])  # every burst after the first is one whole session
    early = [r for r in results if r.is_early]
    assert early and all(0 < r.value <= 10 for r in early)  # sessions reported while still open


def test_set_early_results_period_when_negative_then_refused() -> None:
    with pytest.raises(ValueError, match="int >= 0"):
        WindowDefinition.tumbling(10).set_early_results_period(-1)
    assert WindowDefinition.tumbling(10).set_early_results_period(0).early_results_period is None
