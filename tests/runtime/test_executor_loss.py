"""Infrastructure failures on local-cluster[2,1,1024] (a subprocess, bounded): an executor JVM killed in the
middle of a job is replaced by Spark and the job completes with exact results (Spark retries the lost tasks);
a SinkBuilder sink is at-least-once under such retries; a user exception still fails the job at once (not
retried up to spark.task.maxFailures)."""

from __future__ import annotations

import pytest

from tests.support.drivers import run_driver

pytestmark = [pytest.mark.spark, pytest.mark.slow]

# usermod.py: tests.support.cluster_faults (executor_pid, fault_once, sequence, ...), then this (run_driver)
USER_MODULE = '''
import os, signal


def square_killing_once(marker):
    def square(x):
        if x == 1234:
            pid = executor_pid()
            if fault_once(marker, str(pid)):
                os.kill(pid, signal.SIGKILL)  # this executor dies mid-task
        return x * x
    return square


def fails_once_per_attempt(directory):
    def fn(x):
        if x == 4321:
            open(os.path.join(directory, f"attempt-{os.getpid()}-{os.urandom(4).hex()}"), "w").close()
            raise KeyError(f"no {x}")
        return x
    return fn


def record_sink(directory):
    from processors import SinkBuilder

    def create(ctx):
        return open(os.path.join(directory, f"{os.getpid()}-{ctx.global_processor_index}-{os.urandom(4).hex()}"), "w")

    return (SinkBuilder.sink_builder("recorder", create)
            .receive_fn(lambda f, item: f.write(f"{item}\\n"))
            .destroy_fn(lambda f: f.close()).build())
'''

SCRIPT = '''
import json, os, sys
from dag import DAG, Engine, EngineConfig, JobFailedError
from edges import between
from processors import accumulate_by_key_p, counting, map_p, read_list_p, write_list_p
import usermod

N = 5000
with Engine(EngineConfig(master="local-cluster[2,1,1024]", default_local_parallelism=2)) as engine:
    engine.get_list("in").extend(range(N))
    dag = DAG()
    src = dag.new_vertex("src", read_list_p("in"))
    sq = dag.new_vertex("square", map_p(usermod.square_killing_once(sys.argv[1])))
    count = dag.new_vertex("count", accumulate_by_key_p([lambda x: x % 7], counting()))
    out = dag.new_vertex("out", write_list_p("out"))
    rec = dag.new_vertex("recorder", usermod.record_sink(sys.argv[2]))
    dag.edge(between(src, sq)).edge(from_(sq, 0).to(count).partitioned(lambda x: x % 7).distributed())
    dag.edge(between(count, out)).edge(from_(sq, 1).to(rec))
    engine.new_job(dag).join(timeout=400)
    counts = sorted(engine.get_list("out"))
    recorded = []
    for name in os.listdir(sys.argv[2]):
        recorded += [int(x) for x in open(os.path.join(sys.argv[2], name)).read().split()]
    bad = DAG()
    s = bad.new_vertex("src", read_list_p("in"))
    f = bad.new_vertex("fails", map_p(usermod.fails_once_per_attempt(sys.argv[3])))
    bad.edge(between(s, f)).edge(between(f, bad.new_vertex("out", write_list_p("never"))))
    try:
        engine.new_job(bad).join(timeout=400)
        failure = None
    except JobFailedError as e:
        failure = [e.vertex, e.exc_type, e.exc_message]
    print("RESULT " + json.dumps({"counts": counts, "killed": os.path.exists(sys.argv[1]),
                                   "recorded": sorted(recorded), "failure": failure,
                                   "attempts": len(os.listdir(sys.argv[3]))}))
'''.replace("from edges import between", "from edges import between, from_")


def test_executor_loss_when_executor_jvm_killed_mid_job_then_job_completes_exactly(tmp_path):
    records, attempts = tmp_path / "records", tmp_path / "attempts"
    records.mkdir()
    attempts.mkdir()
    result = run_driver(tmp_path, SCRIPT, str(tmp_path / "killed"), str(records), str(attempts),
                        user_module=USER_MODULE)
    assert result["killed"], "no executor was killed: the test proves nothing"
    n = 5000
    expected = sorted((k, sum(1 for x in range(n) if (x * x) % 7 == k)) for k in range(7))
    assert [tuple(e) for e in result["counts"]] == [e for e in expected if e[1]]
    # at-least-once: every item reached the SinkBuilder sink; a retried task may have delivered some twice
    assert set(result["recorded"]) == {x * x for x in range(n)}
    assert len(result["recorded"]) >= n
    # a user exception is not retried to exhaustion (Spark's default spark.task.maxFailures is 4): the task's
    # report cancels the job at once, and the job fails with the user's error
    assert result["failure"] == ["fails", "KeyError", "'no 4321'"]
    assert 1 <= result["attempts"] < 4


PIPELINED_SCRIPT = '''
import json, logging, sys
from dag import Engine, EngineConfig
import usermod

marker, output, snapshots = sys.argv[1:4]
restarts = []


class Restarts(logging.Handler):
    def emit(self, record):
        restarts.append(record.getMessage())


logging.getLogger("jetspark.snapshots").addHandler(Restarts(logging.WARNING))
N = 12000
config = EngineConfig(master="local-cluster[2,1,1024]", snapshot_dir=snapshots,
                      spark_conf={"spark.ui.enabled": "false"})
with Engine(config) as engine:
    job, numbers, killed = usermod.killed_exactly_once_job(engine, N, marker, output, timeout=300)
    print("RESULT " + json.dumps({"members": engine.members, "numbers": numbers, "n": N,
                                   "restarts": job.metrics().restarts, "logged": restarts, "killed": killed}))
'''


def test_executor_loss_when_executor_jvm_killed_in_exactly_once_pipelined_job_then_restored_exactly_once(tmp_path):
    marker, output, snapshots = tmp_path / "killed", tmp_path / "out", tmp_path / "snapshots"
    result = run_driver(tmp_path, PIPELINED_SCRIPT, str(marker), str(output), str(snapshots),
                        user_module=USER_MODULE)
    assert result["members"] == 2
    assert result["killed"], "no executor was killed: the test proves nothing"
    # the lost executor restarted the job from a snapshot (numbers had been published), not from scratch
    assert result["restarts"] >= 1 and " restarts from snapshot " in result["logged"][0], result["logged"]
    assert result["numbers"] == list(range(result["n"]))  # every number published exactly once
