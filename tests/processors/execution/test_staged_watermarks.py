"""Watermarks in the staged driver (engine-free): ``drive`` hands them to ``try_process_watermark`` (never to
``process``), coalesced per upstream processor, and yields the processor's own watermarks on their own."""

from __future__ import annotations

import pytest

from processors import AbstractProcessor, Context, Watermark
from processors.execution.staged import drive
from processors.execution.staged_watermarks import DONE, InboundWatermarks, SenderWatermark, split_watermarks


class Recording(AbstractProcessor):
    """Records what reaches it; forwards items and watermarks."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def try_process_any(self, ordinal, item):
        self.calls.append(("item", ordinal, item))
        return self.try_emit(item)

    def try_process0(self, item):
        return self.try_process_any(0, item)

    def try_process_watermark(self, watermark):
        self.calls.append(("wm", watermark.timestamp))
        return self.try_emit(watermark)


def run(inbound, priorities, senders=None):
    p = Recording()
    out = list(drive(p, Context(), inbound=inbound, inbound_priorities=priorities, outbound_capacities=[100],
                     inbound_senders=senders))
    return p.calls, out


def test_drive_when_fused_watermark_then_after_earlier_items_and_never_an_item():
    calls, out = run([(0, [1, 2]), (0, Watermark(5)), (0, [3])], {0: 0})
    assert calls == [("item", 0, 1), ("item", 0, 2), ("wm", 5), ("item", 0, 3)]
    assert out == [(0, [1, 2]), (0, Watermark(5)), (0, [3])]  # the emitted watermark on its own


def test_drive_when_two_senders_then_watermark_is_their_minimum_and_done_releases_the_other():
    marks = [(0, SenderWatermark(7, 10)), (0, [1]), (0, SenderWatermark(9, 5)), (0, SenderWatermark(9, DONE)),
             (0, [2])]
    calls, _ = run(marks, {0: 0}, {0: [7, 9]})
    assert calls == [("item", 0, 1), ("wm", 5), ("wm", 10), ("item", 0, 2)]


def test_drive_when_a_sender_never_sends_then_watermark_released_when_the_edge_ends():
    calls, _ = run([(0, SenderWatermark(0, 10)), (0, [1])], {0: 0}, {0: [0, 1]})
    assert calls == [("item", 0, 1), ("wm", 10)]


def test_drive_when_two_edges_then_coalesced_over_edges():
    marks = [(0, Watermark(10)), (1, Watermark(4)), (1, Watermark(12))]
    calls, _ = run(marks, {0: 0, 1: 0})
    assert calls == [("wm", 4), ("wm", 10), ("wm", 12)]  # 12 once both edges ended (as pipelined)


def test_drive_when_unknown_sender_then_error_names_it():
    with pytest.raises(Exception, match="upstream processor #3"):
        run([(0, SenderWatermark(3, 10))], {0: 0}, {0: [0, 1]})


def test_split_watermarks_when_no_watermark_then_same_list():
    items = [1, 2]
    assert list(split_watermarks(2, items)) == [(2, items)] and list(split_watermarks(2, items))[0][1] is items


def test_inbound_watermarks_when_idle_sender_then_others_lead():
    inbound = InboundWatermarks({0: [0, 1]})
    assert inbound.observe(0, SenderWatermark(0, 2**63 - 1)) is None
    assert inbound.observe(0, SenderWatermark(1, 50)) == 50
