"""Issue 22, defect 2: a failed job prints as the user's traceback plus jetspark's one-paragraph message.

Spark's exception is the ``JobFailedError``'s ``__cause__`` only when it is the cause (a lost executor, a JVM
out of memory, a dead Python worker), never jetspark's own cancel of the other tasks after a processor failed
(``[SPARK_JOB_CANCELLED]`` and a page of JVM frames). Checked on every path: both runtimes (a plain script in
a subprocess, its stderr counted), restarts exhausted, cancel; and the decision itself, engine-free.
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

from dag import (CancellationError, DAG, ExecutionMode, JobConfig, JobFailedError, ProcessingGuarantee,
                 RestartableError)
from dag.runtime.common.failures import ID_PREFIX, decode_failure, spark_is_cause, summarize_spark_error
from edges import between
from processors import map_p, write_list_p
from tests.support import counter_stream, running, unique, wait_for

ROOT = Path(__file__).resolve().parents[2]
CANCELLED = ("An error occurred while calling z:org.apache.spark.api.python.PythonRDD.runJob.\n: "
             "org.apache.spark.SparkException: [SPARK_JOB_CANCELLED] Job 0 cancelled part of cancelled job group "
             "jetspark-1 SQLSTATE: XXKDA\n\tat org.apache.spark.errors.SparkCoreErrors$.sparkJobCancelled(x:222)")
EXECUTOR_LOST = ("Job aborted due to stage failure: Task 1 in stage 3.0 failed 1 times, most recent failure: Lost "
                 "task 1.0 (TID 7) (host executor 1): ExecutorLostFailure (executor 1 exited caused by one of the "
                 "running tasks) Reason: Command exited with code 137\n\tat org.apache.spark.scheduler.X(x:1)")
RECORD = {"id": "ab" * 16, "vertex": "parse", "processor_index": 0, "exc_type": "ValueError",
          "exc_message": "bad", "user_traceback": "Traceback (most recent call last):\nValueError: bad\n"}


class FakeChannel:
    """The driver channel's failure records, for ``decode_failure``."""

    def failure_record(self, failure_id, wait=0.0):
        return RECORD if failure_id in (None, RECORD["id"]) else None


@pytest.mark.parametrize("text,is_cause", [
    (CANCELLED, False),
    (f"PythonException: dag.runtime.common.failures.TaskFailure: ValueError in vertex 'parse' processor #0 "
     f"[{ID_PREFIX}{'ab' * 16}]", False),
    ("dag.runtime.common.failures.TaskFailure: ValueError in vertex 'parse' processor #0: bad", False),
    (EXECUTOR_LOST, True),
    ("java.lang.OutOfMemoryError: Java heap space", True),
    ("org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)", True),
    ("org.apache.hadoop.mapred.InvalidInputException: Input path does not exist: file:/nowhere", True),
])
def test_spark_is_cause_when_spark_error_then_only_infrastructure_or_spark_own_errors(text, is_cause):
    assert spark_is_cause(RuntimeError(text)) is is_cause


def test_decode_failure_when_user_failure_then_no_spark_cause_and_no_context():
    failed = decode_failure(RuntimeError(CANCELLED), "wc", FakeChannel())
    assert failed.__cause__ is None and failed.__suppress_context__
    printed = "".join(traceback.format_exception(failed))
    assert "SPARK_JOB_CANCELLED" not in printed and "org.apache" not in printed and "ValueError: bad" in printed


def test_decode_failure_when_executor_lost_then_spark_error_chained():
    spark = RuntimeError(EXECUTOR_LOST)
    assert decode_failure(spark, "wc", FakeChannel()).__cause__ is spark


def test_decode_failure_when_restart_loop_wrapped_spark_error_then_decides_on_spark_error():
    for text, chained in ((CANCELLED, False), (EXECUTOR_LOST, True)):
        spark = RuntimeError(text)
        try:
            raise JobFailedError(f"Job 'wc' failed [{ID_PREFIX}{RECORD['id']}]") from spark
        except JobFailedError as wrapper:
            assert (decode_failure(wrapper, "wc", FakeChannel()).__cause__ is spark) is chained


def test_summarize_spark_error_when_no_record_then_chained_only_when_spark_is_the_cause():
    assert summarize_spark_error(RuntimeError(EXECUTOR_LOST), "wc").__cause__ is not None
    lost_report = RuntimeError("TaskFailure: ValueError in vertex 'parse' processor #0: bad")
    assert summarize_spark_error(lost_report, "wc").__cause__ is None


# ------------------------------------------------------------------------------------------ on Spark
SCRIPT = """
import sys, traceback
from dag import DAG, Engine, EngineConfig, ExecutionMode, JobConfig, JobFailedError
from edges import between
from processors import map_p, read_list_p, write_list_p

def parse(x):
    return int("x" + str(x))

def failing_dag():
    dag = DAG()
    source = dag.new_vertex("source", read_list_p("in"))
    parse_v = dag.new_vertex("parse", map_p(parse))
    dag.edge(between(source, parse_v)).edge(between(parse_v, dag.new_vertex("sink", write_list_p("out"))))
    return dag

with Engine(EngineConfig(master="local[2]", spark_conf={"spark.ui.enabled": "false"})) as engine:
    engine.get_list("in").extend(range(10))
    try:
        engine.new_job(failing_dag(), JobConfig(execution_mode=ExecutionMode.PIPELINED)).join(timeout=120)
    except JobFailedError as error:
        print("".join(traceback.format_exception(error)), end="", file=sys.stderr)
    print("=== STAGED, uncaught", file=sys.stderr, flush=True)
    engine.new_job(failing_dag(), JobConfig(execution_mode=ExecutionMode.STAGED)).join(timeout=120)
"""


@pytest.mark.spark
def test_plain_script_when_processor_raises_then_user_traceback_and_message_in_few_lines(tmp_path):
    """Both runtimes; the STAGED failure is left uncaught, so Python itself prints it, as in a user's script."""
    script = tmp_path / "failing.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1, done.stderr[-3000:]
    stderr = done.stderr[done.stderr.index("Traceback"):]  # after the JVM's start-up line(s)
    pipelined, staged = stderr.split("=== STAGED, uncaught\n")
    for name, printed in (("PIPELINED", pipelined), ("STAGED", staged)):
        lines = printed.strip().splitlines()
        assert len(lines) < 25, f"{name}: {len(lines)} lines:\n{printed}"
        assert "Py4JJavaError" not in printed and "\tat " not in printed and "org.apache" not in printed, printed
        assert "direct cause" not in printed and "During handling" not in printed, printed
        assert 'line 8, in parse\n    return int("x" + str(x))' in printed, printed
        assert "JobFailedError: Job 'job-" in printed and "ValueError in vertex 'parse'" in printed, printed
        assert "processors/" not in printed and "dag/runtime/staged/task.py" not in printed, printed  # jetspark's frames


@pytest.mark.spark
def test_restarts_exhausted_when_job_fails_then_no_spark_cause(engine):
    def always_restart(n):
        if n >= 5:
            raise RestartableError(f"flaky at {n}")
        return n

    dag = DAG()
    source = dag.new_vertex("counter", counter_stream("counter", 0.01))
    flaky = dag.new_vertex("flaky", map_p(always_restart))
    dag.edge(between(source, flaky)).edge(between(flaky, dag.new_vertex("sink", write_list_p(unique("out")))))
    config = JobConfig(processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE, snapshot_interval_ms=100,
                       max_restarts=1)
    job = engine.new_job(dag, config)
    with pytest.raises(JobFailedError) as info:
        job.join(timeout=180)
    error = info.value
    assert error.vertex == "flaky" and error.exc_type == "RestartableError", error
    assert error.__cause__ is None and error.__suppress_context__
    assert "org.apache" not in "".join(traceback.format_exception(error))


@pytest.mark.spark
def test_cancel_when_job_cancelled_then_cancellation_error_without_spark_cause(engine):
    dag = DAG()
    source = dag.new_vertex("counter", counter_stream("counter", 0.01))
    sink_list = unique("out")
    dag.edge(between(source, dag.new_vertex("sink", write_list_p(sink_list))))
    with running(engine, dag, JobConfig(execution_mode=ExecutionMode.PIPELINED)) as job:
        wait_for(lambda: len(engine.get_list(sink_list)) > 0, 60, "the first items")
        job.cancel()
        with pytest.raises(CancellationError) as info:
            job.join(timeout=60)
    assert info.value.__cause__ is None
    assert "org.apache" not in "".join(traceback.format_exception(info.value))
