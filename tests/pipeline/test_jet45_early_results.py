"""``WindowDefinition.set_early_results_period`` on Spark (issue 27): a tumbling or sliding window emits the
current results of its open windows while they are open (``is_early`` True), then its final results
(``is_early`` False), an early result never above its window's final one; session windows refuse it."""

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
    windowed.aggregate(counting()).write_to(Sinks.list(out))
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


def test_session_window_when_early_results_period_set_then_refused_at_build(engine) -> None:
    p = Pipeline.create()
    stage = p.read_from(TestSources.item_stream(10)).with_native_timestamps(0)
    with pytest.raises(ValueError, match="not on session windows"):
        stage.window(WindowDefinition.session(100).set_early_results_period(10)).aggregate(counting())
    with pytest.raises(ValueError, match="int >= 0"):
        WindowDefinition.tumbling(10).set_early_results_period(-1)
