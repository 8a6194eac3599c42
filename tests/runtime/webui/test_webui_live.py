"""A running stream job watched from outside: Prometheus scrapes ``/metrics`` and headless Chromium opens the page.

One trade monitor (``examples/trade_monitor.py``: windows, watermarks, exactly-once snapshots every 200 ms)
runs for the whole module on an engine with the page on, borrowing the shared session; it is cancelled at the
end (``tests.support.running``). The browser test saves a screenshot under ``out/`` (untracked); with
``JETSPARK_UPDATE_SCREENSHOT=1`` it writes README's picture ``docs/img/web_ui.png`` instead.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from dag import Engine, EngineConfig, JobConfig, ProcessingGuarantee

REPO = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(REPO / "examples")]

import trade_monitor as tm  # noqa: E402

from tests.runtime.webui.browser import Browser  # noqa: E402
from tests.runtime.webui.webclient import base_and_token, get  # noqa: E402
from tests.support import running, wait_for  # noqa: E402

NAME = 'trade <b>monitor</b> "live"'
SCREENSHOT = (REPO / "docs" / "img" / "web_ui.png" if os.environ.get("JETSPARK_UPDATE_SCREENSHOT")
              else REPO / "out" / "web_ui.png")


@pytest.fixture(scope="module")
def live(engine, tmp_path_factory):
    """``(engine with the page on, the running trade monitor job)``."""
    out = tmp_path_factory.mktemp("trades")
    map_name = f"trades-{uuid.uuid4().hex}"
    watched = Engine(EngineConfig(web_ui_port=0), spark=engine.spark)
    generator = tm.TradeGenerator(watched.get_map(map_name), rate=200, tickers=("AAPL", "GOOG", "MSFT", "SAP"))
    config = JobConfig(name=NAME, processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE, snapshot_interval_ms=200)
    try:
        with running(watched, tm.build_dag(out, map_name=map_name, exactly_once=True), config) as job, generator:
            wait_for(lambda: job.metrics().total("trade-source", "emittedCount") > 0, 180, "the source to emit")
            yield watched, job
    finally:
        watched.close()


def _job_state(job) -> str:
    """The watched job's status, and its failure if it ended (a count that stops growing names why)."""
    return f"job {job.status.value}, restarts {job.metrics().restarts}, failure: {job.failure!r:.1500}"


def _scrape(base: str, token: str) -> dict[tuple[str, tuple], float]:
    status, headers, body = get(base, "/metrics", token=token)
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body.decode()) for s in family.samples}


def _value(samples: dict, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


@pytest.mark.spark
def test_metrics_when_scraped_twice_then_emitted_grows_and_snapshot_watermark_status_shown(live) -> None:
    engine, job = live
    base, token = base_and_token(engine.web_ui_url)
    assert get(base, "/metrics") == (403, get(base, "/metrics")[1], b"")
    first = _scrape(base, token)
    emitted = _value(first, "jetspark_items_emitted_total", job=NAME, vertex="trade-source")
    assert emitted is not None and emitted > 0
    wait_for(lambda: _value(_scrape(base, token), "jetspark_items_emitted_total", job=NAME,
                            vertex="trade-source") > emitted, 30,
             lambda: f"the emitted count to grow between scrapes; {_job_state(job)}")
    assert _value(first, "jetspark_job_status", job=NAME, status="RUNNING") == 1.0
    assert _value(first, "jetspark_job_status", job=NAME, status="COMPLETED") == 0.0
    assert _value(first, "jetspark_job_restarts_total", job=NAME) == 0.0
    assert _value(first, "jetspark_items_received_total", job=NAME, vertex="sliding-stage-1") is not None
    wait_for(lambda: _value(_scrape(base, token), "jetspark_last_snapshot_id", job=NAME) is not None, 60,
             "a complete snapshot")
    wait_for(lambda: _value(_scrape(base, token), "jetspark_watermark_lag_seconds", job=NAME,
                            vertex="trade-source") is not None, 60, "the source's watermark")
    samples = _scrape(base, token)
    assert _value(samples, "jetspark_last_snapshot_size_bytes", job=NAME) > 0
    assert _value(samples, "jetspark_last_snapshot_duration_seconds", job=NAME) >= 0
    lag = _value(samples, "jetspark_watermark_lag_seconds", job=NAME, vertex="trade-source")
    assert 0 < lag < 120  # limiting_lag(3000) behind wall-clock trade times, plus the machine's delays
    assert _value(samples, "jetspark_queues_capacity", job=NAME, vertex="sliding-stage-1") > 0


def _number(text: str | None) -> int:
    digits = re.sub(r"\D", "", text or "")
    return int(digits) if digits else -1


@pytest.mark.spark
def test_page_in_headless_chromium_when_job_runs_then_dag_drawn_and_edge_count_grows(live, tmp_path) -> None:
    engine, job = live
    browser = Browser(tmp_path)
    try:
        browser.open(engine.web_ui_url)
        wait_for(lambda: NAME in (browser.evaluate("document.querySelector('#jobs tbody')?.textContent") or ""),
                 30, "the job on the index page")
        assert browser.evaluate("document.querySelectorAll('#jobs b').length") == 0  # the name is text
        link = browser.evaluate("document.querySelector('#jobs tbody a').href")
        browser.open(link)
        vertices = [v.name for v in job.dag]

        def drawn() -> list[str]:
            return browser.evaluate("Array.from(document.querySelectorAll('#dag svg text'), t => t.textContent)"
                                    " || []") or []

        wait_for(lambda: set(vertices) <= set(drawn()), 30, lambda: f"every vertex in the SVG; got {drawn()}")
        assert any(t.startswith("sliding window") for t in drawn())  # windowing vertices show their policy
        # edges show counts and rates (a rate needs two samples: the first picture may have counts only)
        wait_for(lambda: any(" items, " in t and t.endswith("/s") for t in drawn()), 30,
                 lambda: f"an edge label with a rate; got {drawn()}")
        first_edge = "document.querySelector('#edges tbody tr td:nth-child(3)')?.textContent"
        first_label = ("Array.from(document.querySelectorAll('#dag svg g.edge')[0].querySelectorAll('text'))"
                       ".find(t => / items/.test(t.textContent))?.textContent")
        in_table, in_picture = _number(browser.evaluate(first_edge)), _number(browser.evaluate(first_label))
        assert in_table > 0 and in_picture > 0
        browser.evaluate("window.notReloaded = true")
        wait_for(lambda: _number(browser.evaluate(first_edge)) > in_table, 30,
                 lambda: f"the first edge's count to grow in the table; {_job_state(job)}")
        wait_for(lambda: _number(browser.evaluate(first_label)) > in_picture, 30,
                 lambda: f"the first edge's count to grow in the picture; {_job_state(job)}")
        assert browser.evaluate("window.notReloaded") is True  # the page refreshed itself without reloading
        assert browser.evaluate("document.getElementById('name').textContent") == NAME
        assert browser.evaluate("document.querySelectorAll('#name b, #summary b').length") == 0
        assert browser.evaluate("document.title") == f"jetspark job {NAME}"
        assert browser.evaluate("document.getElementById('updated').textContent").startswith("updated")
        wait_for(lambda: "last snapshot" in browser.evaluate("document.getElementById('snapshot').textContent"),
                 30, "the last snapshot on the page")
        browser.screenshot(SCREENSHOT)
    finally:
        browser.close()
    wait_for(lambda: not browser.group_alive(), 15, "every chromium process to end")
    assert SCREENSHOT.stat().st_size > 10_000
