"""Ctrl-C during `jetspark run` (SIGINT to the whole process group, as a terminal sends it): one line
"jetspark: interrupted", exit status 130, no Python or Java stack trace, and the cancelled job neither
published output nor left staged files behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

TARGET = '''
import time
from dag import DAG
from edges import between
from processors import SourceBuilder, map_p, write_file_p

OUT = {out!r}


def fill(state, buf):
    for _ in range(100):
        if state["next"] == 3000:
            buf.close()
            return
        buf.add(state["next"])
        state["next"] += 1


def slow(x):
    time.sleep(0.01)  # a slow map (the behaviour): the job is still writing when interrupted
    return x


def build():
    src = SourceBuilder.batch("nums", lambda ctx: {{"next": 0}}).fill_buffer_fn(fill).build()
    dag = DAG()
    s = dag.new_vertex("src", src)
    m = dag.new_vertex("slow", map_p(slow), local_parallelism=2)
    w = dag.new_vertex("write", write_file_p(OUT), local_parallelism=2)
    dag.edge(between(s, m)).edge(between(m, w))
    return dag
'''


def test_cli_when_interrupted_mid_write_then_one_line_no_stack_trace_and_nothing_left(tmp_path):
    out = tmp_path / "out"
    (tmp_path / "slowdag.py").write_text(textwrap.dedent(TARGET.format(out=str(out))))
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYTHONPATH")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from jetspark_cli.main import main; sys.exit(main())", "run",
         str(tmp_path / "slowdag.py") + ":build", "--master", "local[2]"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:  # wait until the sink writes its staged files
            staged = [p for d in out.glob(".jetspark-job-*") for p in d.iterdir()] if out.is_dir() else []
            if staged and any(p.stat().st_size > 0 for p in staged):
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the job ended before it could be interrupted"
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err[-3000:]
    assert err.rstrip().endswith("jetspark: interrupted")
    assert "Traceback" not in err and "\tat " not in err and "Exception" not in err, err[-3000:]
    assert os.listdir(out) == []  # nothing published, nothing staged
