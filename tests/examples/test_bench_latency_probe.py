"""The wake probe of ``bench_streaming.py --probe`` and its report (``bench/latency_curve.py``), without Spark."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.support import wait_for

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH.parent / "examples"))
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_streaming
    import latency_curve

    yield bench_streaming, latency_curve
    sys.modules.pop("bench_streaming", None)
    sys.modules.pop("latency_curve", None)


def test_wake_probe_when_running_then_records_how_late_each_sleep_woke(bench):
    bench_streaming, _ = bench
    probe = bench_streaming.WakeProbe()
    try:
        wait_for(lambda: len(probe.late) >= 20, 10, "20 sleeps of the probe")
    finally:
        probe.stopped.set()
    assert len(probe.when) >= len(probe.late) - 1  # the last pair may be half written when read
    assert all(late >= -1000 for late in probe.late)  # a sleep never ends much before its millisecond
    assert probe.when[0] <= time.time_ns()


def test_probe_report_when_items_waited_with_the_probe_then_worst_windows_pair_them(bench):
    _, latency_curve = bench
    window = 100_000_000
    arrivals = [(k * window + 1, 1000 * (50 if k == 3 else 2)) for k in range(10)]  # window 3: 50 ms items
    probe = [(k * window + 5, 1000 * (20 if k == 3 else 1)) for k in range(10)]  # ... and a 20 ms probe wait
    report = latency_curve.probe_report(probe, arrivals, worst=2)
    assert "max 20.00 ms" in report
    assert "item latency / longest probe wait (ms): 50/20.0, 2/1.0" in report
    assert "the median window's longest probe wait: 1.0 ms" in report


def test_curve_row_when_the_speed_probe_ran_beside_the_point_then_shows_it_in_its_column(bench):
    bench_streaming, latency_curve = bench
    speed = bench_streaming.format_speed({1: 80.2, 0: 122.4}, 0.37)
    assert speed == "122 / 80 us (37%)"
    point = latency_curve.CurvePoint(offered=700_000, delivered=690_000.0, per_hop=(1.0, 60.0, 70.0),
                                     parts_p99={"pacing": 100.0}, gc=(4, 5.0, 1.0), floor=(0.01, 3.0, 5.0),
                                     load=1.5, bare_loop=(0.0, 2.0, 5.0), speed=speed)
    header, rule, row = latency_curve.format_curve([point]).splitlines()
    assert header.count("|") == rule.count("|") == row.count("|")
    assert row.endswith("| 0.00 / 2.00 / 5.00 | 122 / 80 us (37%) | 1.5 |")


class _Inbox:
    def __init__(self, items):
        self.items = items

    def drain_to(self, target):
        target.extend(self.items)
        self.items = []


class _Outbox:
    def __init__(self):
        self.offered = []

    def offer(self, item):
        self.offered.append(item)
        return True


def test_latency_processor_when_measurements_span_several_arrays_then_joins_them_in_order(bench, monkeypatch):
    """The measuring processor keeps its columns in arrays of at most CHUNK items (one array grown by millions
    is copied whole as it grows, which stalled the measured pipeline) and joins them at the end."""
    bench_streaming, _ = bench
    monkeypatch.setattr(bench_streaming, "CHUNK", 3)
    latency = bench_streaming.Latency()
    outbox = _Outbox()
    latency.init(outbox, None)
    try:
        now = time.time_ns()
        for i in range(4):  # 4 calls of 2 items: arrays of 4, 4 (a call fills past CHUNK, the next starts anew)
            latency.process(0, _Inbox([(now - 5000 * (2 * i + j), 2 * i + j, latency.pid, now, now)
                                       for j in range(2)]))
        assert len(latency.chunks["due"]) == 2
        assert latency.complete()
    finally:
        latency.close()
    result = outbox.offered[0]
    assert list(result["due"]) == [now - 5000 * k for k in range(8)]
    assert list(result["remote"]) == [0] * 8 and all(total >= 5 * k for k, total in enumerate(result["total"]))
