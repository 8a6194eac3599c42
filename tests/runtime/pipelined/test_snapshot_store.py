"""The snapshot store: atomic files, completion marker last, latest complete lookup, pruning, signatures."""

from __future__ import annotations

import doctest
import os

import pytest

import dag.runtime.pipelined.snapshot_store as snapshot_store
from dag.errors import DagValidationError, JobFailedError
from dag.runtime.pipelined.snapshot_store import COMPLETE_MARKER, SnapshotStore, resolve_snapshot_dir

SECRET = b"s" * 32


@pytest.fixture
def store(tmp_path):
    return SnapshotStore(tmp_path, "job-7", secret=SECRET)


def test_store_module_examples_hold():
    assert doctest.testmod(snapshot_store).failed == 0


def test_read_when_every_processor_wrote_then_entries_in_processor_order(store):
    store.write(3, "agg", 1, [("b", 2)])
    store.write(3, "agg", 0, [("a", 1), ("c", 3)])
    store.mark_complete(3, {"agg": 2})
    assert store.read(3, "agg") == [("a", 1), ("c", 3), ("b", 2)]
    assert store.read(3, "absent") == []
    assert store.processors(3) == {"agg": 2}


def test_latest_complete_when_newer_snapshot_lacks_marker_then_older_one(store):
    store.write(0, "v", 0, [("k", 0)])
    store.mark_complete(0, {"v": 1})
    store.write(1, "v", 0, [("k", 1)])  # crash before the coordinator marked 1 complete
    assert store.snapshot_ids() == [0, 1]
    assert store.latest_complete() == 0
    store.discard_incomplete()
    assert store.snapshot_ids() == [0]


def test_mark_complete_when_a_processor_file_is_missing_then_refused_naming_it(store):
    store.write(2, "sink", 0, [])
    with pytest.raises(JobFailedError, match=r"sink#1"):
        store.mark_complete(2, {"sink": 2})
    assert store.latest_complete() is None


def test_write_when_interrupted_then_no_file_under_final_name(store, monkeypatch):
    def failing_replace(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk gone"):
        store.write(0, "v", 0, [("k", 1)])
    vertex_dir = store.snapshot_path(0) / "v"
    assert list(vertex_dir.iterdir()) == []  # the temp file is removed too


def test_marker_when_write_interrupted_then_snapshot_not_complete(store, monkeypatch):
    store.write(0, "v", 0, [("k", 1)])
    real_replace = os.replace

    def fail_on_marker(src, dst):
        if str(dst).endswith(COMPLETE_MARKER):
            raise OSError("crash")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", fail_on_marker)
    with pytest.raises(OSError):
        store.mark_complete(0, {"v": 1})
    assert store.latest_complete() is None


def test_prune_when_newer_complete_then_older_deleted_newer_in_progress_kept(store):
    for sid in range(3):
        store.write(sid, "v", 0, [("k", sid)])
    store.mark_complete(0, {"v": 1})
    store.mark_complete(1, {"v": 1})
    store.prune(1)
    assert store.snapshot_ids() == [1, 2]
    assert store.read(1, "v") == [("k", 1)]


def test_read_when_file_signed_with_another_secret_then_refused_before_unpickling(tmp_path):
    SnapshotStore(tmp_path, "job", secret=b"other").write(0, "v", 0, [("k", 1)])
    store = SnapshotStore(tmp_path, "job", secret=SECRET)
    store.mark_complete(0, {"v": 1})
    with pytest.raises(JobFailedError, match="not a valid snapshot"):
        store.read(0, "v")


def test_vertex_names_when_they_hold_path_characters_then_kept_apart(store):
    store.write(0, "../x", 0, [("a", 1)])
    store.write(0, ".hidden/y", 0, [("b", 2)])
    store.mark_complete(0, {"../x": 1, ".hidden/y": 1})
    assert store.read(0, "../x") == [("a", 1)]
    assert store.read(0, ".hidden/y") == [("b", 2)]
    assert all(p.parent == store.snapshot_path(0) for p in store.snapshot_path(0).iterdir())


def test_delete_all_when_job_done_then_directory_gone(store):
    store.write(0, "v", 0, [])
    store.delete_all()
    assert not store.job_dir.exists()
    assert store.snapshot_ids() == []


def test_resolve_snapshot_dir_when_none_then_temp_locally_and_error_on_cluster():
    path, temporary = resolve_snapshot_dir(None, local=True)
    try:
        assert temporary and os.path.isdir(path)
    finally:
        os.rmdir(path)
    with pytest.raises(DagValidationError, match="snapshot_dir"):
        resolve_snapshot_dir(None, local=False)
    assert resolve_snapshot_dir("/shared", local=False) == ("/shared", False)


def test_store_when_secret_empty_then_rejected(tmp_path):
    with pytest.raises(DagValidationError, match="secret"):
        SnapshotStore(tmp_path, "j", secret=b"")


def test_done_processors_when_listed_then_no_file_needed_and_reported(store):
    store.write(0, "src", 1, [("pos", 9)])
    store.mark_complete(0, {"src": 2}, done={"src": [0]})
    assert store.done_processors(0) == {"src": [0]}
    assert store.read(0, "src") == [("pos", 9)]
