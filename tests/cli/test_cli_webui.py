"""``jetspark run --ui`` prints the web page's address, and the page at that address serves the running job.

The command runs in a subprocess (its own JVM) on a small endless stream job, stopped by ``--seconds``."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.runtime.webui.webclient import base_and_token, get
from tests.support import wait_for
from tests.support.cli import LineReader, start_run, write_stream_job

JOB = '''
from processors import map_p, noop_p

def job():
    dag = DAG()
    src = dag.new_vertex("counter", counter_source(), local_parallelism=1)
    double = dag.new_vertex("double", map_p(lambda n: 2 * n), local_parallelism=1)
    return dag.edge(between(src, double)).edge(between(double, dag.new_vertex("sink", noop_p(), 1)))
'''


@pytest.mark.spark
def test_run_with_ui_then_address_printed_and_page_serves_the_job(tmp_path: Path) -> None:
    target = write_stream_job(tmp_path / "cli_ui_job.py", JOB)
    proc = start_run([str(target), "--ui", "--seconds", "15", "--name", "ui-job"], tmp_path, stdout=subprocess.DEVNULL)
    err = LineReader(proc.stderr)
    lines = err.lines
    try:
        address = re.compile(r"^web UI: (http://127\.0\.0\.1:\d+/\?token=\S+)$")
        err.wait_for(lambda lines: any(address.match(line) for line in lines), 180, "the address")
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
        err.thread.join(timeout=10)
    assert "stopped after 15 s" in "".join(lines)
