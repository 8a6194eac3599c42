"""A distributed batch source that slices its data by global processor index (Jet manual 5.11.1).

``distributed(2)`` asks for two source processors per member; ``create_fn`` runs once for every global
processor index ``0 .. total_parallelism - 1``, and the processor with index ``g`` emits the numbers
``n < count`` with ``n % total_parallelism == g``, as ``(g, n)`` pairs. Together the processors emit every
number exactly once, whatever the number of members.

Run it on the bundled engine::

    python examples/distributed_source.py [COUNT]

or build the DAG yourself with :func:`build_dag`.
"""

from __future__ import annotations

import sys

from dag import DAG
from edges import between
from processors import SourceBuilder, write_list_p

RESULT_LIST = "numbers"


class Slice:
    """One processor's share of ``range(count)``."""

    def __init__(self, ctx, count: int):
        self.index = ctx.global_processor_index
        self.numbers = iter(range(self.index, count, ctx.total_parallelism))


def _fill(state: Slice, buf) -> None:
    for _ in range(128):
        n = next(state.numbers, None)
        if n is None:
            buf.close()
            return
        buf.add((state.index, n))


def build_numbers_source(count: int, local_parallelism: int = 2):
    """A source emitting ``(processor index, n)`` for every ``n < count``, sliced by processor index."""
    return (
        SourceBuilder.batch("numbers", lambda ctx: Slice(ctx, count))
        .fill_buffer_fn(_fill)
        .distributed(local_parallelism)
        .build()
    )


def build_dag(count: int = 1000, sink=None) -> DAG:
    """``numbers -> sink``; the sink defaults to ``write_list_p("numbers")`` (``engine.get_list("numbers")``)."""
    dag = DAG()
    source = build_numbers_source(count)
    source_vertex = dag.new_vertex(source.name, source)
    sink_vertex = dag.new_vertex("sink", sink if sink is not None else write_list_p(RESULT_LIST))
    dag.edge(between(source_vertex, sink_vertex))
    return dag


def job(count: int = 1000):
    """``jetspark run examples/distributed_source.py [--count N]``: the DAG; prints what each processor emitted."""
    from jetspark_cli.spec import JobSpec

    return JobSpec(build_dag(count), report=lambda engine, _job: report(engine, count), name="distributed-source")


def report(engine, count: int) -> None:
    """Print whether every number arrived once and how many each source processor emitted."""
    from collections import Counter

    pairs = list(engine.get_list(RESULT_LIST))
    per_processor = Counter(index for index, _ in pairs)
    numbers = sorted(n for _, n in pairs)
    print(f"{len(pairs)} numbers, every one exactly once: {numbers == list(range(count))}")
    for index, n in sorted(per_processor.items()):
        print(f"  processor {index} emitted {n}")


def main(argv: list[str]) -> None:
    from dag import Engine

    count = int(argv[0]) if argv else 1000
    with Engine() as engine:
        engine.new_job(build_dag(count)).join()
        report(engine, count)


if __name__ == "__main__":
    main(sys.argv[1:])
