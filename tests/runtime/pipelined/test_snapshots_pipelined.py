"""Snapshots and restarts of PIPELINED jobs on local Spark, with injected faults (issue 12).

Every fault fires once, guarded by a marker file (processors run in Spark's Python workers, not in the test
process): ``RestartableError`` at random items, in ``save_to_snapshot`` and in a sink's
``snapshot_commit_finish`` (a crash between prepare and finish), and a killed Python worker. Per guarantee:
EXACTLY_ONCE gives every output exactly once, AT_LEAST_ONCE loses nothing, NONE fails with the error; a plain
user exception fails the job under every guarantee.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from pathlib import Path

import pytest

from dag import (DAG, Engine, EngineConfig, ExecutionMode, JobConfig, JobFailedError, ProcessingGuarantee,
                 RestartableError)
from dag import JobStatus
from edges import between
from processors import (AbstractProcessor, Processor, aggregate_by_key_p, counting, write_file_p,
                        write_list_p)
from tests.support import counter_stream, once, running, wait_for
from tests.support.processors import FailAt, sequence

pytestmark = pytest.mark.spark

EXACTLY_ONCE, AT_LEAST_ONCE, NONE = (ProcessingGuarantee.EXACTLY_ONCE, ProcessingGuarantee.AT_LEAST_ONCE,
                                     ProcessingGuarantee.NONE)
N = 6000
TIMEOUT = 240


def _config(guarantee, **kw):
    return JobConfig(execution_mode=ExecutionMode.PIPELINED, processing_guarantee=guarantee,
                     snapshot_interval_ms=kw.pop("snapshot_interval_ms", 100), **kw)


def _pipeline(sink_supplier, middle, count=N, until=None):
    dag = DAG()
    source = dag.new_vertex("sequence", sequence(count, until=until))
    mid = dag.new_vertex("middle", middle, local_parallelism=2)
    sink = dag.new_vertex("sink", sink_supplier, local_parallelism=1)
    dag.edge(between(source, mid))
    dag.edge(between(mid, sink))
    return dag


def _run(engine, dag, config):
    job = engine.new_job(dag, config)
    job.join(timeout=TIMEOUT)
    return job


def _counts(items):
    c = Counter(items)
    return len(set(range(N)) - set(c)), sum(n - 1 for n in c.values())


def test_exactly_once_when_restartable_errors_at_random_items_then_every_item_once(engine, tmp_path):
    points = random.Random(7).sample(range(N // 10, N), 3)
    dag = _pipeline(write_list_p("eo-random"), lambda: FailAt(points, tmp_path))
    job = _run(engine, dag, _config(EXACTLY_ONCE))
    assert job.status is JobStatus.COMPLETED
    assert _counts(engine.get_list("eo-random")) == (0, 0)
    assert sorted(m.name for m in tmp_path.iterdir()) == sorted(f"item-{p}" for p in points)  # all 3 fired
    # Two injected failures can hit the two middle processors within one execution: one restart covers both.
    assert 1 <= job.metrics().restarts <= 3


def test_restart_when_restartable_error_then_tasks_keep_their_python_workers_and_timeline_logged(
        engine, tmp_path, caplog):
    dag = _pipeline(write_list_p("eo-reuse"), lambda: FailAt([N // 2], tmp_path))
    with caplog.at_level(logging.DEBUG, logger="jetspark.snapshots"):
        job = _run(engine, dag, _config(EXACTLY_ONCE))
    assert _counts(engine.get_list("eo-reuse")) == (0, 0)
    timelines = [r.timeline for r in caplog.records if hasattr(r, "timeline")]
    assert len(timelines) == job.metrics().restarts == 1
    steps = timelines[0]
    # the failed execution's tasks ended normally, so Spark handed their Python workers to the new execution
    assert steps["fresh python workers"] == 0
    assert 0 <= steps["stage submitted"] <= steps["tasks entered"] <= steps["tasks connected"]


def test_exactly_once_when_python_worker_killed_then_every_item_once(engine, tmp_path):
    dag = _pipeline(write_list_p("eo-kill"), lambda: FailAt([N // 2], tmp_path, kill=True))
    job = _run(engine, dag, _config(EXACTLY_ONCE))
    assert _counts(engine.get_list("eo-kill")) == (0, 0)
    assert job.metrics().restarts >= 1


def test_exactly_once_file_sink_when_restarted_then_each_line_once_and_nothing_staged(engine, tmp_path):
    out = tmp_path / "out"
    markers = tmp_path / "m"
    markers.mkdir()
    dag = _pipeline(write_file_p(out, exactly_once=True), lambda: FailAt([N // 3, 2 * N // 3], markers))
    _run(engine, dag, _config(EXACTLY_ONCE))
    lines = [int(x) for f in out.iterdir() for x in f.read_text().split()]
    assert _counts(lines) == (0, 0)
    assert not [f.name for f in out.iterdir() if f.name.startswith(".")]


class FlakySave(AbstractProcessor):
    """Counts items; fails once while saving (a failure during the snapshot write); saves and restores the count."""

    def __init__(self, markers: Path):
        super().__init__()
        self.markers, self.count = markers, 0

    def init_processor(self, context):
        self.index = context.global_processor_index

    def try_process0(self, item):
        self.count += 1
        return self.try_emit(item)

    def save_to_snapshot(self):
        if self.count > 0 and once(self.markers / f"save-{self.index}"):
            raise RestartableError("disk full while saving")
        return self.try_emit_to_snapshot(("count", self.index), self.count)

    def restore_from_snapshot_entry(self, key, value):
        self.count += value


def test_exactly_once_when_save_fails_then_restarted_and_every_item_once(engine, tmp_path):
    dag = _pipeline(write_list_p("eo-save"), lambda: FlakySave(tmp_path))
    job = _run(engine, dag, _config(EXACTLY_ONCE))
    assert _counts(engine.get_list("eo-save")) == (0, 0)
    assert job.metrics().restarts >= 1


class CommitFailsOnce(Processor):
    """A pass-through whose phase 2 raises once: the crash comes after prepare, before finish."""

    def __init__(self, markers: Path):
        self.markers = markers

    def init(self, outbox, context):
        self.outbox = outbox

    def process(self, ordinal, inbox):
        while inbox:
            if not self.outbox.offer(inbox.peek()):
                return
            inbox.poll()

    def snapshot_commit_finish(self, success):
        if once(self.markers / "commit"):
            raise RestartableError("crash between prepare and finish")
        return True


def test_exactly_once_when_crash_between_prepare_and_finish_then_every_item_once(engine, tmp_path):
    marker = tmp_path / "commit"
    # the source ends only after a snapshot's phase 2 ran (and crashed): the restart happens whatever the timing
    dag = _pipeline(write_list_p("eo-commit"), lambda: CommitFailsOnce(tmp_path), until=marker.exists)
    job = _run(engine, dag, _config(EXACTLY_ONCE))
    assert _counts(engine.get_list("eo-commit")) == (0, 0)
    assert job.metrics().restarts == 1


def test_at_least_once_when_restarted_then_nothing_lost(engine, tmp_path):
    dag = _pipeline(write_list_p("alo"), lambda: FailAt([N // 2], tmp_path))
    _run(engine, dag, _config(AT_LEAST_ONCE))
    assert _counts(engine.get_list("alo"))[0] == 0


def test_at_least_once_plain_file_sink_when_restarted_then_no_line_lost_and_nothing_staged(engine, tmp_path):
    out = tmp_path / "out"
    markers = tmp_path / "m"
    markers.mkdir()
    dag = _pipeline(write_file_p(out), lambda: FailAt([N // 3, 2 * N // 3], markers))
    job = _run(engine, dag, _config(AT_LEAST_ONCE))
    assert job.metrics().restarts >= 1
    lines = [int(x) for f in out.iterdir() for x in f.read_text().split()]
    assert _counts(lines)[0] == 0  # the lines staged before the restart are published too
    assert not [f.name for f in out.iterdir() if f.name.startswith(".")]


def test_none_when_restartable_error_then_job_fails_with_it(engine, tmp_path):
    dag = _pipeline(write_list_p("none"), lambda: FailAt([N // 2], tmp_path))
    with pytest.raises(JobFailedError, match="injected") as failure:
        _run(engine, dag, _config(NONE))
    assert failure.value.exc_type == "RestartableError" and failure.value.vertex == "middle"


@pytest.mark.parametrize("guarantee", [EXACTLY_ONCE, AT_LEAST_ONCE])
def test_user_exception_when_snapshotting_then_job_fails_without_restart(engine, tmp_path, guarantee):
    dag = _pipeline(write_list_p(f"user-{guarantee.value}"), lambda: FailAt([N // 2], tmp_path, error=KeyError))
    job = engine.new_job(dag, _config(guarantee))
    with pytest.raises(JobFailedError, match="injected") as failure:
        job.join(timeout=TIMEOUT)
    assert failure.value.exc_type == "KeyError" and job.metrics().restarts == 0


class AlwaysRestartable(AbstractProcessor):
    def try_process0(self, item):
        raise RestartableError("always")


def test_restarts_when_failure_repeats_then_job_stops_after_max_with_last_error(engine):
    dag = _pipeline(write_list_p("max"), AlwaysRestartable, count=100)
    job = engine.new_job(dag, _config(EXACTLY_ONCE, max_restarts=2))
    with pytest.raises(JobFailedError, match="always"):
        job.join(timeout=TIMEOUT)
    assert job.metrics().restarts == 2 and job.status is JobStatus.FAILED


@pytest.mark.parametrize("members", [1, 2])
def test_keyed_state_when_restarted_then_counts_exact(engine, tmp_path, members):
    """On two members the source runs once (a stand-in on the other member completes at once and is restored as
    completed), the counts' keys cross members over a distributed edge, and the tasks exchange barriers."""
    if members == 2:
        engine = Engine(EngineConfig(members=2), spark=engine.spark)
    dag = DAG()
    source = dag.new_vertex("sequence", sequence(N))
    fail = dag.new_vertex("fail", lambda: FailAt([N // 2], tmp_path), local_parallelism=1)
    count = dag.new_vertex("count", aggregate_by_key_p(lambda x: x % 7, counting()), local_parallelism=2)
    sink = dag.new_vertex("sink", write_list_p(f"keyed-{members}"), local_parallelism=1)
    dag.edge(between(source, fail))
    dag.edge(between(fail, count).partitioned(lambda x: x % 7).distributed())
    dag.edge(between(count, sink))
    job = _run(engine, dag, _config(EXACTLY_ONCE))
    assert sorted(engine.get_list(f"keyed-{members}")) == sorted(Counter(x % 7 for x in range(N)).items())
    assert job.metrics().restarts == 1


class SavesButCannotRestore(Processor):
    def init(self, outbox, context):
        self.outbox = outbox

    def process(self, ordinal, inbox):
        inbox.clear()

    def save_to_snapshot(self):
        return self.outbox.offer_to_snapshot("state", 1)


def test_restore_when_processor_does_not_override_restore_then_fails_naming_vertex_and_class(engine, tmp_path):
    dag = DAG()
    source = dag.new_vertex("sequence", sequence(N, until=(tmp_path / f"item-{N // 2}").exists))
    fail = dag.new_vertex("fail", lambda: FailAt([N // 2], tmp_path, after_commit=True), local_parallelism=1)
    stateful = dag.new_vertex("stateful", SavesButCannotRestore, local_parallelism=1)
    dag.edge(between(source, fail))
    dag.edge(between(fail, stateful))
    with pytest.raises(JobFailedError, match=r"vertex 'stateful'.*SavesButCannotRestore.*restore_from_snapshot"):
        _run(engine, dag, _config(EXACTLY_ONCE))


def _suspended(job, out) -> int:
    """Suspend ``job``, check it is SUSPENDED and publishes nothing for a second; returns the output's length."""
    job.suspend()
    assert job.status is JobStatus.SUSPENDED
    frozen = len(out)
    time.sleep(1.0)  # an observation window (the behaviour): nothing may arrive while suspended
    assert len(out) == frozen  # nothing runs while suspended
    return frozen


def test_suspend_resume_restart_when_stream_job_then_output_contiguous_and_exactly_once(engine):
    dag = DAG()
    source = dag.new_vertex("ticks", counter_stream("ticks", pause=0.005))
    sink = dag.new_vertex("sink", write_list_p("suspended"), local_parallelism=1)
    dag.edge(between(source, sink))
    out = engine.get_list("suspended")
    with running(engine, dag, _config(EXACTLY_ONCE, snapshot_interval_ms=200), TIMEOUT) as job:
        wait_for(lambda: len(out) > 500, 60, "output before the suspension")
        frozen = _suspended(job, out)
        assert job.metrics().last_snapshot is not None  # the snapshot the suspension took
        job.resume()
        wait_for(lambda: len(out) > frozen + 500, 60, "output after the resume")
        job.restart()
        assert job.status is JobStatus.RUNNING
        wait_for(lambda: len(out) > frozen + 1000, 60, "output after the restart")
    items = list(out)
    assert items == list(range(len(items)))  # every published item once, none skipped


def test_suspend_when_terminal_snapshot_fails_then_suspends_and_resumes_from_last_complete(engine, monkeypatch, caplog):
    from dag.runtime.pipelined.snapshot_coordinator import SnapshotCoordinator

    dag = DAG()
    source = dag.new_vertex("ticks", counter_stream("ticks", pause=0.005))
    dag.edge(between(source, dag.new_vertex("sink", write_list_p("suspend-failed"), local_parallelism=1)))
    out = engine.get_list("suspend-failed")
    with running(engine, dag, _config(EXACTLY_ONCE, snapshot_interval_ms=200), TIMEOUT) as job:
        wait_for(lambda: len(out) > 300 and job.metrics().last_snapshot is not None, 60, "output and a snapshot")
        complete_if_ready = SnapshotCoordinator.complete_if_ready

        def failing(self, now=0.0):
            if self.in_progress is not None:
                raise OSError("no space left on device (injected)")
            return complete_if_ready(self, now)

        monkeypatch.setattr(SnapshotCoordinator, "complete_if_ready", failing)
        with caplog.at_level(logging.WARNING, logger="jetspark.snapshots"):
            job.suspend()  # as in Jet: the terminal snapshot fails, the job suspends anyway
        assert job.status is JobStatus.SUSPENDED
        assert "suspending anyway, the job will resume from snapshot" in caplog.text
        monkeypatch.undo()
        frozen = len(out)
        job.resume()
        wait_for(lambda: len(out) > frozen + 300, 60, "output after the resume")
    items = list(out)
    assert items == list(range(len(items)))  # rolled back to the last complete snapshot: nothing lost or repeated


def test_suspend_resume_restart_when_guarantee_none_then_each_execution_starts_from_scratch(engine):
    dag = DAG()
    source = dag.new_vertex("ticks", counter_stream("ticks", pause=0.005))
    dag.edge(between(source, dag.new_vertex("sink", write_list_p("no-snapshots"), local_parallelism=1)))
    out = engine.get_list("no-snapshots")
    with running(engine, dag, _config(NONE), TIMEOUT) as job:
        wait_for(lambda: len(out) > 300, 60, "output before the suspension")
        frozen = _suspended(job, out)
        job.resume()
        wait_for(lambda: len(out) > frozen + 300, 60, "output after the resume")
        job.restart()
        assert job.status is JobStatus.RUNNING
        wait_for(lambda: list(out).count(0) == 3 and len(out) > frozen + 600, 60,
                 lambda: f"output of the third execution: {list(out).count(0)} starts from 0 in {len(out)} items "
                         f"(suspended at {frozen}), job {job.status.name}, {job.metrics().restarts} restarts")
        assert job.metrics().restarts == 0 and job.metrics().last_snapshot is None
    items = list(out)
    starts = [i for i, item in enumerate(items) if item == 0]
    assert len(starts) == 3 and starts[1] == frozen  # without snapshots the source starts over, as in Jet
    for begin, end in zip(starts, starts[1:] + [len(items)]):
        assert items[begin:end] == list(range(end - begin))  # each execution's output in order, from scratch
