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
