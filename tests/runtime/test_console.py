"""What a user sees on the console: a failed job is one clean error, not ~100 lines of JVM logs; no Spark
start-up banner; ``JETSPARK_SPARK_LOGS=1`` brings Spark's own error logging back. Engines in a fresh process:
the SparkContext stops with the last engine using it, and a session stopped behind an engine's back gives a
clear error. Each Spark case runs in a subprocess (its own JVM), so its stderr can be captured."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dag.errors import JobFailedError
from dag.runtime.common import session
from jetspark_cli.main import _job_failure

REPO = Path(__file__).resolve().parents[2]
JVM_NOISE = ("WARNING: Using incubator modules",)  # printed by the JVM itself; Spark offers no switch


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), **env}
    return subprocess.run(args, capture_output=True, text=True, timeout=400, cwd=cwd, env=environ)


def _stderr_lines(done: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith(JVM_NOISE)]


FAILING_TARGET = '''
from dag import DAG
from edges import between
from processors import map_p, read_list_p, write_list_p
from jetspark_cli.spec import JobSpec

def boom(x):
    if x == 3:
        raise ValueError("cannot handle 3")
    return x

def job():
    dag = DAG()
    numbers = dag.new_vertex("numbers", read_list_p("in"))
    work = dag.new_vertex("boom", map_p(boom))
    dag.edge(between(numbers, work)).edge(between(work, dag.new_vertex("sink", write_list_p("out"))))
    return JobSpec(dag, prepare=lambda engine: engine.get_list("in").extend(range(5)))
'''


@pytest.mark.spark
def test_cli_run_when_job_fails_then_stderr_is_one_paragraph_without_jvm_logs(tmp_path):
    (tmp_path / "failing_job.py").write_text(FAILING_TARGET)
    done = _run([sys.executable, "-m", "jetspark_cli.main", "run", "failing_job.py", "--master", "local[1]"],
                tmp_path)
    assert done.returncode == 1
    lines = _stderr_lines(done)
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("jetspark run: job 'job' failed: ValueError in vertex 'boom', processor #0: "
                               "cannot handle 3 (at ")
    assert "failing_job.py, line 9, in boom" in lines[0]


def test_job_failure_when_no_vertex_then_message_on_one_line():
    assert _job_failure(JobFailedError("Job 'j' failed:\n  executor lost")) == "the job failed: Job 'j' failed: executor lost"


def test_log4j2_config_when_debug_switch_then_task_failure_loggers_back(monkeypatch):
    quiet = session.log4j2_properties(spark_logs=False)
    assert "logger.task0.name = org.apache.spark.executor.Executor\nlogger.task0.level = off" in quiet
    assert "org.apache.spark.executor.Executor" not in session.log4j2_properties(spark_logs=True)
    monkeypatch.setenv(session.SPARK_LOGS_ENV, "1")
    assert "level = off" not in Path(session._quiet_log4j_file()).read_text()
    monkeypatch.setenv(session.SPARK_LOGS_ENV, "0")
    assert "level = off" in Path(session._quiet_log4j_file()).read_text()


ENGINES_SCRIPT = '''
import sys
from pyspark import SparkContext
from dag import DAG, Engine, EngineConfig, JobFailedError
from dag.errors import DagValidationError
from edges import between
from processors import map_p, read_list_p, write_list_p

def boom(x):
    if x == 3:
        raise ValueError("cannot handle 3")
    return x

def dag_of(fn, out):
    dag = DAG()
    numbers = dag.new_vertex("numbers", read_list_p("in"))
    work = dag.new_vertex("work", map_p(fn))
    return dag.edge(between(numbers, work)).edge(between(work, dag.new_vertex("sink", write_list_p(out))))

conf = EngineConfig(master="local[2]", spark_conf={"spark.ui.enabled": "false"})
first = Engine(conf)
second = Engine(EngineConfig(master="local[2]", members=2))
for engine in (first, second):
    engine.get_list("in").extend(range(5))
try:
    second.new_job(dag_of(boom, "x")).join()
except JobFailedError as exc:
    print("failed cleanly:", exc.vertex)
first.close()
second.new_job(dag_of(abs, "ok")).join()
print("second after first closed:", sorted(second.get_list("ok")))
second.close()
print("context stopped with the last engine:", SparkContext._active_spark_context is None)
third = Engine(conf)
third.spark.stop()
try:
    third.new_job(dag_of(abs, "late"))
except DagValidationError as exc:
    print("stopped session:", exc)
third.close()
'''


@pytest.mark.spark
def test_engines_in_fresh_process_when_last_closes_then_context_stops_and_stopped_session_is_clear(tmp_path):
    (tmp_path / "engines.py").write_text(textwrap.dedent(ENGINES_SCRIPT))
    done = _run([sys.executable, "engines.py"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.splitlines()
    assert out[:3] == ["failed cleanly: work", "second after first closed: [0, 1, 2, 3, 4]",
                       "context stopped with the last engine: True"]
    assert out[3].startswith("stopped session: The Spark session this engine used was stopped by ")
    assert _stderr_lines(done) == [], done.stderr[-3000:]
