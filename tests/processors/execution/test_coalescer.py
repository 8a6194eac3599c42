"""Jet's watermark coalescing vectors (jet-streaming.md 11.8, WatermarkCoalescerTest)."""

from __future__ import annotations

import pytest

from processors.execution.coalescer import IDLE, WatermarkCoalescer

MS = 10**6


def make():
    return WatermarkCoalescer(2, max_watermark_retain_ms=20)


def test_coalescer_v61_idle_input_ignored_then_history_forwards_top_after_retention():
    c = make()
    assert c.observe_wm(0, IDLE, 0) is None
    assert c.observe_wm(1, 11, 0) == 11
    assert c.observe_wm(0, 11, 0) is None
    assert c.observe_wm(1, 12, 0) is None
    assert c.observe_wm(0, 13, 0) == 12
    assert c.check_history(19 * MS) is None
    assert c.check_history(20 * MS) == 13


def test_coalescer_v64_forwards_minimum_strictly_increasing():
    c = make()
    assert [c.observe_wm(0, 100), c.observe_wm(1, 101), c.observe_wm(0, 101)] == [None, 100, 101]


def test_coalescer_v67_all_idle_then_idle_forwarded():
    c = make()
    assert c.observe_wm(0, IDLE) is None
    assert c.observe_wm(1, IDLE) == IDLE


def test_coalescer_v68_done_input_stops_holding_back():
    c = make()
    assert c.observe_wm(0, 100) is None
    assert c.queue_done(1) == 100


def test_coalescer_v70_duplicate_idle_is_legal():
    c = make()
    assert c.observe_wm(0, IDLE) is None
    assert c.observe_wm(0, IDLE) is None


def test_coalescer_v71_all_done_never_emits_max():
    c = make()
    assert c.queue_done(0) is None and c.queue_done(1) is None


def test_coalescer_v73_when_duplicate_done_or_decreasing_then_error():
    c = make()
    c.queue_done(0)
    with pytest.raises(ValueError, match="Duplicate"):
        c.queue_done(0)
    with pytest.raises(ValueError, match="not monotonically increasing"):
        c.observe_wm(0, 0)
    c.observe_wm(1, 10)
    with pytest.raises(ValueError, match="not monotonically increasing"):
        c.observe_wm(1, 9)


def test_coalescer_v75_all_idle_forwards_top_then_idle_from_history():
    c = make()
    assert c.observe_wm(0, 10) is None
    assert c.observe_wm(1, 11) == 10
    assert c.observe_wm(1, IDLE) is None
    assert c.observe_wm(0, IDLE) == 11
    assert c.check_history(0) == IDLE


def test_coalescer_v74_without_retention_history_never_forwards():
    c = WatermarkCoalescer(2)
    c.observe_wm(0, 100)
    assert c.check_history(10**12) is None
