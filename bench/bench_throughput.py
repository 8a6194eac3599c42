"""CPU cost per item of the pipelined runtime: source -> map -> keyed count, both tasks in one process, no Spark.

``bench_streaming.py`` measures the throughput of this job on Spark (``local[2]``) by wall time, which the shared
machine's load turns into noise. This bench runs the same job's two tasks with the pipelined runtime's own code
(``TaskRunners``: the tasklets, queues, routers, the cooperative scheduler, and real TCP ``Links`` over loopback
pumped by each task's scheduler, and the HMAC handshake) in threads of this process, and divides the
process's CPU time (``time.process_time``) by the items: **CPU microseconds per item** of the whole job (both
tasks, everything the runtime does per item; Spark's task launch and the driver channel are not in it). The GIL
runs one thread at a time, so this is also what one core would need; two cores running the two tasks in two
Python workers, as ``local[2]`` does, need about half of it each.

The job is ``bench_streaming.py``'s: ``CountingSource(n)`` -> ``map_p(x % 1000)`` (local edge) -> a distributed
partitioned edge (half the items cross the TCP link) -> ``aggregate_by_key_p(counting())`` -> a sink that keeps
the counts in this process, checked after every run (each of the 1,000 keys counted ``n / 1000`` times).

``--profile`` runs once more under cProfile (every thread: the tasks' schedulers, which also move the links' bytes) and
prints the top functions by own time. ``--spark local[2]`` measures on Spark instead: ``bench_streaming.py``'s
own job and formula (items / (median full job - median empty job)) plus the CPU of the whole process tree
(driver, JVM, Python workers) per item, full minus empty.

Run: ``.venv/bin/python bench/bench_throughput.py [--items N] [--repeat R] [--profile] [--spark MASTER]``. To
compare two versions of the code, run each from the root of its own checkout (Spark's Python workers import
the code of the directory the driver runs in), alternating.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

from bench_streaming import CountingSource  # noqa: E402
from dag import DAG, EngineConfig  # noqa: E402
from dag.runtime.pipelined.runner import TaskRunners  # noqa: E402
from edges import between  # noqa: E402
from processors import Processor, aggregate_by_key_p, counting, map_p  # noqa: E402
from tests.support.tasks import in_process_spec  # noqa: E402

KEYS = 1000


class KeepCounts(Processor):
    """The sink: adds every ``(key, count)`` it receives to the shared dict ``counts``."""

    def __init__(self, counts: dict):
        self.counts = counts

    def process(self, ordinal, inbox):
        for key, count in inbox.take_all():
            self.counts[key] = self.counts.get(key, 0) + count


def mod_keys(x: int) -> int:
    return x % KEYS


def identity(k: Any) -> Any:
    return k


def keyed_count_dag(n: int, counts: dict) -> DAG:
    """``bench_streaming.py``'s throughput job with an in-process sink."""
    dag = DAG()
    src = dag.new_vertex("source", lambda: CountingSource(n))
    key = dag.new_vertex("map", map_p(mod_keys))
    count = dag.new_vertex("count", aggregate_by_key_p([identity], counting()))
    out = dag.new_vertex("sink", lambda: KeepCounts(counts))
    dag.edge(between(src, key)).edge(between(key, count).partitioned(identity).distributed())
    dag.edge(between(count, out))
    return dag


def run_tasks(n: int, tasks: int = 2) -> dict:
    """Run the job's ``tasks`` tasks in threads of this process (real links over loopback); the counts."""
    counts: dict = {}
    dag = keyed_count_dag(n, counts)
    config = EngineConfig(master=f"local[{tasks}]").model_copy(
        update={"pre_aggregate": False, "fuse_accumulate": False, "deal_driver_sources": False})
    spec = in_process_spec(dag, tasks, config)
    stop = threading.Event()
    runners = [TaskRunners(t, spec, None, stop) for t in range(tasks)]
    errors: list[BaseException] = []

    def task(r: TaskRunners, addresses: list) -> None:
        try:
            r.links.connect(addresses)
            r.run()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            stop.set()

    addresses = [r.links.address for r in runners]
    threads = [threading.Thread(target=task, args=(r, addresses), name=f"task-{r.t}") for r in runners]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(600)
            if thread.is_alive():
                raise TimeoutError("a task did not finish within 600 s")
    finally:
        stop.set()
        for r in runners:
            r.close()
    if errors:
        raise errors[0]
    if sum(counts.values()) != n or len(counts) != min(n, KEYS):
        raise SystemExit(f"wrong counts: {sum(counts.values())} items over {len(counts)} keys, expected {n}")
    return counts


def measure(n: int, repeat: int) -> tuple[list[float], list[float]]:
    """(CPU microseconds per item, wall seconds) of ``repeat`` runs."""
    run_tasks(min(n, 100_000))  # warm-up
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        run_tasks(n)
        cpu.append((time.process_time() - c0) / n * 1e6)
        wall.append(time.perf_counter() - w0)
    return cpu, wall


def profile(n: int, top: int) -> None:
    """One run under cProfile in every thread; prints the ``top`` functions by own time."""
    profiles: list[cProfile.Profile] = []
    original = threading.Thread.run

    def profiled_run(self: threading.Thread) -> None:
        p = cProfile.Profile()
        profiles.append(p)
        p.runcall(original, self)

    threading.Thread.run = profiled_run  # type: ignore[method-assign]
    try:
        run_tasks(n)
    finally:
        threading.Thread.run = original  # type: ignore[method-assign]
    stats = pstats.Stats(profiles[0])
    for p in profiles[1:]:
        stats.add(p)
    stats.sort_stats("tottime").print_stats(top)


def spark_measure(n: int, repeat: int, master: str) -> None:
    """``bench_streaming.py``'s throughput job on Spark: items/s without the job's start-up (as that bench
    computes it) and the CPU of this process tree (driver, JVM, Python workers) per item, full minus empty job
    (medians of ``repeat`` alternating runs)."""
    from bench_jobs import _tree_cpu_seconds
    from bench_streaming import PIPELINED, keyed_count_dag as spark_dag, timed_job

    from dag import Engine

    with Engine(EngineConfig(master=master, spark_conf={"spark.ui.enabled": "false"})) as engine:
        timed_job(engine, spark_dag(1000, "warm"), PIPELINED)
        runs: dict[int, list[tuple[float, float]]] = {0: [], n: []}
        for _ in range(repeat):
            for items in (0, n):
                engine.get_list("counts").clear()
                cpu = _tree_cpu_seconds()
                wall = timed_job(engine, spark_dag(items, "counts"), PIPELINED)
                runs[items].append((wall, _tree_cpu_seconds() - cpu))
            if sum(dict(engine.get_list("counts")).values()) != n:
                raise SystemExit("wrong counts")
    wall = statistics.median(w for w, _ in runs[n]) - statistics.median(w for w, _ in runs[0])
    cpu = statistics.median(c for _, c in runs[n]) - statistics.median(c for _, c in runs[0])
    shown = {items: " ".join(f"{w:.2f}/{c:.2f}" for w, c in r) for items, r in runs.items()}
    print(f"Spark {master}, {n:,} items: {n / wall:,.0f} items/s without start-up, process-tree CPU "
          f"{cpu / n * 1e6:.3f} us/item; runs (wall s/CPU s): empty {shown[0]}, full {shown[n]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="also one run under cProfile (top 30 by own time)")
    parser.add_argument("--spark", metavar="MASTER", help="measure the job on Spark instead (e.g. local[2])")
    args = parser.parse_args(argv)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    if args.spark:
        spark_measure(args.items, args.repeat, args.spark)
        print(f"load average {load} before, {' '.join(f'{x:.1f}' for x in os.getloadavg())} after")
        return 0
    cpu, wall = measure(args.items, args.repeat)
    med = statistics.median(cpu)
    print(f"{args.items:,} items, 2 tasks in one process, load {load}: CPU {med:.3f} us/item (median of "
          f"{args.repeat}: {' '.join(f'{c:.3f}' for c in cpu)}), {1e6 / med:,.0f} items per CPU second, "
          f"wall {' '.join(f'{w:.2f}' for w in wall)} s")
    if args.profile:
        profile(args.items, 30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
