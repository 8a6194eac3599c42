"""Latency of the driver-side stream path: a put into a driver-side map until it is in a live sink's list
(or, with ``--sink file``, until its line is in the file a live ``write_file_p`` appends to).

One engine (``local[2]``), one pipelined job ``stream_map_p(map, START_FROM_OLDEST) -> write_list_p(list)``.
After every source processor has started (50 warm-up puts on distinct keys, spread over the journal partitions
of both source processors, all seen in the sink), the driver puts ``--puts`` entries one at a time, each
``--gap-ms`` after the previous one was seen, and times each from the put to the moment it shows up in
``engine.get_list``. The path crosses the driver channel twice (the source's journal poll, the sink's batch);
its floor is the source's poll back-off when idle. ``--sink file`` replaces the list sink with
``write_file_p(tmpdir)`` (one processor): the put is timed until a reader of ``tmpdir/0`` sees its line (the
sink flushes when its inbox drains). Prints p50/p90/p99/max in milliseconds.

Run: ``.venv/bin/python bench/bench_stream_io.py [--puts N] [--gap-ms G] [--sink list|file]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dag import DAG, Engine, EngineConfig  # noqa: E402
from edges import between  # noqa: E402
from processors import JournalInitialPosition, stream_map_p, write_file_p, write_list_p  # noqa: E402


WARM_UP = 50


def _wait(predicate, job, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline or job.status.is_terminal:
            raise TimeoutError(f"the job did not deliver in time (status {job.status.value})")
        time.sleep(0.0002)


class _FileLines:
    """``len()`` = complete lines a reader of ``path`` sees now (read incrementally, as ``tail -f`` would)."""

    def __init__(self, path: Path):
        self.path, self.offset, self.count = path, 0, 0

    def __len__(self) -> int:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except FileNotFoundError:
            return 0
        self.offset += len(chunk)
        self.count += chunk.count(b"\n")
        return self.count


def measure(engine: Engine, puts: int, gap_ms: float, sink: str = "list", directory: Path | None = None) -> list[float]:
    """Put-to-visible latencies in milliseconds."""
    source_map = engine.get_map("bench-journal")
    dag = DAG()
    src = dag.new_vertex("journal", stream_map_p("bench-journal", JournalInitialPosition.START_FROM_OLDEST))
    if sink == "file":
        dag.edge(between(src, dag.new_vertex("sink", write_file_p(directory), local_parallelism=1)))
        out = _FileLines(directory / "0")
    else:
        out = engine.get_list("bench-journal-out")
        out.clear()
        dag.edge(between(src, dag.new_vertex("sink", write_list_p("bench-journal-out"))))
    job = engine.new_job(dag)
    try:
        source_map.update((f"warm-up-{i}", i) for i in range(WARM_UP))
        _wait(lambda: len(out) >= WARM_UP, job)
        latencies = []
        for n in range(puts):
            seen = len(out)
            start = time.perf_counter()
            source_map[n] = n
            _wait(lambda: len(out) > seen, job)
            latencies.append((time.perf_counter() - start) * 1000)
            time.sleep(gap_ms / 1000)
        return latencies
    finally:
        job.cancel()
        try:
            job.join(60)
        except Exception:  # noqa: BLE001 - a cancelled job raises CancellationError
            pass


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puts", type=int, default=300)
    parser.add_argument("--gap-ms", type=float, default=20.0)
    parser.add_argument("--sink", choices=("list", "file"), default="list")
    args = parser.parse_args(argv)
    with Engine(EngineConfig(master="local[2]", spark_conf={"spark.ui.enabled": "false"})) as engine, \
            tempfile.TemporaryDirectory() as tmp:
        lat = sorted(measure(engine, args.puts, args.gap_ms, args.sink, Path(tmp)))
    q = statistics.quantiles(lat, n=100)
    print(f"put -> live {args.sink} sink, {len(lat)} puts, gap {args.gap_ms} ms: p50 {q[49]:.1f} ms, "
          f"p90 {q[89]:.1f} ms, p99 {q[98]:.1f} ms, max {lat[-1]:.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
