"""SnapshotCoordinator bookkeeping and RestartPolicy (pure)."""

from __future__ import annotations

import doctest

import pytest

import dag.runtime.pipelined.snapshot_coordinator as snapshot_coordinator
from dag.errors import JobFailedError
from dag.runtime.pipelined.sink_ledger import SinkLedger
from dag.runtime.pipelined.snapshot_coordinator import RestartPolicy, SnapshotCoordinator, completed_on_restore, is_restartable
from dag.runtime.pipelined.snapshot_store import SnapshotStore


@pytest.fixture
def store(tmp_path):
    return SnapshotStore(tmp_path, "job", secret=b"k" * 16)


def test_coordinator_examples_hold():
    assert doctest.testmod(snapshot_coordinator).failed == 0


def test_start_when_interval_not_elapsed_or_snapshot_in_progress_then_none(store):
    coord = SnapshotCoordinator(store, {"v": 1}, interval_ms=1000)
    assert coord.start(now=5.0) is None  # the execution has not started
    coord.execution_started(now=10.0)
    assert coord.start(now=10.5) is None
    assert coord.start(now=11.0) == 0
    assert coord.start(now=50.0) is None  # 0 is in progress


def test_complete_when_all_reported_then_marker_prune_publish_and_next_due_after_interval(store):
    published = []
    ledger = SinkLedger(lambda kind, name, items: published.extend(items))
    coord = SnapshotCoordinator(store, {"v": 2}, interval_ms=1000, ledger=ledger)
    coord.execution_started(0.0)
    for expected_id in (0, 1):
        sid = coord.start(now=100.0 * (expected_id + 1))
        assert sid == expected_id
        ledger.stage(("sink", 0), ("list", "out"), [sid]); ledger.seal(("sink", 0), sid)
        for g in range(2):
            store.write(sid, "v", g, [(g, sid)])
            assert coord.missing() == [f"v#{i}" for i in range(g, 2)]
            coord.report(sid, "v", g)
        assert coord.complete_if_ready(now=100.0 * (expected_id + 1)) == sid
    assert store.snapshot_ids() == [1] and store.read(1, "v") == [(0, 1), (1, 1)]
    assert published == [0, 1]
    assert coord.start(now=200.5) is None and coord.start(now=201.0) == 2


def test_complete_when_reported_file_missing_then_refused(store):
    coord = SnapshotCoordinator(store, {"v": 1}, interval_ms=0)
    coord.execution_started(0.0)
    sid = coord.start(0.0)
    coord.report(sid, "v", 0)  # but the worker's write never reached the shared directory
    with pytest.raises(JobFailedError, match="v#0"):
        coord.complete_if_ready()


def test_fail_when_in_progress_then_discarded_and_id_consumed(store):
    coord = SnapshotCoordinator(store, {"v": 1}, interval_ms=0)
    coord.execution_started(0.0)
    sid = coord.start(0.0)
    store.write(sid, "v", 0, [])
    assert coord.fail("write failed") == 0 and store.snapshot_ids() == []
    assert coord.start(0.0) == 1


def test_prepare_restart_when_snapshots_exist_then_latest_complete_and_ledger_rolled_back(store):
    published = []
    ledger = SinkLedger(lambda kind, name, items: published.extend(items))
    coord = SnapshotCoordinator(store, {"v": 1}, interval_ms=0, ledger=ledger)
    assert coord.prepare_restart() is None
    coord.execution_started(0.0)
    sid = coord.start(0.0); store.write(sid, "v", 0, []); coord.report(sid, "v", 0); coord.complete_if_ready()
    sid = coord.start(0.0); store.write(sid, "v", 0, [])  # crash while 1 is in progress
    ledger.stage(("s", 0), ("list", "o"), ["late"])
    assert coord.prepare_restart() == 0
    assert store.snapshot_ids() == [0] and ledger.pending() == 0 and published == []
    coord.execution_started(0.0)
    assert coord.start(0.0) == 2  # ids survive restarts


def test_report_done_when_processor_completed_then_no_file_needed(store):
    coord = SnapshotCoordinator(store, {"src": 1}, interval_ms=0)
    coord.execution_started(0.0)
    sid = coord.start(0.0)
    coord.report_done(sid, "src", 0)
    assert coord.complete_if_ready() == sid and store.done_processors(sid) == {"src": [0]}


def test_restart_policy_when_failures_repeat_then_stops_after_max_in_a_row():
    policy = RestartPolicy(max_restarts=2)
    restartable = {"exc_type": "RestartableError", "vertex": "src"}
    assert policy.should_restart(restartable, True) and policy.should_restart(None, True)
    assert not policy.should_restart(restartable, True)
    policy.snapshot_completed()
    assert policy.should_restart(restartable, True) and policy.total == 3


def test_restart_policy_when_no_snapshots_or_user_error_then_never():
    policy = RestartPolicy(max_restarts=5)
    assert not policy.should_restart({"exc_type": "RestartableError", "vertex": "v"}, snapshots_enabled=False)
    assert not policy.should_restart({"exc_type": "KeyError", "vertex": "v"}, snapshots_enabled=True)
    assert is_restartable({"exc_type": "ConnectionError", "vertex": None})


def test_finished_processors_when_task_ended_then_done_in_current_and_later_snapshots(store):
    coord = SnapshotCoordinator(store, {"src": 2, "sink": 1}, interval_ms=0)
    coord.execution_started(0.0)
    sid = coord.start(0.0)
    coord.finished([("src", 0), ("src", 1)])
    store.write(sid, "sink", 0, [])
    coord.report(sid, "sink", 0)
    assert coord.complete_if_ready() == sid and store.done_processors(sid) == {"src": [0, 1]}
    sid = coord.start(0.0)
    assert coord.missing() == ["sink#0"]
    coord.prepare_restart()
    coord.execution_started(0.0)
    coord.start(0.0)
    assert coord.missing() == ["src#0", "src#1", "sink#0"]


def test_completed_on_restore_when_same_parallelism_then_same_processors_stay_completed():
    assert completed_on_restore({"src": 3, "map": 2}, {"src": [2, 0]}, {"src": 3, "map": 2}) == {"src": [0, 2]}


def test_completed_on_restore_when_whole_vertex_completed_and_parallelism_changed_then_every_new_processor_completed():
    assert completed_on_restore({"src": 2}, {"src": [0, 1]}, {"src": 4}) == {"src": [0, 1, 2, 3]}
    assert completed_on_restore({"src": 4}, {"src": [0, 1, 2, 3]}, {"src": 1}) == {"src": [0]}


def test_completed_on_restore_when_some_completed_and_parallelism_changed_then_they_run_again_and_logged(caplog):
    with caplog.at_level("WARNING", logger="jetspark.snapshots"):
        assert completed_on_restore({"src": 2, "sink": 1}, {"src": [1], "sink": [0]}, {"src": 3, "sink": 1}) == {
            "sink": [0]}
    assert "vertex 'src': 1 of its 2 processors had completed" in caplog.text
    assert "now has 3 processors, so they all run again" in caplog.text


def test_completed_on_restore_when_vertex_no_longer_exists_then_ignored():
    assert completed_on_restore({"gone": 1}, {"gone": [0]}, {"src": 1}) == {}
