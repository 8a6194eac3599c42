"""An engine whose driver JVM died says so (instead of py4j's "Connection refused") and can be replaced by a
new Engine in the same process (a subprocess test: it kills its own JVM)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = '''
import json
from pyspark import SparkContext
from dag import DAG, DagError, Engine, EngineConfig
from edges import between
from processors import map_p, read_list_p, write_list_p


def dag():
    d = DAG()
    s = d.new_vertex("src", read_list_p("in"))
    m = d.new_vertex("double", map_p(lambda x: 2 * x))
    d.edge(between(s, m)).edge(between(m, d.new_vertex("out", write_list_p("out"))))
    return d


engine = Engine(EngineConfig(master="local[1]"))
SparkContext._gateway.proc.kill()  # the driver JVM dies (as after an OutOfMemoryError)
SparkContext._gateway.proc.wait()
try:
    engine.new_job(dag())
    refused = None
except DagError as exc:
    refused = str(exc)
engine.close()
with Engine(EngineConfig(master="local[1]")) as again:
    again.get_list("in").extend(range(5))
    again.new_job(dag()).join(timeout=120)
    out = sorted(again.get_list("out"))
print("RESULT " + json.dumps({"refused": refused, "out": out}))
'''


def test_engine_when_driver_jvm_died_then_new_job_says_so_and_a_new_engine_works(tmp_path):
    script = tmp_path / "dead_jvm.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYTHONPATH")}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=400)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert "driver JVM of this engine is no longer running" in result["refused"]
    assert "spark.driver.memory" in result["refused"]
    assert result["out"] == [0, 2, 4, 6, 8]
