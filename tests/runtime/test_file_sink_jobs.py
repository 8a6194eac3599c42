"""write_file_p in jobs: the whole job's output appears on success only (failed and cancelled jobs publish
nothing and leave nothing staged, also after join() returned), stale output of an earlier run is replaced; in
a stream job (PIPELINED, with a stream source) lines are appended to the final files live instead."""

from __future__ import annotations

import os
import time

import pytest

from dag import DAG, JobFailedError, JobStatus
from edges import between
from processors import AbstractProcessor, SourceBuilder, map_p, read_list_p, write_file_p
from tests.support import numbers, running, wait_for

pytestmark = pytest.mark.spark


def lines(directory):
    return sorted(int(line) for name in os.listdir(directory) for line in (directory / name).read_text().split())


def write_dag(src, out, parallelism, fn=str):
    dag = DAG()
    s = dag.new_vertex("src", read_list_p(src), local_parallelism=parallelism)
    m = dag.new_vertex("map", map_p(fn), local_parallelism=parallelism)
    w = dag.new_vertex("write", write_file_p(out), local_parallelism=parallelism)
    dag.edge(between(s, m)).edge(between(m, w))
    return dag


def test_write_file_when_rerun_with_lower_parallelism_then_only_this_runs_files(engine, tmp_path):
    out = tmp_path / "out"
    src = numbers(engine, 100)
    engine.new_job(write_dag(src, out, 4)).join(timeout=120)
    assert sorted(os.listdir(out)) == ["0", "1", "2", "3"]
    engine.new_job(write_dag(src, out, 2)).join(timeout=120)
    assert sorted(os.listdir(out)) == ["0", "1"]
    assert lines(out) == list(range(100))


def fail_on_99(x):
    if x == 99:
        raise ValueError("item 99")
    return str(x)


def test_write_file_when_one_processor_fails_then_no_processor_publishes(engine, tmp_path):
    out = tmp_path / "out"
    (tmp_path / "out").mkdir()
    (out / "0").write_text("previous\n")
    job = engine.new_job(write_dag(numbers(engine, 100), out, 4, fail_on_99))
    with pytest.raises(JobFailedError, match="item 99"):
        job.join(timeout=120)
    assert os.listdir(out) == ["0"] and (out / "0").read_text() == "previous\n"


class SlowStr(AbstractProcessor):
    def try_process0(self, item):
        time.sleep(0.002)  # a slow processor (the behaviour): the job is mid-write when cancelled
        return self.try_emit(str(item))


def test_write_file_when_cancelled_mid_write_then_nothing_published_now_or_later(engine, tmp_path):
    out = tmp_path / "out"
    src = numbers(engine, 20_000)
    dag = DAG()
    s = dag.new_vertex("src", read_list_p(src), local_parallelism=2)
    m = dag.new_vertex("slow", SlowStr, local_parallelism=2)
    w = dag.new_vertex("write", write_file_p(out), local_parallelism=2)
    dag.edge(between(s, m)).edge(between(m, w))
    job = engine.new_job(dag)
    wait_for(lambda: out.is_dir() and any(n.startswith(".") for n in os.listdir(out)), 60,
             lambda: f"the sink's staged files in {out} (job {job.status})")
    job.cancel()
    with pytest.raises(JobFailedError, match="cancelled"):
        job.join(timeout=120)
    assert job.status is JobStatus.FAILED
    assert os.listdir(out) == []  # no final file, no staged file
    time.sleep(3.0)  # an observation window (the behaviour): a task still running after join() would show up now
    assert os.listdir(out) == []


def _burst_then_idle(count):
    """A stream source: ``count`` numbers, then nothing more, never completing (what an idle stream looks like)."""

    def fill(state, buf):
        if state["n"] < count:
            for _ in range(min(50, count - state["n"])):
                buf.add(state["n"])
                state["n"] += 1
        else:
            time.sleep(0.01)  # idling (the behaviour): an idle stream source

    return SourceBuilder.stream("burst", lambda ctx: {"n": 0}).fill_buffer_fn(fill).build()


def test_write_file_when_stream_job_runs_then_lines_appear_live_and_stay_after_cancel(engine, tmp_path):
    from tests.support import channel_closed, wait_no_threads_left

    out = tmp_path / "out"
    out.mkdir()
    (out / "0").write_text("-1\n")  # an earlier run's output
    (out / "5").write_text("-1\n")
    dag = DAG()
    src = dag.new_vertex("burst", _burst_then_idle(1000))
    dag.edge(between(src, dag.new_vertex("write", write_file_p(out), local_parallelism=2)))
    with running(engine, dag) as job:  # a stream source: PIPELINED
        # the source goes idle after 1000 lines, far less than a write buffer: only live flushing shows them
        wait_for(lambda: len(lines(out)) >= 1000, 60, "the 1000 lines in the files")
        assert job.status is JobStatus.RUNNING
        assert lines(out) == list(range(1000))  # the earlier run's files were replaced when the job started
        assert sorted(os.listdir(out)) == ["0", "1"]  # final names only, nothing staged
    assert lines(out) == list(range(1000)) and sorted(os.listdir(out)) == ["0", "1"]  # a stream job's output stays
    assert channel_closed(job)
    wait_no_threads_left(engine)
