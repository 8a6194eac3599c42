"""The CPU-log sink of Jet's "Custom Sources and Sinks" tutorial, on jetspark's Core API.

A batch source makes ``count`` items that look like the tutorial's test events; a sink built with
``SinkBuilder`` writes one line ``timestamp,cpu,item`` per item into ``data.<global processor index>.csv``:
``timestamp`` in epoch milliseconds, ``cpu`` the machine's CPU usage (0..1) at that moment. The sink flushes
after every inbox batch and runs two processors per member, so one member writes ``data.0.csv`` and
``data.1.csv``, each with part of the items. (Items travel between processors in batches of up to the
edge's queue size, 1024 by default, so a few hundred items from the single source processor may all land in
one file; the default 3000 items reach both.)

Run it on the bundled engine (local Spark)::

    python examples/cpu_log_sink.py [DIRECTORY] [COUNT]

or build the DAG yourself with :func:`build_dag` (and :func:`build_cpu_log_sink` for the sink alone).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from dag import DAG
from edges import between
from processors import SinkBuilder, SourceBuilder

SINK_PARALLELISM = 2


class CpuMonitor:
    """CPU usage of the whole machine, measured against a reference point renewed every second."""

    REFERENCE_REFRESH_SECONDS = 1.0

    def __init__(self):
        self._reference_time = time.monotonic()
        self._reference = _cpu_times()

    def cpu_usage(self) -> float:
        now = _cpu_times()
        usage = _usage_between(self._reference, now)
        if time.monotonic() > self._reference_time + self.REFERENCE_REFRESH_SECONDS:
            self._reference_time = time.monotonic()
            self._reference = now
        return usage


def _cpu_times() -> tuple[int, int] | None:
    """``(busy, total)`` jiffies from ``/proc/stat``, or None where there is no such file."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _usage_between(before, after) -> float:
    if before is None or after is None:  # no /proc/stat: the load average per CPU, capped at 1
        try:
            return min(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
        except (OSError, AttributeError):
            return 0.0
    total = after[1] - before[1]
    return (after[0] - before[0]) / total if total > 0 else 0.0


class CpuLogWriter:
    """The sink's state (the tutorial's ``Context``): a file and a CPU monitor."""

    def __init__(self, file_name: str | os.PathLike):
        self._out = open(file_name, "w", encoding="utf-8")
        self._cpu = CpuMonitor()

    def write(self, item) -> None:
        self._out.write(f"{time.time_ns() // 1_000_000},{self._cpu.cpu_usage():f},{item}\n")

    def flush(self) -> None:
        self._out.flush()

    def destroy(self) -> None:
        self._out.close()


def build_cpu_log_sink(directory: str | os.PathLike = "."):
    """The tutorial's sink: ``data.<global processor index>.csv`` in ``directory``, flushed after every batch,
    two processors per member."""
    directory = os.fspath(directory)
    return (
        SinkBuilder.sink_builder(
            "cpu-sink", lambda ctx: CpuLogWriter(os.path.join(directory, f"data.{ctx.global_processor_index}.csv"))
        )
        .receive_fn(CpuLogWriter.write)
        .flush_fn(CpuLogWriter.flush)
        .destroy_fn(CpuLogWriter.destroy)
        .preferred_local_parallelism(SINK_PARALLELISM)
        .build()
    )


def _add_events(numbers, buf) -> None:
    for _ in range(128):
        n = next(numbers, None)
        if n is None:
            buf.close()
            return
        buf.add(f"SimpleEvent(timestamp={time.strftime('%H:%M:%S')}, sequence={n})")


def build_item_source(count: int):
    """A batch source of ``count`` event strings, ``SimpleEvent(timestamp=..., sequence=n)``."""
    return SourceBuilder.batch("item-source", lambda ctx: iter(range(count))).fill_buffer_fn(_add_events).build()


def build_dag(directory: str | os.PathLike = ".", count: int = 3000) -> DAG:
    """``item-source -> cpu-sink``: ``count`` items logged into ``directory/data.<index>.csv``."""
    dag = DAG()
    source = build_item_source(count)
    sink = build_cpu_log_sink(directory)
    dag.edge(between(dag.new_vertex(source.name, source), dag.new_vertex(sink.name, sink)))
    return dag


def job(directory: str = ".", count: int = 3000):
    """``jetspark run examples/cpu_log_sink.py [--directory DIR] [--count N]``: the DAG; prints the files'
    line counts."""
    from jetspark_cli.spec import JobSpec

    directory = os.path.abspath(directory)  # the sink's processors may run in another working directory
    return JobSpec(build_dag(directory, count), name="cpu-log-sink",
                   prepare=lambda _engine: Path(directory).mkdir(parents=True, exist_ok=True),
                   report=lambda _engine, _job: report(directory))


def report(directory: str | os.PathLike) -> None:
    """Print each ``data.<index>.csv`` of ``directory`` with its line count."""
    for path in sorted(Path(directory).glob("data.*.csv")):
        with open(path, encoding="utf-8") as f:
            print(f"{path}: {sum(1 for _ in f)} lines")


def main(argv: list[str]) -> None:
    from dag import Engine

    directory = Path(argv[0]) if argv else Path(".")
    count = int(argv[1]) if len(argv) > 1 else 3000
    directory.mkdir(parents=True, exist_ok=True)
    with Engine() as engine:
        engine.new_job(build_dag(directory, count)).join()
    report(directory)


if __name__ == "__main__":
    main(sys.argv[1:])
