"""Which failure a failed pipelined execution reports: a processor's own failure, not the broken links it caused."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from dag.runtime.common.failures import ID_PREFIX
from dag.runtime.pipelined.restarts import CAUSE_WAIT, SnapshotRun

LINK = {"id": "a" * 32, "exc_type": "ConnectionError", "restartable": True, "vertex": "items"}
USER = {"id": "b" * 32, "exc_type": "ZeroDivisionError", "vertex": "mapWithUpdatingSink(m)"}


class _Channel:
    def __init__(self, records):
        self.records = records

    def failure_record(self, failure_id, wait=0.0):
        return next((r for r in self.records if r["id"] == failure_id), None)

    def records_since(self, count):
        return self.records[count:]


def _failure_of(records, spark_error_names, tasks_running=lambda: False):
    run = SimpleNamespace(run=SimpleNamespace(channel=_Channel(records)), _records_before=0,
                          _tasks_running=tasks_running)
    error = RuntimeError(f"task failed: {ID_PREFIX}{spark_error_names['id']}") if spark_error_names else None
    return SnapshotRun._failure_of(run, error)  # noqa: SLF001


def test_failure_when_spark_names_a_broken_link_but_a_processor_failed_then_the_processor_failure():
    assert _failure_of([LINK, USER], LINK) is USER
    assert _failure_of([USER, LINK], LINK) is USER


def test_failure_when_only_links_broke_and_no_task_runs_then_the_link_failure_at_once():
    started = time.monotonic()
    assert _failure_of([LINK], LINK) is LINK
    assert _failure_of([LINK], None) is LINK
    assert time.monotonic() - started < CAUSE_WAIT  # nothing more can come: no wait for the bound


def test_failure_when_only_links_broke_and_tasks_keep_running_then_the_link_failure_after_the_bound():
    started = time.monotonic()
    assert _failure_of([LINK], LINK, tasks_running=lambda: True) is LINK
    assert CAUSE_WAIT <= time.monotonic() - started < CAUSE_WAIT + 5


def test_failure_when_the_processor_failure_arrives_late_under_load_then_it_is_reported():
    """A loaded machine delivered the peer's own failure record later than the broken link's (a CI run beside
    another suite reported the link): the choice waits for it while the failing task still runs."""
    records = [LINK]
    running = threading.Event()
    running.set()

    def late_record():
        time.sleep(1.0)  # the delay under test: later than the old fixed 0.25 s wait
        records.append(USER)
        running.clear()

    thread = threading.Thread(target=late_record)
    thread.start()
    try:
        assert _failure_of(records, LINK, tasks_running=running.is_set) is USER
    finally:
        thread.join(5)


def test_failure_when_a_processor_failed_then_it_is_reported_at_once():
    assert _failure_of([USER], USER) is USER
    assert _failure_of([USER, LINK], None) is USER
