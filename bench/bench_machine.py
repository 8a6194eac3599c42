"""How steady this machine's own CPU is: a fixed piece of pure-Python work timed in short windows, no Spark.

Every figure in ``bench/`` that compares two runs (a ratio to hand-tuned PySpark, a latency percentile at 80% of
a maximum measured a minute earlier) assumes that the machine does the same work in the same time from one
second to the next. This script measures that assumption: ``--procs`` processes each count how many rounds of a
fixed loop they finish in every ``--window`` seconds for ``--seconds`` seconds, and the script prints, over all
windows, the rate's minimum, median and maximum as fractions of the median, and the share of windows below 80%
of the median (in such a window a pipeline paced at 80% of its maximum has no spare capacity left and falls
behind). One process shows what the machine lends a single thread; two processes (one per core on a 2-core
machine) what it lends a whole ``local[2]`` job.

``--paced 50,70,80`` measures what that unsteadiness does to latency, with no engine, no I/O and no garbage:
**the machine's floor at a given load.** Each of ``--procs`` processes (the largest count given) runs a queue of
fixed work items (:data:`ITEM` loop iterations each) the way jetspark's task scheduler runs its rounds:

- first unpaced, three times (each process takes items as fast as it finishes them), giving the loop's maximum
  (the median of the three);
- then paced at each ``N%`` of that maximum: item ``i`` is due at ``i / rate``, every round takes every item due
  (at most 1,024, the default queue size of an edge), and an item's latency is the end of its round minus its
  due time, over ``--seconds`` after ``--warmup`` seconds left out.

This is ``bench_streaming.py --rate``'s measurement (due -> done, "80%" of the median of three unpaced runs)
without the pipeline: its percentiles show what the machine's unsteady speed alone gives a program that runs
that near to the maximum it measured a moment before. (Its processes are independent, so a slow core delays only
its own items; a partitioned pipeline's tasks wait for each other through back-pressure.)
Rounds run back to back while anything is due, as jetspark's scheduler does; ``--sleep`` makes an idle loop
sleep until its next item is due instead. Each load also prints the share of the time spent in rounds that had
items: the loop's utilisation, which is the load only if a paced round costs what an unpaced one does.

:class:`SpeedProbe` watches the cores' speed while something else runs (``bench_streaming.py --rate`` puts it
beside every run): one process pinned to each CPU times a fixed loop by its own CPU time every 20 ms. It showed
that each vCPU of this machine runs at one of two speeds 1.6x apart, switching every few hundred milliseconds to
seconds, which moves "the maximum" and every percentage of it (bench/README).

Usage::

    .venv/bin/python bench/bench_machine.py [--seconds 30] [--window 0.1] [--procs 1,2]
    .venv/bin/python bench/bench_machine.py --paced 50,70,80 [--procs 2] [--seconds 5] [--warmup 2] [--sleep]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import statistics
import time
from array import array

ROUND = 2_000
"""Loop iterations per round of work (about 50 us of CPython 3.11 on this machine)."""


def rounds_per_window(seconds: float, window: float) -> list[int]:
    """Rounds of the fixed loop finished in each ``window`` seconds, for ``seconds`` seconds."""
    counts: list[int] = []
    clock = time.perf_counter
    end = clock() + seconds
    while clock() < end:
        stop, n = clock() + window, 0
        while clock() < stop:
            total = 0
            for i in range(ROUND):
                total += i
            n += 1
        counts.append(n)
    return counts


def _worker(args: tuple[float, float]) -> list[int]:
    return rounds_per_window(*args)


ITEM = 100
"""Loop iterations per work item of ``--paced`` (about 3 us of CPython 3.11 here, near a pipelined task's cost
per item)."""
BATCH = 1_024
"""Items one round takes at most (the default queue size of an edge)."""


def _work(items: int) -> None:
    total = 0
    for i in range(items * ITEM):
        total += i


def queue_run(rate: float | None, seconds: float, warmup: float, sleep: bool) -> tuple[array, float]:
    """One process's queue of work items for ``warmup + seconds``: unpaced (``rate=None``: :data:`BATCH` items
    per round, due when the round starts, until the time is up) or paced at ``rate`` items/s (every item due in
    that time is done, however late: one left out would hide its wait). Returns the latencies (due -> end of the
    item's round, microseconds) of the items due after ``warmup``, and the share of the time spent in rounds
    that had items (the loop's utilisation)."""
    clock = time.perf_counter_ns
    start = clock()
    end, measured_from = start + int((warmup + seconds) * 1e9), start + int(warmup * 1e9)
    interval, total = (1e9 / rate, int(rate * (warmup + seconds))) if rate else (0.0, 0)
    latencies, done, busy = array("q"), 0, 0
    while True:
        now = clock()
        if rate is None:
            if now >= end:
                break
            due = [now] * BATCH
        else:
            if done >= total:
                break
            n = min(BATCH, total - done, int((now - start) / interval) + 1 - done)
            if n <= 0:
                if sleep:
                    time.sleep((start + done * interval - now) / 1e9)
                continue
            due = [start + int(j * interval) for j in range(done, done + n)]
        _work(len(due))
        finished = clock()
        busy += finished - now
        latencies.extend((finished - d) // 1000 for d in due if d >= measured_from)
        done += len(due)
    return latencies, busy / (clock() - start)


def _queue_worker(args: tuple) -> tuple[array, float]:
    return queue_run(*args)


class BareLoop:
    """The queue of :func:`queue_run` in ``procs`` processes of ``pool`` at once (one per core, as the tasks of a
    ``local[2]`` job): its maximum, then its latency at a percentage of it (``--paced``; also the "bare loop"
    column of ``bench_streaming.py --rate``)."""

    def __init__(self, pool, procs: int, seconds: float, warmup: float, sleep: bool = False):
        self.pool, self.procs, self.seconds, self.warmup, self.sleep = pool, procs, seconds, warmup, sleep
        self.maximum: float | None = None

    def run(self, rate: float | None) -> list[tuple[array, float]]:
        return self.pool.map(_queue_worker, [(rate, self.seconds, self.warmup, self.sleep)] * self.procs)

    def measure_maximum(self, report=print) -> float:
        """Items/s per process: the median of three unpaced runs (each reported)."""
        maxima = []
        for _ in range(3):
            maxima.append(statistics.mean(len(lat) / self.seconds for lat, _ in self.run(None)))
            report(f"bare loop, unpaced: {maxima[-1]:,.0f} items/s per process")
        self.maximum = statistics.median(maxima)
        return self.maximum

    def at_load(self, percent: float) -> tuple[list[int], list[float]]:
        """Sorted latencies (microseconds) of every process's items at ``percent`` of the maximum, and each
        process's utilisation."""
        top = self.maximum if self.maximum is not None else self.measure_maximum()
        runs = self.run(top * percent / 100)
        return sorted(x for lat, _ in runs for x in lat), [share for _, share in runs]


def paced_floor(loop: BareLoop, percents: list[float]) -> None:
    """Print the loop's maximum, then its latency percentiles and utilisation at each percentage of it."""
    top = loop.measure_maximum(lambda line: print(line, flush=True))
    print(f"maximum: {top:,.0f} items/s per process (median of three), {loop.procs} process(es); "
          f"{'sleeping' if loop.sleep else 'running rounds back to back'} when nothing is due", flush=True)
    print("| load | items/s per process | due -> done p50 / p99 / p99.9 / max ms | time in rounds with items |\n"
          "|---|---|---|---|")
    for percent in percents:
        latencies, busy = loop.at_load(percent)
        ms = " / ".join(f"{latencies[min(len(latencies) - 1, int(q * len(latencies)))] / 1000:.2f}"
                        for q in (0.5, 0.99, 0.999, 1.0))
        print(f"| {percent:g}% | {top * percent / 100:,.0f} | {ms} | {', '.join(f'{100 * b:.0f}%' for b in busy)} |",
              flush=True)


PROBE_LOOP = 3_000
"""Loop iterations the speed probe times (about 80 us of CPython 3.11 on this machine at its faster speed, about
130 us at its slower one)."""
PROBE_EVERY = 0.02
"""Seconds between two timings of the speed probe (under 1% of a core)."""


def _probe_cpu(cpu: int, ready, stop, samples) -> None:
    """Pinned to ``cpu``, time :data:`PROBE_LOOP` iterations by this thread's CPU time (so a wait for the core is
    not counted) every :data:`PROBE_EVERY` seconds until ``stop``; send ``[(monotonic ns, loop ns)]``."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
    rows = array("q")
    ready.set()
    while not stop.wait(PROBE_EVERY):
        start, at = time.thread_time_ns(), time.monotonic_ns()
        total = 0
        for i in range(PROBE_LOOP):
            total += i
        rows.extend((at, time.thread_time_ns() - start))
    samples.send(rows)


class SpeedProbe:
    """How fast each core runs the same work while something else is measured: a context manager that keeps one
    process pinned to each CPU, timing a fixed loop (:data:`PROBE_LOOP` iterations, by its own CPU time) every
    :data:`PROBE_EVERY` seconds. The loop's time moves only with the core's speed, not with the load on it (a wait
    for the core is not counted), so it tells whether a run had the machine that an earlier run measured.

    On this machine (a 2-vCPU virtual machine) the loop takes either about 80 us or about 130 us, switching
    between the two every few hundred milliseconds to seconds, on either core independently, and a pipelined
    task's cost per item follows it (bench/README). On an idle core it mostly reads slow (the core's clock is
    low until work keeps it busy), so its figures mean something only beside a run that keeps the cores busy.

    >>> with SpeedProbe() as probe:
    ...     time.sleep(0.2)
    >>> sorted(probe.loop_us()) == probe.cpus
    True
    """

    def __init__(self):
        self.cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
        self.samples: dict[int, list[tuple[int, int]]] = {}

    def __enter__(self) -> "SpeedProbe":
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._procs = []
        for cpu in self.cpus:
            ready, (receive, send) = context.Event(), context.Pipe(duplex=False)
            proc = context.Process(target=_probe_cpu, args=(cpu, ready, self._stop, send), daemon=True)
            proc.start()
            self._procs.append((cpu, proc, receive))
            if not ready.wait(30):
                raise RuntimeError(f"the speed probe for CPU {cpu} did not start within 30 s")
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for cpu, proc, receive in self._procs:
            rows = receive.recv() if receive.poll(10) else array("q")
            self.samples[cpu] = list(zip(rows[::2], rows[1::2]))
            proc.join(10)
            if proc.is_alive():
                proc.kill()

    def loop_us(self, quantile: float = 0.5) -> dict[int, float]:
        """The loop's time per CPU at ``quantile`` of its timings (the median by default), microseconds."""
        out = {}
        for cpu, rows in self.samples.items():
            times = sorted(ns for _, ns in rows)
            if times:
                out[cpu] = times[min(len(times) - 1, int(quantile * len(times)))] / 1000
        return out

    def off_windows(self, reference: dict[int, float], factor: float = 1.25, window: float = 0.1) -> float:
        """The share of ``window``-second windows in which some CPU's median timing was over ``factor`` times
        slower or faster than its ``reference`` (microseconds per CPU, e.g. ``loop_us()`` of the run compared
        with). At 80% of a maximum, a core 1.25x slower than when the maximum was measured has no spare capacity
        left; one 1.25x faster makes the load lighter than it says."""
        per_window: dict[int, dict[int, list[int]]] = {}
        for cpu, rows in self.samples.items():
            for at, ns in rows:
                per_window.setdefault(int(at / (window * 1e9)), {}).setdefault(cpu, []).append(ns)
        off = sum(1 for cpus in per_window.values()
                  if any(not 1 / factor <= statistics.median(times) / 1000 / reference[cpu] <= factor
                         for cpu, times in cpus.items() if cpu in reference))
        return off / len(per_window) if per_window else math.nan


def summary(counts: list[int]) -> str:
    """Minimum, median and maximum rate as fractions of the median, and the share of windows under 80% of it."""
    median = statistics.median(counts)
    low = sum(1 for c in counts if c < 0.8 * median) / len(counts)
    return (f"{len(counts)} windows: min {min(counts) / median:.2f}, median 1.00 ({median:,.0f} rounds), "
            f"max {max(counts) / median:.2f} of the median; under 0.8 of the median: {100 * low:.1f}%")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds of each measurement")
    parser.add_argument("--window", type=float, default=0.1, help="seconds per window")
    parser.add_argument("--procs", default="1,2", help="comma list of process counts, measured one after another "
                                                       "(--paced: the largest, all at once)")
    parser.add_argument("--paced", help="comma list of loads in percent of the queue's maximum, e.g. 50,70,80: the "
                                        "latency of fixed work paced at that load (the machine's floor)")
    parser.add_argument("--warmup", type=float, default=2.0, help="--paced: seconds of each run left out")
    parser.add_argument("--sleep", action="store_true", help="--paced: an idle loop sleeps until its next item is due")
    args = parser.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {os.cpu_count()} cores")
    if args.paced:
        procs = max(int(p) for p in args.procs.split(","))
        with multiprocessing.Pool(procs) as pool:
            paced_floor(BareLoop(pool, procs, args.seconds, args.warmup, args.sleep),
                        [float(p) for p in args.paced.split(",")])
        print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        return 0
    for procs in (int(p) for p in args.procs.split(",")):
        with multiprocessing.Pool(procs) as pool:
            per_proc = pool.map(_worker, [(args.seconds, args.window)] * procs)
        for i, counts in enumerate(per_proc):
            print(f"{procs} process(es), process {i + 1}: {summary(counts)}", flush=True)
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
