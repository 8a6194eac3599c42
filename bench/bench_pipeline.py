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

``--ops`` instead measures Jet 4.5's stateful and service operations against the same work as a hand-written
DAG (target: pipeline / dag <= 1.10), on ``--items`` integers from a driver list, each job ending in a sum:

================  =====================================================================================
``stateful``      pipeline: ``grouping_key(x % 1000).map_stateful(...)`` (a running sum per key);
                  dag: a hand-written keyed processor on a distributed partitioned edge
``service``       pipeline: ``map_using_service(shared_service(...), fn)``; dag: ``map_using_context_p``
================  =====================================================================================

Usage::

    .venv/bin/python bench/bench_pipeline.py                      # the full corpus ../shared/data/books
    .venv/bin/python bench/bench_pipeline.py --books examples/data/books --repeat 1
    .venv/bin/python bench/bench_pipeline.py --ops --items 200000 --repeat 3
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
from processors.api.processor import Processor  # noqa: E402

TARGETS = {"word_count": 1.03, "stateful": 1.10, "service": 1.10}
KEYS = 1000


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


def _running_sum(state: list, key: int, x: int) -> int:
    state[0] += x
    return state[0]


def _rate_lookup(rates: dict, x: int) -> int:
    return x * rates[x % 4]


def _rates(ctx: Any = None) -> dict:
    return {0: 1, 1: 2, 2: 3, 3: 4}


def _key(x: int) -> int:
    return x % KEYS


class RunningSumP(Processor):
    """The hand-written keyed processor: a running sum per key (what ``map_stateful`` does for the pipeline)."""

    def __init__(self) -> None:
        self.sums: dict = {}
        self.pending: list | None = None
        self.position = 0
        self.outbox: Any = None

    def init(self, outbox: Any, context: Any) -> None:
        self.outbox = outbox

    def process(self, ordinal: int, inbox: Any) -> None:
        if self.pending is None:
            sums, out = self.sums, []
            for x in inbox:
                k = x % KEYS
                s = sums[k] = sums.get(k, 0) + x
                out.append(s)
            self.pending, self.position = out, 0
        self.position = self.outbox.offer_many(self.pending, self.position)
        if self.position == len(self.pending):
            self.pending = None
            inbox.clear()


def _ops_jobs(engine: Any, items: int) -> dict[str, dict[str, Callable]]:
    """The ``--ops`` jobs: each variant returns ``{"sum": total}`` so that the variants can be compared."""
    from dag import DAG
    from edges import between
    from pipeline import Pipeline, ServiceFactories, Sinks, Sources
    from processors import (
        ContextFactory,
        ProcessorMetaSupplier,
        accumulate_p,
        combine_p,
        map_using_context_p,
        read_list_p,
        summing,
        write_list_p,
    )

    source = "bench-ops-items"
    engine.get_list(source).clear()
    engine.get_list(source).extend(range(items))

    def run(job: Any) -> dict:
        engine.get_list("bench-ops-out").clear()
        engine.new_job(job).join()
        return {"sum": engine.get_list("bench-ops-out")[0]}

    def pipeline(middle: Callable) -> dict:
        p = Pipeline.create()
        middle(p.read_from(Sources.list(source))).aggregate(summing()).write_to(Sinks.list("bench-ops-out"))
        return run(p)

    def dag(middle_supplier: Any, keyed: bool) -> dict:
        d = DAG()
        read = d.new_vertex("read", read_list_p(source))
        middle = d.new_vertex("middle", middle_supplier)
        prepare = d.new_vertex("sum-prepare", accumulate_p(summing()))
        total = d.new_vertex("sum", combine_p(summing()), local_parallelism=1)
        write = d.new_vertex("write", write_list_p("bench-ops-out"))
        edge = between(read, middle)
        d.edge(edge.distributed().partitioned(_key) if keyed else edge)
        d.edge(between(middle, prepare))
        d.edge(between(prepare, total).distributed().all_to_one("sum"))
        d.edge(between(total, write))
        return run(d)

    service = ServiceFactories.shared_service(_rates)
    return {
        "stateful": {
            "dag": lambda: dag(ProcessorMetaSupplier.of(RunningSumP), keyed=True),
            "pipeline": lambda: pipeline(lambda s: s.grouping_key(_key).map_stateful(lambda: [0], _running_sum)),
        },
        "service": {
            "dag": lambda: dag(map_using_context_p(ContextFactory(_rates), _rate_lookup), keyed=False),
            "pipeline": lambda: pipeline(lambda s: s.map_using_service(service, _rate_lookup)),
        },
    }


def _measure_ops(jobs: dict[str, dict[str, Callable]], repeat: int) -> tuple[dict, dict, bool]:
    """Warm-up (the variants must agree), then ``repeat`` interleaved timed runs per variant."""
    times: dict = {}
    cpu: dict = {}
    agree = True
    for job, variants in jobs.items():
        results = {variant: fn() for variant, fn in variants.items()}
        if len({repr(r) for r in results.values()}) != 1:
            print(f"  DISAGREE: {job}: {results}", flush=True)
            agree = False
        for variant in variants:
            times[job, variant], cpu[job, variant] = [], []
        for round_ in range(repeat):
            order = list(variants.items())
            for variant, fn in order[round_ % 2:] + order[:round_ % 2]:
                _, wall, used = bench_jobs._timed(fn)  # noqa: SLF001
                times[job, variant].append(wall)
                cpu[job, variant].append(used)
    return times, cpu, agree


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
    parser.add_argument("--ops", action="store_true", help="the stateful and service operations instead")
    parser.add_argument("--items", type=int, default=200_000, help="items of the --ops jobs (default 200000)")
    args = parser.parse_args(argv)

    from dag import Engine

    spark = bench_jobs._session(args.master)  # noqa: SLF001
    engine = Engine(spark=spark)
    try:
        if args.ops:
            print(f"{args.items} items, master {args.master}, {args.repeat} timed runs each", flush=True)
            times, cpu, agree = _measure_ops(_ops_jobs(engine, args.items), args.repeat)
        else:
            print(f"books {args.books}, master {args.master}, {args.repeat} timed runs each", flush=True)
            times, cpu, agree = bench_jobs._measure(_jobs(engine, args.books, args.stopwords), args.repeat)  # noqa: SLF001
        _report(times, cpu)
    finally:
        engine.close()
        spark.stop()
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
