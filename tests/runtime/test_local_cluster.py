"""One honest "distributed" run: local-cluster[2,1,1024] (two executor JVMs, each with its own Python
workers) in a subprocess, so it never disturbs the shared session. User code comes from a module in a
temporary directory (not installed anywhere), as a user's script directory would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

USER_MODULE = '''
import os
from processors import AbstractProcessor


def square(x):
    return x * x


class WhereAmI(AbstractProcessor):
    def init_processor(self, context):
        self.where = (context.global_processor_index, context.member_index, os.getpid())

    def try_process0(self, item):
        return self.try_emit((self.where, item))


class Fails(AbstractProcessor):
    def try_process0(self, item):
        raise KeyError(f"no {item}")
'''

SCRIPT = '''
import json, os, sys
from dag import DAG, Engine, EngineConfig, JobFailedError
from edges import between
from processors import map_p, read_list_p, write_list_p
import usermod

with Engine(EngineConfig(master="local-cluster[2,1,1024]", spark_conf={"spark.ui.enabled": "false"})) as engine:
    engine.get_list("in").extend(range(40))
    dag = DAG()
    src = dag.new_vertex("src", read_list_p("in"), local_parallelism=1)
    sq = dag.new_vertex("square", map_p(usermod.square), local_parallelism=1)
    where = dag.new_vertex("where", usermod.WhereAmI, local_parallelism=1)
    out = dag.new_vertex("out", write_list_p("out"))
    dag.edge(between(src, sq)).edge(between(sq, where).partitioned(lambda x: x).distributed()).edge(between(where, out))
    engine.new_job(dag).join()
    rows = list(engine.get_list("out"))
    bad = DAG()
    s = bad.new_vertex("src", read_list_p("in"), local_parallelism=1)
    f = bad.new_vertex("fails", usermod.Fails, local_parallelism=1)
    bad.edge(between(s, f))
    try:
        engine.new_job(bad).join()
        failure = None
    except JobFailedError as e:
        failure = [e.vertex, e.exc_type, e.exc_message]
    print("RESULT " + json.dumps({"members": engine.members, "rows": rows, "failure": failure,
                                   "driver_pid": os.getpid()}))
'''


def test_local_cluster_when_two_executors_then_two_members_and_user_code_runs_remotely(tmp_path):
    (tmp_path / "usermod.py").write_text(textwrap.dedent(USER_MODULE))
    script = tmp_path / "run_cluster.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYTHONPATH")}
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = repo
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["members"] == 2
    rows = result["rows"]
    assert sorted(item for _, item in rows) == sorted(x * x for x in range(40))
    members = {where[1] for where, _ in rows}
    assert members == {0, 1}  # a distributed partitioned edge reaches the processors of both members
    for (index, member, _pid), _item in rows:
        assert member == index  # local parallelism 1: processor g belongs to member g
    assert all(where[2] != result["driver_pid"] for where, _ in rows)
    # whichever of the two processors fails first, on the first item of the first chunk the source dealt it
    # (EngineConfig.deal_driver_sources: 40 items over 2 processors, chunks 0-9, then 10-17, ...)
    vertex, exc_type, message = result["failure"]
    assert (vertex, exc_type) == ("fails", "KeyError") and message in ("'no 0'", "'no 10'")
