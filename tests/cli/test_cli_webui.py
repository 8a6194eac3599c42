"""``jetspark run --ui`` prints the web page's address, and the page at that address serves the running job.

The command runs in a subprocess (its own JVM) on a small endless stream job, stopped by ``--seconds``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.runtime.webui.webclient import base_and_token, get
from tests.support import wait_for

REPO = Path(__file__).resolve().parents[2]
JOB = '''
import time
from dag import DAG
from edges import between
from processors import SourceBuilder, map_p, noop_p

def fill(state, buf):
    time.sleep(0.05)  # pacing the stream (the behaviour)
    for _ in range(5):
        buf.add(state[0])
        state[0] += 1

def job():
    source = SourceBuilder.stream("counter", lambda ctx: [0]).fill_buffer_fn(fill).build()
    dag = DAG()
    src = dag.new_vertex("counter", source, local_parallelism=1)
    double = dag.new_vertex("double", map_p(lambda n: 2 * n), local_parallelism=1)
    return dag.edge(between(src, double)).edge(between(double, dag.new_vertex("sink", noop_p(), 1)))
'''


@pytest.mark.spark
def test_run_with_ui_then_address_printed_and_page_serves_the_job(tmp_path: Path) -> None:
    target = tmp_path / "cli_ui_job.py"
    target.write_text(textwrap.dedent(JOB))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "jetspark_cli.main", "run", str(target), "--ui", "--seconds", "15",
                             "--name", "ui-job", "--master", "local[2]"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        address = re.compile(r"^web UI: (http://127\.0\.0\.1:\d+/\?token=\S+)$")
        wait_for(lambda: any(address.match(line) for line in lines), 180, lambda: f"the address; got {lines[-10:]}")
        base, token = base_and_token(next(address.match(line) for line in lines if address.match(line)).group(1))
        assert get(base, "/api/jobs")[0] == 403

        def job_running() -> bool:
            jobs = json.loads(get(base, "/api/jobs", token=token)[2])
            return any(j["name"] == "ui-job" and j["status"] == "RUNNING" for j in jobs)

        wait_for(job_running, 120, lambda: f"the job on the page; stderr {lines[-10:]}")
        job_id = json.loads(get(base, "/api/jobs", token=token)[2])[0]["id"]
        wait_for(lambda: json.loads(get(base, f"/api/jobs/{job_id}", token=token)[2])["edges"][0]["items"] > 0, 60,
                 "items on the first edge")
        assert proc.wait(timeout=180) == 0, "".join(lines[-20:])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        reader.join(timeout=10)
    assert "stopped after 15 s" in "".join(lines)
