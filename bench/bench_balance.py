"""Where a ``local[N]`` word count loses time against perfect scaling: per-task durations and serial driver time.

Wall-clock scaling (``bench_jobs.py --scaling``) needs a quiet machine; these figures stay readable under load.
One process, one SparkSession with Spark's event log on (a temporary directory); the variants take turns
``--repeat`` times after a warm-up each:

- ``jetspark``: the example word count (``examples/word_count.py``), its ``docs`` source dealt on demand;
- ``jetspark-sliced``: the same with ``EngineConfig(deal_driver_sources=False)`` (equal-count slices);
- ``ideal``: the ideal executor (``bench/ideal.py``, documents balanced by file size).

For every timed run it prints the wall time, the driver process's CPU time (``time.process_time``: planning,
the driver-side maps, collecting), and per Spark stage: the time from the previous stage (or the run's start)
to its submission, its duration, each task's duration, and the **tail**: last minus first task finish, the time
one task ran alone while the other core had nothing of this stage left to do. The end shows the time from the
last stage's completion to the run's return (collecting and writing the driver-side map).

Usage::

    PYTHONPATH=$PWD .venv/bin/python bench/bench_balance.py --books ../shared/data/books --repeat 3
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "examples"), str(REPO)]

VARIANTS = ("jetspark", "jetspark-sliced", "ideal")


def _session(master: str, event_dir: str):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join([*sys.path[:3], os.environ.get("PYTHONPATH", "")])
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName("jetspark-bench-balance")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "2g").config("spark.eventLog.enabled", "true")
             .config("spark.eventLog.dir", event_dir).config("spark.eventLog.compress", "false")
             .config("spark.eventLog.rolling.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _events(event_dir: str) -> tuple[dict, dict]:
    """``{stage id: (submitted, completed)}`` and ``{stage id: [(launch, finish), ...]}`` (seconds) from the log."""
    path = next(p for p in glob.glob(event_dir + "/**", recursive=True)
                if os.path.isfile(p) and not os.path.basename(p).startswith("."))
    stages: dict[int, tuple[float, float]] = {}
    tasks: dict[int, list[tuple[float, float]]] = {}
    with open(path) as f:
        for line in f:
            event = json.loads(line)
            if event["Event"] == "SparkListenerTaskEnd":
                info = event["Task Info"]
                tasks.setdefault(event["Stage ID"], []).append((info["Launch Time"] / 1e3, info["Finish Time"] / 1e3))
            elif event["Event"] == "SparkListenerStageCompleted":
                info = event["Stage Info"]
                stages[info["Stage ID"]] = (info.get("Submission Time", 0) / 1e3, info.get("Completion Time", 0) / 1e3)
    return stages, tasks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--books", default=str(REPO.parent / "shared" / "data" / "books"))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; choose from {', '.join(VARIANTS)}")
    event_dir = tempfile.mkdtemp(prefix="jetspark-balance-")
    spark = _session(args.master, event_dir)
    sc = spark.sparkContext

    import ideal
    import word_count
    from corpus import document_paths
    from dag import Engine, EngineConfig

    docs = document_paths(args.books)
    dealt, sliced = Engine(spark=spark), Engine(EngineConfig(deal_driver_sources=False), spark=spark)
    jobs = {"jetspark": lambda: word_count.count_words(dealt, args.books),
            "jetspark-sliced": lambda: word_count.count_words(sliced, args.books),
            "ideal": lambda: ideal.word_count(sc, docs, word_count.doc_lines, word_count.tokenize)}
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    expected = None
    for v in variants:  # warm-up, results checked equal
        result = jobs[v]()
        if expected is not None and result != expected:
            print(f"{v}: result differs from {variants[0]}'s", file=sys.stderr)
            return 1
        expected = result
    runs = []
    for r in range(args.repeat):
        for v in variants:
            t0, c0 = time.time(), time.process_time()
            jobs[v]()
            runs.append((v, r, t0, time.time(), time.process_time() - c0))
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    spark.stop()
    stages, tasks = _events(event_dir)
    tails: dict[str, list[float]] = {v: [] for v in variants}
    for v, r, t0, t1, cpu in runs:
        print(f"\n{v} run {r + 1}: wall {t1 - t0:.2f} s, driver CPU {cpu:.2f} s")
        previous = t0
        for sid in sorted(s for s, (sub, _) in stages.items() if t0 <= sub <= t1):
            submitted, completed = stages[sid]
            spans = sorted(tasks.get(sid, []))
            finishes = [end for _, end in spans]
            tail = max(finishes) - min(finishes)
            if sid == min(s for s, (sub, _) in stages.items() if t0 <= sub <= t1):
                tails[v].append(tail)
            durations = ", ".join(f"{end - start:.2f}" for start, end in spans)
            print(f"  +{submitted - previous:5.2f} s to stage {sid}: {completed - submitted:6.2f} s, tasks {durations} s,"
                  f" tail {tail:.2f} s")
            previous = completed
        print(f"  +{t1 - previous:5.2f} s to the end")
    print("\nfirst stage's tail (one task running alone), median: " +
          ", ".join(f"{v} {statistics.median(t):.2f} s" for v, t in tails.items() if t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
