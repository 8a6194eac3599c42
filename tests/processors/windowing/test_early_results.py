"""``processors.windowing.early_results`` without Spark: the open windows' early results computed from the frames
(tumbling and sliding, frames left unchanged) and the factory's checks."""

from __future__ import annotations

import doctest

import pytest

import processors.windowing.early_results
from dag.errors import DagValidationError
from processors import AggregateOperation, counting
from processors.windowing.early_results import (EarlyResultsSessionWindowP, EarlyResultsSlidingWindowP,
                                      early_session_window_p, early_sliding_window_p)
from processors.windowing.definitions import TimestampKind, sliding_win_policy


def _output(start, end, key, result):
    return (start, end, key, result)


def test_early_results_when_sliding_then_each_open_window_combines_its_frames_and_frames_stay():
    p = EarlyResultsSlidingWindowP((len,), (len,), TimestampKind.EVENT, sliding_win_policy(20, 10), counting(),
                                   _output, True, None, 100, _output)
    p.frames = {10: {"a": 1}, 20: {"a": 2, "b": 1}}
    frames_before = {ts: dict(f) for ts, f in p.frames.items()}
    assert p._early_results() == [(-10, 10, "a", 1), (0, 20, "a", 3), (0, 20, "b", 1), (10, 30, "a", 2),
                                  (10, 30, "b", 1)]
    assert p.frames == frames_before
    p.next_win_to_emit = 20  # the window ending at 10 was emitted as final: not early again
    assert [r[1] for r in p._early_results()] == [20, 20, 30, 30]


def test_early_results_when_sessions_open_then_each_reported_with_its_current_bounds():
    p = EarlyResultsSessionWindowP(10, (len,), (len,), counting(), _output, 100, _output)
    p.windows = {"a": [[1, 16, 2], [30, 40, 1]], "b": [[5, 15, 1]]}
    assert p._early_results() == [(1, 16, "a", 2), (30, 40, "a", 1), (5, 15, "b", 1)]
    assert p.windows["a"] == [[1, 16, 2], [30, 40, 1]]
    supplier = early_session_window_p(10, len, len, counting(), _output, 100, _output)
    assert supplier.processor_class is EarlyResultsSessionWindowP and "early results every 100 ms" in \
        supplier.description


def test_early_sliding_window_p_when_bad_arguments_then_refused():
    no_combine = AggregateOperation(lambda: [0], lambda acc, item: acc)
    with pytest.raises(DagValidationError, match="no combine_fn"):
        early_sliding_window_p((len,), (len,), sliding_win_policy(20, 10), no_combine, _output, 100, _output)
    with pytest.raises(DagValidationError, match="period_ms must be an int >= 1"):
        early_sliding_window_p((len,), (len,), sliding_win_policy(20, 10), counting(), _output, 0, _output)


def test_early_results_docstring_examples_hold():
    assert doctest.testmod(processors.windowing.early_results).failed == 0
