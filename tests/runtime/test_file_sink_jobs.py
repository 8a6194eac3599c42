"""write_file_p in jobs: the whole job's output appears on success only (failed and cancelled jobs publish
nothing and leave nothing staged, also after join() returned), stale output of an earlier run is replaced."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from dag import DAG, JobFailedError, JobStatus
from edges import between
from processors import AbstractProcessor, map_p, read_list_p, write_file_p

pytestmark = pytest.mark.spark


def numbers(engine, n):
    name = f"nums-{uuid.uuid4().hex}"
    engine.get_list(name).extend(range(n))
    return name


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
        time.sleep(0.002)
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
    deadline = time.time() + 60
    while not (out.is_dir() and any(n.startswith(".") for n in os.listdir(out))) and time.time() < deadline:
        time.sleep(0.05)
    assert out.is_dir(), "the sink never started"
    time.sleep(1.0)
    job.cancel()
    with pytest.raises(JobFailedError, match="cancelled"):
        job.join(timeout=120)
    assert job.status is JobStatus.FAILED
    assert os.listdir(out) == []  # no final file, no staged file
    time.sleep(3.0)  # a task still running after join() would show up now
    assert os.listdir(out) == []
