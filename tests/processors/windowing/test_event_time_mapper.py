"""EventTimeMapper (Jet's WatermarkSourceUtil / EventTimeMapper): per-partition watermarks, the idle-partition
rule, restore (V19-V23 and Jet 4's restore rule), with a manual clock."""

from __future__ import annotations

import pytest

from processors import (MIN_WATERMARK, EventTimeMapper, Watermark, emit_by_frame, limiting_lag, no_throttling,
                        no_watermarks, tumbling_win_policy, wm_gen_params)
from processors.api.clock import ManualClock, use_clock
from processors.windowing.event_time import IDLE_MESSAGE

IDLE = IDLE_MESSAGE
W = Watermark


def _mapper(idle_ms: int, partitions: int, emit=None) -> EventTimeMapper:
    return EventTimeMapper(wm_gen_params(lambda t: t, limiting_lag(3), emit or no_throttling(), idle_ms), partitions)


@pytest.fixture
def clock():
    with use_clock(ManualClock()) as c:
        yield c


def _at(clock: ManualClock, ms: int) -> None:
    clock.set_nanos(ms * 1_000_000)


def test_mapper_when_partitions_go_idle_then_idle_once_and_events_reactivate(clock):
    mapper = _mapper(5, 2)
    _at(clock, 1)
    assert mapper.handle_no_event() == []
    _at(clock, 5)
    assert mapper.handle_no_event() == [IDLE]
    assert mapper.handle_no_event() == []
    assert mapper.handle_event(100, 0) == [W(97), 100]
    assert mapper.handle_event(90, 0) == [90]
    assert mapper.handle_event(101, 0) == [W(98), 101]


def test_mapper_when_idle_disabled_then_watermark_is_minimum_over_partitions(clock):
    mapper = _mapper(-1, 2)
    assert mapper.handle_no_event() == []
    assert mapper.handle_event(10, 0) == [10]
    assert mapper.handle_event(11, 0) == [11]
    assert mapper.handle_event(10, 1) == [W(7), 10]
    assert mapper.handle_event(11, 1) == [W(8), 11]
    assert mapper.handle_event(12, 1) == [12]
    assert mapper.handle_event(13, 0) == [W(9), 13]


def test_mapper_when_zero_partitions_then_idle_once_even_with_idle_disabled(clock):
    mapper = _mapper(-1, 0)
    assert mapper.handle_no_event() == [IDLE]
    assert mapper.handle_no_event() == []
    mapper.increase_partition_count(1)
    assert mapper.handle_no_event() == []
    assert mapper.handle_event(10, 0) == [W(7), 10]


def test_mapper_when_single_partition_idles_and_resumes_then_idle_again_after_timeout(clock):
    mapper = _mapper(10, 1)
    assert mapper.handle_event(10, 0) == [W(7), 10]
    _at(clock, 10)
    assert mapper.handle_no_event() == [IDLE]
    assert mapper.handle_event(10, 0) == [10]
    assert mapper.handle_no_event() == []
    _at(clock, 20)
    assert mapper.handle_no_event() == [IDLE]


def test_mapper_when_all_partitions_become_idle_then_top_watermark_forwarded_before_idle(clock):
    mapper = _mapper(10, 2)
    assert mapper.handle_event(10, 0) == [10]
    _at(clock, 10)
    assert mapper.handle_no_event() == [W(7), IDLE]


def test_mapper_when_throttled_by_frame_then_frame_boundaries_only(clock):
    mapper = _mapper(-1, 1, emit_by_frame(tumbling_win_policy(10)))
    assert [mapper.handle_event(t, 0) for t in (14, 15, 24)] == [[W(10), 14], [15], [W(20), 24]]


def test_mapper_when_watermark_restored_then_never_below_and_next_emission_above_lowest(clock):
    mapper = _mapper(-1, 2)
    mapper.restore_watermark(0, 50)
    mapper.restore_watermark(1, 40)
    assert mapper.last_emitted_watermark == 40
    assert mapper.handle_event(30, 0) == [30]       # partition 0 stays at 50, partition 1 at 40
    assert mapper.handle_event(46, 1) == [W(43), 46]
    assert mapper.get_watermark(0) == 50


def test_mapper_when_partition_count_decreases_then_error():
    mapper = _mapper(-1, 2)
    with pytest.raises(ValueError, match="partition count must increase. Old count=2, new count=1"):
        mapper.increase_partition_count(1)


def test_mapper_when_timestamp_fn_returns_non_int_then_error_naming_source_and_item(clock):
    mapper = EventTimeMapper(wm_gen_params(lambda e: e["t"], limiting_lag(0), no_throttling()), 1, owner="src #0")
    with pytest.raises(Exception, match=r"src #0: timestamp_fn returned float 1.5 for item \{'t': 1.5\}"):
        mapper.handle_event({"t": 1.5}, 0)


def test_mapper_when_wrap_fn_and_native_timestamp_then_wrapped_with_that_timestamp(clock):
    params = wm_gen_params(lambda e: 0, limiting_lag(0), no_throttling(), -1, wrap_fn=lambda e, ts: (ts, e))
    mapper = EventTimeMapper(params, 1)
    assert mapper.handle_event("a", 0, timestamp=5) == [W(5), (5, "a")]


def test_no_watermarks_when_events_then_never_a_watermark(clock):
    mapper = EventTimeMapper(no_watermarks(), 1)
    assert [mapper.handle_event(t, 0) for t in (5, 10)] == [[5], [10]]
    clock.advance_ms(10**6)
    assert mapper.handle_no_event() == []
    assert mapper.last_emitted_watermark == MIN_WATERMARK


def test_wm_gen_params_when_bad_arguments_then_value_error_naming_argument():
    with pytest.raises(ValueError, match="timestamp_fn must be callable"):
        wm_gen_params(5, limiting_lag(0), no_throttling())
    with pytest.raises(ValueError, match="wm_emit_policy must be a WatermarkEmissionPolicy"):
        wm_gen_params(abs, limiting_lag(0), 3)
    with pytest.raises(ValueError, match="idle_timeout_ms must be an int"):
        wm_gen_params(abs, limiting_lag(0), no_throttling(), idle_timeout_ms=1.5)


def test_wm_gen_params_when_copied_with_emit_policy_then_only_that_changes():
    params = wm_gen_params(abs, limiting_lag(0), no_throttling(), 5)
    other = params.with_emit_policy(emit_by_frame(tumbling_win_policy(2)))
    assert (other.idle_timeout_ms, other.timestamp_fn, params.wm_emit_policy) == (5, abs, no_throttling())
    with pytest.raises(Exception):
        params.idle_timeout_ms = 3  # frozen
