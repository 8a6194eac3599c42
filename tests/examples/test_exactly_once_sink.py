"""examples/exactly_once_sink.py engine-free: the user-written two-phase-commit sink across crashes."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import exactly_once_sink as example  # noqa: E402
from tests.support.snapshots import feed, restore, save, start  # noqa: E402

from processors import Inbox  # noqa: E402


def _published(directory: Path) -> list[int]:
    return sorted(int(line) for f in directory.glob("*.txt") for line in f.read_text().split())


def _prepare(procs):
    entries = save(procs)
    for p, outbox in procs:
        outbox.reset()
        assert p.snapshot_commit_prepare()
        entries += outbox.drain_snapshot()
    return entries


def _finish(procs, success):
    for p, _ in procs:
        assert p.snapshot_commit_finish(success)


def test_sink_when_snapshots_complete_then_published_only_then(tmp_path):
    supplier = example.exactly_once_sink_p(example.TransactionLog(tmp_path))
    procs = start(supplier, 2)
    feed(procs, list(range(10)), lambda item, n: item % n)
    _prepare(procs)
    assert _published(tmp_path) == []
    _finish(procs, True)
    assert _published(tmp_path) == list(range(10))


def test_sink_when_crash_between_prepare_and_finish_then_restore_publishes_exactly_once(tmp_path):
    supplier = example.exactly_once_sink_p(example.TransactionLog(tmp_path))
    procs = start(supplier, 2)
    feed(procs, list(range(10)), lambda item, n: item % n)
    first = _prepare(procs)
    _finish(procs, True)                # snapshot 0 published
    feed(procs, list(range(10, 20)), lambda item, n: item % n)
    second = _prepare(procs)            # snapshot 1 completes on the coordinator; crash before finish
    feed(procs, list(range(20, 25)), lambda item, n: item % n)  # lost: replayed after the restart
    assert first and _published(tmp_path) == list(range(10))
    restored = restore(supplier, second, 3)  # another parallelism; 0-9 may be published again: idempotent
    feed(restored, list(range(20, 30)), lambda item, n: item % n)
    for p, _ in restored:
        p.complete()
    assert _published(tmp_path) == list(range(30))


def test_sink_when_snapshot_fails_then_next_success_publishes_both(tmp_path):
    supplier = example.exactly_once_sink_p(example.TransactionLog(tmp_path))
    procs = start(supplier, 1)
    procs[0][0].process(0, Inbox([1, 2]))
    _prepare(procs)
    _finish(procs, False)
    procs[0][0].process(0, Inbox([3]))
    _prepare(procs)
    assert _published(tmp_path) == []
    _finish(procs, True)
    assert _published(tmp_path) == [1, 2, 3]


def test_example_dag_shape():
    dag = example.build_dag("out", 10)
    assert [v.name for v in dag] == ["sequence", "sink"]
