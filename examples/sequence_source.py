"""A fault-tolerant integer sequence source with a two-phase-commit file sink: exactly-once across a failure.

The Jet 4.0 tutorial's step-19 source ("fault-tolerant-source") is Flink's *checkpointed source* pattern: the
source's only state is its offset (the next number to emit); ``create_snapshot_fn`` saves it in every snapshot
and ``restore_snapshot_fn`` puts it back after a restart, so the numbers after the last snapshot are emitted
again. The sink, ``write_file_p(..., exactly_once=True)``, writes each snapshot's lines to a hidden file, and
publishes it only when the snapshot completed (two-phase commit), so the replayed numbers replace the lost
ones instead of doubling them::

    sequence-source -> fail-once -> sink
    (offset saved)     (--fail-after N)   (two-phase commit per snapshot)

- ``--count N``: numbers 0 .. N-1, then the source closes and the job completes (default 100,000).
- ``--rate R``: at most R numbers a second (default: as fast as they go), so that a run spans many snapshots.
- ``--fail-after K``: the ``fail-once`` stage raises ``RestartableError`` at the first number >= K that passes it
  once some output was published (a snapshot completed), and only once (a marker file in the output directory
  remembers that it did); under ``EXACTLY_ONCE`` the job restarts from the last complete snapshot and replays
  the numbers after it, whose earlier copies were never published.
- ``--kill-after K``: the same, but the stage kills its own Spark Python worker (``SIGKILL``), an
  infrastructure failure: the job restarts from the last complete snapshot too.
- The job runs with ``processing_guarantee=EXACTLY_ONCE`` and a snapshot every ``--snapshot-ms`` (200) ms.

Afterwards the example reads every published file and checks that each number is there exactly once::

    python examples/sequence_source.py --output sequence-out --count 100000 [--fail-after 50000] [--kill-after 70000]
    jetspark render examples/sequence_source.py -o docs/img/sequence_source.svg

With ``--fail-after`` the run logs ``Job 'sequence-source' restarts from snapshot N after RestartableError:
injected failure at K`` and still ends with ``exactly once: each of the ... numbers published once``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from dag import DAG, RestartableError
from edges import between
from processors import SourceBuilder, map_p, write_file_p

CHUNK = 100
OUTPUT_DIR = "sequence-out"
MARKER = ".failed-once"
KILL_MARKER = ".killed-once"


def _fill(state: dict, buf) -> None:
    """Emit the next numbers; close the buffer (the source completes) after ``count``."""
    end = min(state["next"] + CHUNK, state["count"])
    for n in range(state["next"], end):
        buf.add(n)
    state["next"] = end
    if end >= state["count"]:
        buf.close()
    elif state["pause"]:
        time.sleep(state["pause"])


def _restore(state: dict, saved: list) -> None:
    """Every processor's saved offset arrives (Jet's rule); the source has one processor, so there is one."""
    state["next"] = saved[0]


def sequence_source(count: int, rate: int | None = None):
    """The fault-tolerant sequence ``0 .. count - 1`` (at most ``rate`` numbers a second): its offset is its
    snapshot state.

    >>> sequence_source(10).name
    'sequence-source'
    """
    pause = CHUNK / rate if rate else 0.0
    return (SourceBuilder.stream("sequence-source", lambda ctx: {"next": 0, "count": count, "pause": pause})
            .fill_buffer_fn(_fill)
            .create_snapshot_fn(lambda state: state["next"])
            .restore_snapshot_fn(_restore)
            .build())


class FailOnce:
    """``item -> item``, except that the first item >= ``fail_after`` that passes once ``directory`` holds
    published output raises ``RestartableError``, and the same for ``kill_after`` kills the Python process it
    runs in (a Spark worker); each fault fires once (marker files in ``directory`` survive the restart, which
    rebuilds the processors).

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> fail = FailOnce(out, 3)
    >>> fail(3)  # nothing published yet
    3
    >>> _ = (out / "0-0").write_text("0\\n")
    >>> fail(4)
    Traceback (most recent call last):
    ...
    dag.errors.RestartableError: injected failure at 4 (--fail-after 3)
    >>> fail(4)
    4
    """

    def __init__(self, directory: str | os.PathLike, fail_after: int | None, kill_after: int | None = None):
        self.directory = Path(directory)
        self.fail_after, self.kill_after = fail_after, kill_after

    def __call__(self, item: int) -> int:
        if self._due(item, self.fail_after, MARKER):
            raise RestartableError(f"injected failure at {item} (--fail-after {self.fail_after})")
        if self._due(item, self.kill_after, KILL_MARKER):
            os.kill(os.getpid(), signal.SIGKILL)
        return item

    def _due(self, item: int, after: int | None, marker: str) -> bool:
        """The fault fires now: ``item >= after``, output was published, and it did not fire before (in any
        process: creating the marker decides)."""
        if after is None or item < after or (self.directory / marker).exists():
            return False
        if not self.directory.is_dir() or not any(f.is_file() and not f.name.startswith(".")
                                                  for f in self.directory.iterdir()):
            return False
        try:
            os.close(os.open(self.directory / marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True


def build_dag(output: str | os.PathLike = OUTPUT_DIR, count: int = 100_000, fail_after: int | None = None,
              kill_after: int | None = None, rate: int | None = None) -> DAG:
    """``sequence-source -> fail-once -> sink`` (see the module docstring)."""
    dag = DAG()
    source = dag.new_vertex("sequence-source", sequence_source(count, rate), local_parallelism=1)
    fail = dag.new_vertex("fail-once", map_p(FailOnce(output, fail_after, kill_after)))
    sink = dag.new_vertex("sink", write_file_p(output, exactly_once=True))
    return dag.edge(between(source, fail)).edge(between(fail, sink))


def job_config(snapshot_ms: int = 200):
    """``EXACTLY_ONCE`` with a snapshot every ``snapshot_ms``."""
    from dag import JobConfig, ProcessingGuarantee

    return JobConfig(name="sequence-source", processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE,
                     snapshot_interval_ms=snapshot_ms)


def published_numbers(output: str | os.PathLike) -> list[int]:
    """Every number in the published (visible) files of ``output``, sorted."""
    return sorted(int(line) for f in Path(output).iterdir() if f.is_file() and not f.name.startswith(".")
                  for line in f.read_text(encoding="utf-8").split())


def check(output: str | os.PathLike, count: int) -> str:
    """``"exactly once"``, or what is missing or doubled."""
    numbers = published_numbers(output)
    seen = set(numbers)
    missing = [n for n in range(count) if n not in seen]
    doubled = len(numbers) - len(seen)
    if not missing and not doubled:
        return f"exactly once: each of the {count:,} numbers published once"
    return f"NOT exactly once: {len(missing):,} missing (first {missing[:5]}), {doubled:,} doubled"


def job(output: str = OUTPUT_DIR, count: int = 100_000, fail_after: int = -1):
    """``jetspark render examples/sequence_source.py``; ``fail_after`` < 0 injects no failure."""
    return build_dag(output, count, fail_after if fail_after >= 0 else None)


def main(argv: list[str]) -> int:
    from dag import Engine, JobFailedError

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=OUTPUT_DIR, help=f"output directory (default {OUTPUT_DIR})")
    parser.add_argument("--count", type=int, default=100_000, help="how many numbers (default 100,000)")
    parser.add_argument("--fail-after", type=int, default=None, help="inject a RestartableError at this number")
    parser.add_argument("--kill-after", type=int, default=None, help="kill the Python worker at this number")
    parser.add_argument("--rate", type=int, default=None, help="at most this many numbers a second")
    parser.add_argument("--snapshot-ms", type=int, default=200, help="snapshot interval (default 200 ms)")
    args = parser.parse_args(argv)
    for marker in (MARKER, KILL_MARKER):
        (Path(args.output) / marker).unlink(missing_ok=True)
    with Engine() as engine:
        try:
            dag = build_dag(args.output, args.count, args.fail_after, args.kill_after, args.rate)
            engine.new_job(dag, job_config(args.snapshot_ms)).join()
        except JobFailedError as exc:
            print(f"the job failed: {exc}")
            return 1
    print(check(args.output, args.count))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
