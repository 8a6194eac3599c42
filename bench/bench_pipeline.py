"""Benchmark the Pipeline API against the Core DAG: word count and TF-IDF, pipeline vs the example DAGs.

One process, one SparkSession (``--master``, default ``local[2]``), one ``dag.Engine`` borrowing it. Each
variant runs once to warm up (results must agree: word counts exactly, TF-IDF scores to 1e-9 relative), then
the variants take turns ``--repeat`` times and the medians and ratios are printed (wall and the CPU time of the
whole process tree, as ``bench_jobs.py``):

================  =====================================================================================
``dag``           ``examples/word_count.py`` / ``examples/tf_idf.py``: the example Core DAGs
``pipeline``      ``examples/word_count_pipeline.py`` / ``examples/tf_idf_pipeline.py``: the same jobs
                  written with the Pipeline API and lowered by ``Pipeline.to_dag()``
================  =====================================================================================

Target: the word-count pipeline lowers to the word-count DAG's shape, so lowering must add no engine cost
(pipeline / dag <= 1.03). The TF-IDF pipeline is a different DAG (hash-joins instead of the hand-written
processors fed on prioritised broadcast edges), so its ratio is the price of writing it as a pipeline.

Usage::

    .venv/bin/python bench/bench_pipeline.py                      # the full corpus ../shared/data/books
    .venv/bin/python bench/bench_pipeline.py --books examples/data/books --repeat 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "bench"), str(REPO / "examples"), str(REPO)]

import bench_jobs  # noqa: E402

TARGETS = {"word_count": 1.03}


def _jobs(engine: Any, books: str, stopwords: str) -> dict[str, dict[str, Callable]]:
    import tf_idf
    import tf_idf_pipeline
    import word_count
    import word_count_pipeline

    return {
        "word_count": {
            "dag": lambda: word_count.count_words(engine, books),
            "pipeline": lambda: word_count_pipeline.count_words(engine, books),
        },
        "tf_idf": {
            "dag": lambda: tf_idf.build_index(engine, books, stopwords),
            "pipeline": lambda: tf_idf_pipeline.build_index(engine, books, stopwords),
        },
    }


def _report(times: dict, cpu: dict) -> None:
    print(f"\n{'job':<11}{'variant':<10}{'median s':>9}{'cpu s':>8}   runs (wall s)")
    medians = {key: statistics.median(runs) for key, runs in times.items()}
    cpu_medians = {key: statistics.median(runs) for key, runs in cpu.items()}
    for (job, variant), runs in times.items():
        print(f"{job:<11}{variant:<10}{medians[job, variant]:9.2f}{cpu_medians[job, variant]:8.2f}   "
              + " ".join(f"{r:.2f}" for r in runs))
    print()
    for job in dict.fromkeys(job for job, _ in times):
        ratio = medians[job, "pipeline"] / medians[job, "dag"]
        cpu_ratio = cpu_medians[job, "pipeline"] / max(cpu_medians[job, "dag"], 1e-9)
        target = TARGETS.get(job)
        verdict = "" if target is None else f"  (target <= {target} wall: {'met' if ratio <= target else 'MISSED'})"
        print(f"{job:<11}pipeline / dag = {ratio:5.2f} wall, {cpu_ratio:5.2f} cpu{verdict}")


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run the benchmark, print the table; 1 if the variants disagree."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--books", default=str(bench_jobs.FULL_BOOKS), help="directory of books")
    parser.add_argument("--stopwords", default=str(bench_jobs.FULL_STOPWORDS), help="stopword file")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per variant (default 3)")
    args = parser.parse_args(argv)

    from dag import Engine

    spark = bench_jobs._session(args.master)  # noqa: SLF001
    engine = Engine(spark=spark)
    try:
        print(f"books {args.books}, master {args.master}, {args.repeat} timed runs each", flush=True)
        times, cpu, agree = bench_jobs._measure(_jobs(engine, args.books, args.stopwords), args.repeat)  # noqa: SLF001
        _report(times, cpu)
    finally:
        engine.close()
        spark.stop()
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
