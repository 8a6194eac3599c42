"""write_file_p(exactly_once=True): two-phase commit per snapshot, restore commits, leftovers aborted."""

from __future__ import annotations

import os

import pytest

from dag.config import ProcessingGuarantee
from processors import Context, Inbox, Outbox, write_file_p
from processors.io.transactional_files import TransactionalWriteFileP

EXACTLY_ONCE = ProcessingGuarantee.EXACTLY_ONCE


def _proc(directory, index=0, total=1, guarantee=EXACTLY_ONCE):
    (p,) = write_file_p(directory, exactly_once=True).get([0])(0).get(1)
    assert isinstance(p, TransactionalWriteFileP)
    outbox = Outbox([], snapshot_capacity=1 << 20)
    p.init(outbox, Context(vertex_name="sink", global_processor_index=index, local_processor_index=index,
                           total_parallelism=total, local_parallelism=total, processing_guarantee=guarantee))
    return p, outbox


def _process(p, items):
    p.process(0, Inbox(items))


def _snapshot(p, outbox):
    """save_to_snapshot + prepare, as the runtime does at a barrier; returns the saved entries."""
    assert p.save_to_snapshot() and p.snapshot_commit_prepare()
    return outbox.drain_snapshot()


def _restore(directory, entries, index=0, total=1):
    p, outbox = _proc(directory, index, total)
    p.restore_from_snapshot(Inbox(entries))
    assert p.finish_snapshot_restore()
    return p, outbox


def _visible(directory):
    return {name: open(os.path.join(directory, name)).read().split()
            for name in sorted(os.listdir(directory)) if not name.startswith(".")}


def _published_lines(directory):
    return sorted(line for lines in _visible(directory).values() for line in lines)


def test_snapshot_when_it_completes_then_its_lines_published_not_before(tmp_path):
    p, outbox = _proc(tmp_path)
    _process(p, ["a", "b"])
    _snapshot(p, outbox)
    assert _visible(tmp_path) == {}
    p.snapshot_commit_finish(True)
    assert _visible(tmp_path) == {"0-0": ["a", "b"]}


def test_failed_snapshot_when_next_succeeds_then_both_published(tmp_path):
    p, outbox = _proc(tmp_path)
    _process(p, ["a"])
    _snapshot(p, outbox)
    p.snapshot_commit_finish(False)
    _process(p, ["b"])
    _snapshot(p, outbox)
    assert _visible(tmp_path) == {}
    p.snapshot_commit_finish(True)
    assert _visible(tmp_path) == {"0-0": ["a"], "0-1": ["b"]}


def test_crash_between_prepare_and_finish_when_restored_then_committed_once_and_later_lines_replayed(tmp_path):
    p, outbox = _proc(tmp_path)
    _process(p, ["a", "b"])
    saved = _snapshot(p, outbox)  # snapshot 0 completes on the coordinator, the crash comes before finish
    _process(p, ["c"])            # after the barrier: lost with the crash, replayed by the source
    p.close()
    assert _visible(tmp_path) == {}
    q, outbox = _restore(tmp_path, saved)
    _process(q, ["c"])
    assert q.complete()
    assert _published_lines(tmp_path) == ["a", "b", "c"]
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]


def test_crash_after_prepare_of_uncompleted_snapshot_when_restored_from_older_then_aborted(tmp_path):
    p, outbox = _proc(tmp_path)
    _process(p, ["a"])
    saved = _snapshot(p, outbox)
    p.snapshot_commit_finish(True)
    _process(p, ["b"])
    _snapshot(p, outbox)  # snapshot 1 never completes
    p.close()
    q, _ = _restore(tmp_path, saved)
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # the prepared file of 1 is gone
    _process(q, ["b"])
    q.complete()
    assert _visible(tmp_path) == {"0-0": ["a"], "0-2": ["b"]}  # sequence 1 (aborted) is never reused


def test_crash_during_commit_when_restored_then_commit_idempotent(tmp_path, monkeypatch):
    p, outbox = _proc(tmp_path)
    _process(p, ["a"])
    _snapshot(p, outbox)
    p.snapshot_commit_finish(False)
    _process(p, ["b"])
    saved = _snapshot(p, outbox)
    real_replace, calls = os.replace, []

    def replace_once_then_crash(src, dst):
        calls.append(dst)
        if len(calls) > 1:
            raise OSError("killed during commit")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_once_then_crash)
    with pytest.raises(OSError):
        p.snapshot_commit_finish(True)
    monkeypatch.setattr(os, "replace", real_replace)
    p.close()
    _restore(tmp_path, saved)[0].complete()
    assert _published_lines(tmp_path) == ["a", "b"]


def test_restore_into_fewer_processors_then_every_owner_committed_and_sequences_not_reused(tmp_path):
    saved = []
    for index in range(2):
        p, outbox = _proc(tmp_path, index, 2)
        _process(p, [f"x{index}"])
        saved += _snapshot(p, outbox)
        p.close()
    q, _ = _restore(tmp_path, saved, 0, 1)
    _process(q, ["y"])
    q.complete()
    visible = _visible(tmp_path)
    assert _published_lines(tmp_path) == ["x0", "x1", "y"]
    assert visible["0-0"] == ["x0"] and visible["1-0"] == ["x1"] and visible["0-1"] == ["y"]


def test_complete_when_bounded_job_ends_then_everything_published(tmp_path):
    p, outbox = _proc(tmp_path)
    _process(p, ["a"])
    _snapshot(p, outbox)
    _process(p, ["b"])
    assert p.complete()
    p.close()
    assert _published_lines(tmp_path) == ["a", "b"]


def test_guarantee_not_exactly_once_then_plain_file_per_processor(tmp_path):
    p, _ = _proc(tmp_path, guarantee=ProcessingGuarantee.AT_LEAST_ONCE)
    _process(p, ["a"])
    assert p.complete()
    p.close()
    assert _visible(tmp_path) == {"0": ["a"]}


def test_write_file_p_when_exactly_once_not_bool_then_rejected(tmp_path):
    from dag.errors import DagValidationError

    with pytest.raises(DagValidationError, match="exactly_once"):
        write_file_p(tmp_path, exactly_once="yes")
