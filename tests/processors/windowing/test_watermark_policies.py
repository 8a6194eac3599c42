"""Watermark and emission policies: Jet's WatermarkPolicies_* and WatermarkEmissionPolicyTest vectors (V6-V18),
time driven through processors.api.clock."""

from __future__ import annotations

import pickle

import pytest

from processors import (MIN_WATERMARK, emit_by_frame, emit_by_min_step, limiting_lag, limiting_lag_and_delay,
                        limiting_lag_and_lull, limiting_timestamp_and_wall_clock_lag, no_throttling,
                        tumbling_win_policy)
from processors.api.clock import ManualClock, use_clock
from processors.windowing.watermark_policies import _LimitingLagAndDelay

MIN = MIN_WATERMARK


def test_limiting_lag_when_events_out_of_order_then_trails_highest_by_lag():
    policy = limiting_lag(10)()
    for i in range(10):
        assert policy.report_event(i) == i - 10
        assert policy.report_event(i - 1) == i - 10
        assert policy.report_event(i - 2) == i - 10


def test_limiting_lag_when_no_more_events_then_current_stays():
    policy = limiting_lag(10)()
    policy.report_event(10)
    assert [policy.get_current_watermark() for _ in range(10)] == [0] * 10
    assert [limiting_lag(10)().get_current_watermark() for _ in range(3)] == [MIN] * 3


def test_limiting_lag_when_timestamp_near_min_then_min_returned_without_overflow():
    policy = limiting_lag(10)()
    assert policy.report_event(MIN + 5) == MIN
    assert policy.report_event(MIN + 15) == MIN + 5


def test_limiting_lag_and_delay_when_clock_still_then_lag_rules():
    clock = ManualClock()
    with use_clock(clock):
        policy = _LimitingLagAndDelay(8, 8, 8)
        for ts, expected in [(10, 2), (9, 2), (8, 2), (7, 2), (11, 3)]:
            assert policy.report_event(ts) == expected
            assert policy.get_current_watermark() == expected


def test_limiting_lag_and_delay_when_time_passes_then_reaches_seen_timestamps_after_max_delay():
    clock = ManualClock()
    with use_clock(clock):
        policy = _LimitingLagAndDelay(8, 8, 8)
        for t, ts, expected in [(0, 10, 2), (1, 11, 3), (2, 12, 4), (3, 13, 5)]:
            clock.set_nanos(t)
            assert policy.report_event(ts) == expected
        results = []
        for t in (4, 8, 9, 10, 11):
            clock.set_nanos(t)
            results.append(policy.get_current_watermark())
        assert results == [5, 10, 11, 12, 13]


def test_limiting_lag_and_lull_when_events_then_lag_rules():
    with use_clock(ManualClock()):
        policy = limiting_lag_and_lull(2, 3)()
        assert [policy.report_event(ts) for ts in (10, 9, 8, 7, 11)] == [8, 8, 8, 8, 9]


def test_limiting_lag_and_lull_when_lull_longer_than_max_then_advances_with_clock():
    clock = ManualClock()
    with use_clock(clock):
        policy = limiting_lag_and_lull(2, 3)()
        assert policy.report_event(12) == 10
        results = []
        for ms in range(11):
            clock.set_nanos(ms * 1_000_000 + 999_999 * (ms % 2))  # ns truncated to ms
            results.append(policy.get_current_watermark())
        assert results == [10, 10, 10] + [10 + ms - 3 for ms in range(3, 11)]


def test_limiting_lag_and_lull_when_never_an_event_then_min_forever():
    clock = ManualClock()
    with use_clock(clock):
        policy = limiting_lag_and_lull(2, 3)()
        for _ in range(11):
            assert policy.get_current_watermark() == MIN
            clock.advance_ms(1)


def test_wall_clock_lag_when_clock_far_behind_then_timestamp_lag_rules():
    with use_clock(ManualClock(wall_millis=-1_000_000)):
        policy = limiting_timestamp_and_wall_clock_lag(3, 10)()
        assert [policy.report_event(ts) for ts in (10, 9, 8, 7, 11)] == [7, 7, 7, 7, 8]


def test_wall_clock_lag_when_clock_ahead_then_wall_clock_rules_for_events_and_no_events():
    clock = ManualClock()
    with use_clock(clock):
        policy = limiting_timestamp_and_wall_clock_lag(3, 10)()
        idle = limiting_timestamp_and_wall_clock_lag(3, 10)()
        for t in range(100, 110):
            clock.set_wall_millis(t)
            assert policy.report_event(0) == t - 10
            assert idle.get_current_watermark() == t - 10


@pytest.mark.parametrize("call, message", [
    (lambda: limiting_lag(-1), "lag must not be negative"),
    (lambda: limiting_lag_and_lull(-1, 3), "lag must not be negative"),
    (lambda: limiting_lag_and_lull(1, -3), "max_lull_ms must not be negative"),
    (lambda: limiting_timestamp_and_wall_clock_lag(-1, 0), "timestamp_lag must not be negative"),
    (lambda: limiting_timestamp_and_wall_clock_lag(0, -1), "wall_clock_lag must not be negative"),
    (lambda: limiting_lag_and_delay(1, 0), "max_delay_ms must be >= 1"),
    (lambda: emit_by_min_step(0), "min_step must be an int > 0"),
    (lambda: emit_by_frame(10), "win_policy must be a SlidingWindowPolicy"),
])
def test_policy_factories_when_bad_arguments_then_value_error_naming_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _throttle(policy, currents):
    last, out = MIN, []
    for current in currents:
        last = policy.throttle_wm(current, last)
        out.append(last)
    return out


def test_emit_by_min_step_when_throttling_then_as_jet():
    assert _throttle(emit_by_min_step(2), [2, 3, 4, 6, 9, 10, 11]) == [2, 2, 4, 6, 9, 9, 11]


def test_emit_by_frame_when_throttling_then_frame_boundaries_as_jet():
    assert _throttle(emit_by_frame(tumbling_win_policy(3)), [MIN, 2, 3, 4, 5, 6, 13, 14, 15]) == \
        [MIN, 0, 3, 3, 3, 6, 12, 12, 15]


def test_no_throttling_when_throttling_then_current():
    assert _throttle(no_throttling(), [1, 5, 7]) == [1, 5, 7]


def test_policy_factories_when_pickled_then_make_fresh_policies():
    factory = pickle.loads(pickle.dumps(limiting_lag(3)))
    first, second = factory(), factory()
    first.report_event(10)
    assert (first.get_current_watermark(), second.get_current_watermark()) == (7, MIN)
    assert pickle.loads(pickle.dumps(emit_by_min_step(2))) == emit_by_min_step(2)
