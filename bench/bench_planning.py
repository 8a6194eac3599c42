"""Planning time of large DAGs: building and planning chains and fan-outs of 1,000 to 5,000 vertices.

Planning runs on the driver before any Spark work, so it must stay linear in the DAG's size. This prints
seconds (wall) for building the DAG and for ``plan_dag``; compare the 1,000 and 5,000 rows (linear: ~5x).

    .venv/bin/python bench/bench_planning.py
"""

from __future__ import annotations

import time

from dag import DAG, EngineConfig
from dag.planner import plan_dag
from edges import between, from_
from processors import noop_p, whole_item


def chain(n: int) -> DAG:
    """A chain of n vertices, every fifth edge partitioned, parallelism 1-3."""
    dag = DAG()
    prev = dag.new_vertex("v0", noop_p())
    for i in range(1, n):
        v = dag.new_vertex(f"v{i}", noop_p(), local_parallelism=1 + i % 3)
        dag.edge(between(prev, v).partitioned(whole_item) if i % 5 == 0 else between(prev, v))
        prev = v
    return dag


def fan_out(n: int) -> DAG:
    """One source feeding n - 1 sinks on ordinals 0..n-2."""
    dag = DAG()
    src = dag.new_vertex("src", noop_p())
    for i in range(1, n):
        dag.edge(from_(src, i - 1).to(dag.new_vertex(f"s{i}", noop_p())))
    return dag


def main() -> None:
    config = EngineConfig()
    print(f"{'shape':<8} {'vertices':>8} {'build s':>8} {'plan s':>8}")
    for shape, make in (("chain", chain), ("fan-out", fan_out)):
        for n in (1000, 5000):
            start = time.perf_counter()
            dag = make(n)
            built = time.perf_counter()
            plan_dag(dag, config, 2, 2)
            done = time.perf_counter()
            print(f"{shape:<8} {n:>8} {built - start:>8.3f} {done - built:>8.3f}")


if __name__ == "__main__":
    main()
