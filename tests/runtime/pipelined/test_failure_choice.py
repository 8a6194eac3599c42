"""Which failure a failed pipelined execution reports: a processor's own failure, not the broken links it caused."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from dag.runtime.common.failures import ID_PREFIX
from dag.runtime.pipelined.failure_choice import CAUSE_WAIT, choose_failure
from dag.runtime.pipelined.suspension import Suspension
from jetspark_base.errors import JobFailedError

LINK = {"id": "a" * 32, "exc_type": "ConnectionError", "restartable": True, "vertex": "items"}
USER = {"id": "b" * 32, "exc_type": "ZeroDivisionError", "vertex": "mapWithUpdatingSink(m)"}


class _Channel:
    def __init__(self, records):
        self.records = records

    def failure_record(self, failure_id, wait=0.0):
        return next((r for r in self.records if r["id"] == failure_id), None)

    def records_since(self, count):
        return self.records[count:]


def _spark_error(names):
    return RuntimeError(f"task failed: {ID_PREFIX}{names['id']}") if names else None


def _failure_of(records, spark_error_names, tasks_running=lambda: False):
    return choose_failure(_Channel(records), _spark_error(spark_error_names), 0, tasks_running)


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


def _without_snapshots(records, lost=None):
    """The execution loop of a job without snapshots, over a fake run whose Spark stage failed."""
    run = SimpleNamespace(channel=_Channel(records), tasks_running=lambda: False, lost_task=lambda exc: lost)
    return Suspension(run, SimpleNamespace(name="j"))


def test_job_without_snapshots_when_spark_names_a_broken_link_then_fails_with_the_processor_failure():
    """The doc-testing sample failed in CI beside another suite with a peer's broken link instead of the
    assertion's own AssertionCompletedException: Spark named the peer's task, which failed first."""
    with pytest.raises(JobFailedError, match=f"failed \\[{ID_PREFIX}{USER['id']}\\]") as raised:
        _without_snapshots([USER, LINK])._raise_cause(_spark_error(LINK), 0)  # noqa: SLF001
    assert isinstance(raised.value.__cause__, RuntimeError)  # Spark's error stays the cause to decide on


def test_job_without_snapshots_when_no_record_then_the_lost_task_error():
    lost = JobFailedError("Job 'j' failed: task 1 (running m#1) was lost")
    with pytest.raises(JobFailedError, match="was lost"):
        _without_snapshots([], lost)._raise_cause(RuntimeError("Python worker exited unexpectedly"), 0)  # noqa: SLF001
    _without_snapshots([])._raise_cause(RuntimeError("cancelled"), 0)  # noqa: SLF001 - neither: returns


def test_failure_choice_docstring_examples_hold():
    import doctest

    from dag.runtime.pipelined import failure_choice

    result = doctest.testmod(failure_choice)
    assert result.attempted > 0 and result.failed == 0
