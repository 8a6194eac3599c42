"""How steady this machine's own CPU is: a fixed piece of pure-Python work timed in short windows, no Spark.

Every figure in ``bench/`` that compares two runs (a ratio to hand-tuned PySpark, a latency percentile at 80% of
a maximum measured a minute earlier) assumes that the machine does the same work in the same time from one
second to the next. This script measures that assumption: ``--procs`` processes each count how many rounds of a
fixed loop they finish in every ``--window`` seconds for ``--seconds`` seconds, and the script prints, over all
windows, the rate's minimum, median and maximum as fractions of the median, and the share of windows below 80%
of the median (in such a window a pipeline paced at 80% of its maximum has no spare capacity left and falls
behind). One process shows what the machine lends a single thread; two processes (one per core on a 2-core
machine) what it lends a whole ``local[2]`` job.

Usage::

    .venv/bin/python bench/bench_machine.py [--seconds 30] [--window 0.1] [--procs 1,2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time

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
    parser.add_argument("--procs", default="1,2", help="comma list of process counts, measured one after another")
    args = parser.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {os.cpu_count()} cores")
    for procs in (int(p) for p in args.procs.split(",")):
        with multiprocessing.Pool(procs) as pool:
            per_proc = pool.map(_worker, [(args.seconds, args.window)] * procs)
        for i, counts in enumerate(per_proc):
            print(f"{procs} process(es), process {i + 1}: {summary(counts)}", flush=True)
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
