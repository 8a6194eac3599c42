"""insert_watermarks_p: Jet's InsertWatermarksPTest vectors (V24-V37), run by verify_processor in every mode
(snapshot/restore cycles included)."""

from __future__ import annotations

import pytest

from processors import (Watermark, emit_by_frame, emit_by_min_step, insert_watermarks_p, limiting_lag,
                        limiting_timestamp_and_wall_clock_lag, no_throttling, tumbling_win_policy, verify_processor,
                        wm_gen_params)
from processors.api.clock import ManualClock, use_clock
from processors.api.context import Context
from processors.windowing.event_time import IDLE_MESSAGE
from processors.api.outbox import Outbox

W = Watermark


def _params(policy=None, emit=None, idle=-1):
    return wm_gen_params(lambda t: t, policy or limiting_lag(3), emit or no_throttling(), idle)


@pytest.mark.parametrize("params, items, expected", [
    (_params(), [10, 10], [W(7), 10, 10]),
    (_params(), [10, 11], [W(7), 10, W(8), 11]),
    (_params(), [11, 10], [W(8), 11, 10]),
    (_params(), [11, 7], [W(8), 11, 7]),
    (_params(), [10, 13], [W(7), 10, W(10), 13]),
    (_params(limiting_lag(0)), [10, 13], [W(10), 10, W(13), 13]),
    (_params(emit=emit_by_frame(tumbling_win_policy(2))), [10, 11, 12, 13], [W(6), 10, W(8), 11, 12, W(10), 13]),
    (_params(emit=emit_by_frame(tumbling_win_policy(2))), [11, 12, 13, 14], [W(8), 11, 12, W(10), 13, 14]),
    (_params(emit=emit_by_frame(tumbling_win_policy(10))), [14, 15, 24], [W(10), 14, 15, W(20), 24]),
    (_params(emit=emit_by_frame(tumbling_win_policy(2))), [11, 15], [W(8), 11, W(12), 15]),
    (_params(emit=emit_by_min_step(2)), [11, 12, 13, 14], [W(8), 11, 12, W(10), 13, 14]),
    (_params(emit=emit_by_min_step(2)), [10, 15, 20], [W(7), 10, W(12), 15, W(17), 20]),
], ids=[f"V{n}" for n in range(24, 36)])
def test_insert_watermarks_when_items_then_watermark_before_the_item_raising_it(params, items, expected):
    verify_processor(insert_watermarks_p(params)).disable_complete_call().input(items).expect_output(expected)


def test_insert_watermarks_when_first_item_late_by_wall_clock_then_not_dropped():
    with use_clock(ManualClock(wall_millis=100)):
        params = _params(limiting_timestamp_and_wall_clock_lag(0, 0))
        verify_processor(insert_watermarks_p(params)).input([99]).expect_output([W(100), 99])


def test_insert_watermarks_when_upstream_watermark_then_forwarded():
    verify_processor(insert_watermarks_p(_params())).input([10, W(20)]).expect_output([W(7), 10, W(20)])


def test_insert_watermarks_when_no_items_for_idle_timeout_then_try_process_emits_idle_once():
    clock = ManualClock()
    with use_clock(clock):
        processor = insert_watermarks_p(_params(idle=100))()
        outbox = Outbox([1])
        processor.init(outbox, Context(vertex_name="wm"))
        assert processor.try_process0(10) is False  # outbox of 1 takes W(7) only
        assert outbox.drain(0) == [W(7)]
        outbox.reset()
        assert processor.try_process0(10) is True and outbox.drain(0) == [10]
        for ms in range(0, 100, 10):
            clock.set_nanos(ms * 1_000_000)
            assert processor.try_process() is True and outbox.drain(0) == []
        clock.set_nanos(100 * 1_000_000)
        assert processor.try_process() is True and outbox.drain(0) == [IDLE_MESSAGE]
        assert processor.try_process() is True and outbox.drain(0) == []


def test_insert_watermarks_when_restored_from_several_instances_then_lowest_watermark():
    from processors.windowing.definitions import broadcast_key
    processor = insert_watermarks_p(_params())()
    outbox = Outbox([8])
    processor.init(outbox, Context())
    from processors.api.inbox import Inbox
    processor.restore_from_snapshot(Inbox([(broadcast_key("LAST_EMITTED_WM"), 20),
                                           (broadcast_key("LAST_EMITTED_WM"), 12)]))
    assert processor.finish_snapshot_restore()
    assert processor.try_process0(14) and outbox.drain(0) == [14]     # W(11) is not above 12
    assert processor.try_process0(16) and outbox.drain(0) == [W(13), 16]


def test_insert_watermarks_when_not_given_params_then_error():
    with pytest.raises(ValueError, match="expected the result of wm_gen_params"):
        insert_watermarks_p(limiting_lag(3))
