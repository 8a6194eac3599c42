"""The web UI's server: the token before anything else, read-only routes, a port in use, escaping of what users
control (job names, log lines), and a finished job's final figures.

The first tests run the server alone (no Spark); the others borrow the shared session in an engine with the
page on (``web_ui_port=0``) and run small batch jobs on it.
"""

from __future__ import annotations

import html
import json
import logging
import socket

import pytest

from dag import DAG, Engine, EngineConfig, JobConfig, JobStatus
from dag.errors import WebUIError
from dag.runtime.webui import WebUI
from edges import between
from processors import map_p, read_list_p, write_list_p, write_logger_p

from tests.runtime.webui.webclient import base_and_token, get
from tests.support import numbers, unique

EVIL = '<script>alert("x")</script> & \'q\''
PATHS = ["/", "/metrics", "/api/jobs", "/api/jobs/1", "/api/jobs/1/dag.svg", "/jobs/1", "/static/app.js", "/nope"]


@pytest.fixture()
def bare_ui():
    ui = WebUI(lambda: [], "127.0.0.1", 0)
    yield ui
    ui.close()


def test_request_without_or_with_wrong_token_then_403_and_empty_body(bare_ui: WebUI) -> None:
    base = f"http://127.0.0.1:{bare_ui.port}"
    for path in PATHS:
        for answer in (get(base, path), get(base, path, token="wrong"), get(base, path + "?token=wrong"),
                       get(base, path, method="POST"), get(base, path, headers={"Authorization": "Basic x"})):
            status, headers, body = answer
            assert (status, body) == (403, b""), (path, status, body)
            assert "Content-Type" not in headers


def test_request_with_token_in_query_or_bearer_header_then_served_and_read_only(bare_ui: WebUI) -> None:
    base, token = base_and_token(bare_ui.url)
    assert bare_ui.url.startswith("http://127.0.0.1:")
    status, headers, body = get(base, f"/?token={token}")
    assert status == 200 and b'data-page="index"' in body and headers["Content-Security-Policy"]
    status, headers, body = get(base, "/api/jobs", token=token)
    assert (status, json.loads(body)) == (200, []) and headers["Content-Type"] == "application/json"
    assert get(base, "/static/app.js", token=token)[0] == 200
    assert get(base, "/api/jobs/1", token=token)[0] == 404
    assert get(base, "/api/jobs", token=token, method="POST")[0] == 405
    assert get(base, "/api/jobs", token=token, method="DELETE")[0] == 405


def test_two_uis_have_different_tokens_and_a_token_opens_only_its_own(bare_ui: WebUI) -> None:
    other = WebUI(lambda: [], "127.0.0.1", 0)
    try:
        assert other.token != bare_ui.token and len(other.token) >= 40
        assert get(f"http://127.0.0.1:{other.port}", "/api/jobs", token=bare_ui.token)[0] == 403
    finally:
        other.close()


def test_port_in_use_then_error_naming_the_port() -> None:
    taken = socket.create_server(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    try:
        with pytest.raises(WebUIError, match=rf"127\.0\.0\.1:{port}.*port {port} is already in use.*web_ui_port"):
            WebUI(lambda: [], "127.0.0.1", port)
    finally:
        taken.close()


def test_closed_ui_then_port_released(bare_ui: WebUI) -> None:
    port = bare_ui.port
    bare_ui.close()
    socket.create_server(("127.0.0.1", port)).close()  # OSError if still bound


# ------------------------------------------------------------------------------------------------ with Spark


@pytest.fixture(scope="module")
def watched(engine):
    """An engine on the shared session with the page on."""
    eng = Engine(EngineConfig(web_ui_port=0), spark=engine.spark)
    yield eng
    eng.close()


def _batch(engine, name: str, n: int = 100, log: bool = False):
    source = numbers(engine, n)
    dag = DAG()
    src = dag.new_vertex("source", read_list_p(source), 1)
    double = dag.new_vertex("double", map_p(lambda x: 2 * x), 2)
    sink = dag.new_vertex("sink", write_logger_p(lambda x: f"<img src=x onerror=alert(1)> {x}") if log
                          else write_list_p(unique("out")), 1)
    dag.edge(between(src, double)).edge(between(double, sink))
    job = engine.new_job(dag, JobConfig(name=name))
    job.join(timeout=120)
    return job


@pytest.mark.spark
def test_engine_with_port_in_use_then_error_and_session_still_usable(engine) -> None:
    taken = socket.create_server(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    try:
        with pytest.raises(WebUIError, match=f"port {port} is already in use"):
            Engine(EngineConfig(web_ui_port=port), spark=engine.spark)
    finally:
        taken.close()
    assert engine.spark.sparkContext.parallelize([1, 2]).count() == 2
    with Engine(EngineConfig(), spark=engine.spark) as unwatched:
        assert unwatched.web_ui_url is None


@pytest.mark.spark
def test_finished_job_then_final_figures_polled_again_and_again(watched) -> None:
    job = _batch(watched, unique("final"))
    assert job.status is JobStatus.COMPLETED
    base, token = base_and_token(watched.web_ui_url)
    looks = [json.loads(get(base, f"/api/jobs/{job.id}", token=token)[2]) for _ in range(2)]
    assert looks[0]["vertices"] == looks[1]["vertices"] and looks[0]["edges"] == looks[1]["edges"]
    look = looks[0]
    assert (look["status"], look["terminal"], look["mode"]) == ("COMPLETED", True, "STAGED")
    assert look["completed"] >= look["submitted"] and look["rates_kind"] == "average over the run"
    by_name = {v["name"]: v for v in look["vertices"]}
    metrics = job.metrics()
    assert by_name["double"]["received"] == metrics.total("double", "receivedCount") == 100
    assert by_name["sink"]["received"] == 100 and by_name["double"]["parallelism"] == 2
    assert [(e["source"], e["dest"], e["items"]) for e in look["edges"]] == [("source", "double", 100),
                                                                            ("double", "sink", 100)]
    assert look["stages"] and all(s["completed"] == s["tasks"] for s in look["stages"])
    status, headers, svg = get(base, f"/api/jobs/{job.id}/dag.svg", token=token)
    assert status == 200 and headers["Content-Type"].startswith("image/svg+xml")
    assert b"100 items" in svg and b">double</text>" in svg
    summaries = json.loads(get(base, "/api/jobs", token=token)[2])
    assert {"id": job.id, "name": job.name, "status": "COMPLETED"}.items() <= summaries[-1].items()


@pytest.mark.spark
def test_job_name_and_log_lines_with_markup_then_escaped_everywhere(watched) -> None:
    jetspark = logging.getLogger("jetspark")
    level = jetspark.level
    jetspark.setLevel(logging.INFO)  # the sink's INFO records are forwarded to the driver
    try:
        job = _batch(watched, EVIL + unique(""), n=5, log=True)
    finally:
        jetspark.setLevel(level)
    base, token = base_and_token(watched.web_ui_url)
    _, _, page = get(base, f"/jobs/{job.id}", token=token)
    assert EVIL.encode() not in page and html.escape(EVIL, quote=True).encode() in page
    _, headers, data = get(base, f"/api/jobs/{job.id}", token=token)
    look = json.loads(data)
    assert headers["Content-Type"] == "application/json" and headers["X-Content-Type-Options"] == "nosniff"
    assert look["name"] == job.name
    assert sorted(r["message"] for r in look["logs"]) == sorted(f"<img src=x onerror=alert(1)> {2 * i}"
                                                                for i in range(5))
    assert {r["logger"] for r in look["logs"]} == {"jetspark.sink#0"}
    table = job._repr_html_()
    assert EVIL not in table and html.escape(EVIL) in table and "COMPLETED" in table
    _, _, metrics = get(base, "/metrics", token=token)
    assert 'job="<script>alert(\\"x\\")</script>' in metrics.decode()  # Prometheus' label escaping


def test_web_ui_port_when_negative_or_too_large_then_refused() -> None:
    from pydantic import ValidationError

    assert EngineConfig().web_ui_port is None
    for port in (-1, 65536, "http"):
        with pytest.raises(ValidationError, match="web_ui_port"):
            EngineConfig(web_ui_port=port)


@pytest.mark.spark
def test_failed_job_then_page_names_type_and_vertex_but_not_the_message(watched) -> None:
    from dag import JobFailedError

    def explode(x):
        raise ValueError("secret-ish user data 42")

    dag = DAG()
    src = dag.new_vertex("source", read_list_p(numbers(watched, 3)), 1)
    dag.edge(between(src, dag.new_vertex("explode", map_p(explode), 1)))
    job = watched.new_job(dag, JobConfig(name=unique("failing")))
    with pytest.raises(JobFailedError):
        job.join(timeout=120)
    base, token = base_and_token(watched.web_ui_url)
    _, _, data = get(base, f"/api/jobs/{job.id}", token=token)
    look = json.loads(data)
    assert (look["status"], look["terminal"]) == ("FAILED", True)
    assert look["error"] == {"type": "ValueError", "vertex": "explode", "processor_index": 0}
    assert b"secret-ish" not in data


class _FailOnce:
    """``map_p`` function raising a ``RestartableError`` at item 30, once across processes (a marker file)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __call__(self, x):
        from dag import RestartableError
        from tests.support import once

        if x >= 30 and once(self.marker):
            raise RestartableError("the broker went away")
        return x


@pytest.mark.spark
def test_restarted_job_then_page_lists_the_restart_with_its_cause(watched, tmp_path) -> None:
    from dag import ProcessingGuarantee
    from processors import noop_p
    from tests.support import counter_stream, running, wait_for

    dag = DAG()
    src = dag.new_vertex("src", counter_stream("src", 0.02), 1)
    fail = dag.new_vertex("fail-once", map_p(_FailOnce(str(tmp_path / "failed"))), 1)
    dag.edge(between(src, fail)).edge(between(fail, dag.new_vertex("sink", noop_p(), 1)))
    config = JobConfig(name=unique("restarting"), processing_guarantee=ProcessingGuarantee.AT_LEAST_ONCE,
                       snapshot_interval_ms=100)
    base, token = base_and_token(watched.web_ui_url)

    def look() -> dict:
        return json.loads(get(base, f"/api/jobs/{job.id}", token=token)[2])

    with running(watched, dag, config) as job:
        wait_for(lambda: look()["restarts"] == 1, 90, lambda: f"one restart on the page; got {look()}")
        restart = look()["restart_log"][0]
        assert (restart["exc_type"], restart["exc_message"]) == ("RestartableError", "the broker went away")
        recorded = job.metrics().restart_log[0]
        assert restart["from_snapshot"] == recorded.from_snapshot and restart["time"] >= job.submission_time
