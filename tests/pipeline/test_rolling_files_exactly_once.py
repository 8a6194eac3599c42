"""Sinks.files_builder(...).roll_by_...(...).exactly_once(True): rolled files inside the two-phase commit."""

from __future__ import annotations

import os
import time

import pytest

from dag import ExecutionMode, JobConfig
from dag.config import ProcessingGuarantee
from pipeline import Pipeline, Sinks, TestSources
from processors import Context, Inbox, Outbox
from pipeline.rolling_files import RollingFileWriterP, RollingTransactionalWriteFileP


def _proc(directory, guarantee=ProcessingGuarantee.EXACTLY_ONCE, index=0, total=1):
    sink = Sinks.files_builder(directory).roll_by_file_size(20).roll_by_date("YYYY").exactly_once(True).build()
    (p,) = sink.supplier.get([0])(0).get(1)
    assert isinstance(p, RollingTransactionalWriteFileP)
    outbox = Outbox([], snapshot_capacity=1 << 20)
    p.init(outbox, Context(vertex_name="filesSink", global_processor_index=index, local_processor_index=index,
                           total_parallelism=total, local_parallelism=total, processing_guarantee=guarantee))
    return p, outbox


def _snapshot(p, outbox):
    assert p.save_to_snapshot() and p.snapshot_commit_prepare()
    return outbox.drain_snapshot()


def _visible(directory):
    return {name: open(os.path.join(directory, name)).read().split()
            for name in sorted(os.listdir(directory)) if not name.startswith(".")}


def _lines(directory):
    files = sorted(_visible(directory).items(), key=lambda kv: int(kv[0].rsplit("-", 1)[1]))
    return [line for _, lines in files for line in lines]


def test_rolled_files_when_snapshot_completes_then_all_published_under_dated_names(tmp_path):
    p, outbox = _proc(tmp_path)
    items = [f"item-{i}" for i in range(7)]  # 7 bytes a line: two lines fit in 20 bytes
    p.process(0, Inbox(items))
    _snapshot(p, outbox)
    assert _visible(tmp_path) == {}  # prepared, not yet committed
    p.snapshot_commit_finish(True)
    visible = _visible(tmp_path)
    year = time.strftime("%Y")
    assert len(visible) == 4 and all(name.startswith(f"{year}-0-") for name in visible)
    assert all(os.path.getsize(tmp_path / name) <= 20 for name in visible)
    assert _lines(tmp_path) == items


def test_restart_when_snapshot_completed_but_not_committed_then_restored_processor_commits_every_rolled_file(
        tmp_path):
    p, outbox = _proc(tmp_path)
    p.process(0, Inbox([f"a-{i}" for i in range(5)]))
    saved = _snapshot(p, outbox)  # the snapshot completes, but the process dies before commit_finish
    p.process(0, Inbox(["after-snapshot"]))  # replayed after the restart: must never be published twice
    restored, _ = _proc(tmp_path)
    restored.restore_from_snapshot(Inbox(saved))
    assert restored.finish_snapshot_restore()
    assert _lines(tmp_path) == [f"a-{i}" for i in range(5)]
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # the aborted file is gone
    restored.process(0, Inbox(["after-snapshot"]))
    assert restored.complete()
    assert _lines(tmp_path) == [f"a-{i}" for i in range(5)] + ["after-snapshot"]


def test_rolling_exactly_once_sink_when_job_is_not_exactly_once_then_writes_as_the_rolling_sink(tmp_path):
    p, _ = _proc(tmp_path, guarantee=ProcessingGuarantee.AT_LEAST_ONCE)
    assert isinstance(p._rolling, RollingFileWriterP)  # noqa: SLF001
    p.process(0, Inbox(["x", "y"]))
    assert p.complete()
    assert _lines(tmp_path) == ["x", "y"]


@pytest.mark.spark
def test_rolling_exactly_once_sink_when_pipelined_job_snapshots_then_every_line_once_in_small_files(engine,
                                                                                                  tmp_path):
    items = [f"n{i:04d}" for i in range(400)]
    out = tmp_path / "rolled"
    p = Pipeline.create()
    (p.read_from(TestSources.items(*items)).map(str.upper)
     .write_to(Sinks.files_builder(out).roll_by_file_size(60).exactly_once(True).build()))
    config = JobConfig(processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE, snapshot_interval_ms=50,
                       execution_mode=ExecutionMode.PIPELINED)
    engine.new_job(p, config).join(timeout=300)
    names = os.listdir(out)
    assert names and not [n for n in names if n.startswith(".")]
    assert all(os.path.getsize(out / n) <= 60 for n in names)
    assert sorted(line for n in names for line in (out / n).read_text().split()) == [i.upper() for i in items]
