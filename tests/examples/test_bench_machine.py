"""``bench_machine.py --paced``: the queue of fixed work that gives the machine's latency floor at a load."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def bench_machine(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import bench_machine

    yield bench_machine
    sys.modules.pop("bench_machine", None)


def test_paced_queue_when_lightly_loaded_then_every_item_after_the_warmup_is_measured_promptly(bench_machine):
    latencies, busy = bench_machine.queue_run(2_000, seconds=0.3, warmup=0.1, sleep=False)
    assert len(latencies) == 600  # items 200..799 of 800: due at 0.1 s and after
    assert min(latencies) >= 0
    assert sorted(latencies)[len(latencies) // 2] < 100_000  # the median item waits far less than 100 ms
    assert 0 < busy < 1


def test_paced_queue_when_sleeping_while_idle_then_measures_the_same_items(bench_machine):
    latencies, _ = bench_machine.queue_run(2_000, seconds=0.3, warmup=0.1, sleep=True)
    assert len(latencies) == 600


def test_unpaced_queue_then_takes_items_in_full_rounds_and_stays_busy(bench_machine):
    latencies, busy = bench_machine.queue_run(None, seconds=0.2, warmup=0.05, sleep=False)
    assert len(latencies) >= bench_machine.BATCH
    assert busy > 0.5


def test_speed_probe_times_its_loop_on_every_cpu(bench_machine):
    import time

    with bench_machine.SpeedProbe() as probe:
        time.sleep(0.5)  # 25 probe periods; one timing per CPU is all the test needs
    assert sorted(probe.samples) == probe.cpus
    assert all(len(rows) >= 1 for rows in probe.samples.values())
    assert all(us > 0 for us in probe.loop_us().values())


def test_off_windows_counts_the_windows_where_some_cpu_ran_slower_or_faster_than_its_reference(bench_machine):
    probe = bench_machine.SpeedProbe()
    ms = 1_000_000
    # CPU 0 at 100 us throughout; CPU 1 at 100 us in the first window, 200 us in the second, 120 us in the third,
    # 50 us in the fourth
    probe.samples = {0: [(t * 20 * ms, 100_000) for t in range(20)],
                     1: [(t * 20 * ms, (100_000, 200_000, 120_000, 50_000)[t // 5]) for t in range(20)]}
    assert probe.loop_us() == {0: 100.0, 1: 120.0}
    assert probe.off_windows({0: 100.0, 1: 100.0}) == pytest.approx(2 / 4)
    assert probe.off_windows({0: 100.0, 1: 100.0}, factor=1.1) == pytest.approx(3 / 4)
