"""A task reports its processor's failure before it stops (dag/runtime/pipelined/runner.py), without Spark.

When a processor fails, its task stops and its links close. A peer then sees a broken link and reports that
too; if the peer's report reached the driver first, a busy machine could make the job fail with the broken link
instead of the processor's own error. So the task reports while its links are still open.
"""

from __future__ import annotations

import threading

import pytest

from dag import DAG
from dag.runtime.pipelined.runner import TaskRunners
from edges import between
from processors import AbstractProcessor, Processor

from tests.support.processors import Emit
from tests.support.tasks import in_process_spec


class FailsOnFirstItem(AbstractProcessor):
    def try_process0(self, item):
        raise KeyError("injected")


def _task_runners(dag: DAG, report) -> TaskRunners:
    """The runners of the single task of ``dag`` (a one-task layout, links with no peer)."""
    return TaskRunners(0, in_process_spec(dag), None, threading.Event(), report_failure=report)


def test_task_when_processor_fails_then_reports_before_stopping():
    dag = DAG()
    src = dag.new_vertex("source", lambda: Emit(range(10)), local_parallelism=1)
    bad = dag.new_vertex("bad", FailsOnFirstItem, local_parallelism=1)
    dag.edge(between(src, bad))
    seen = []
    runners = _task_runners(dag, lambda exc: seen.append((exc, runners.stop.is_set(), runners.links.closed)))
    try:
        runners.links.connect([runners.links.address])
        with pytest.raises(KeyError, match="injected") as raised:
            runners.run()
    finally:
        runners.close()
    assert len(seen) == 1, "the failure is reported once"
    exc, stopped, links_closed = seen[0]
    assert exc is raised.value and not stopped and not links_closed
    assert runners.failure_origin == ("bad", 0)


def test_task_when_report_fails_then_processor_failure_still_raised():
    class Boom(Processor):
        def complete(self):
            raise ValueError("processor error")

    dag = DAG()
    dag.new_vertex("boom", Boom, local_parallelism=1)

    def broken_report(exc):
        raise OSError("driver gone")

    runners = _task_runners(dag, broken_report)
    try:
        runners.links.connect([runners.links.address])
        with pytest.raises(ValueError, match="processor error"):
            runners.run()
    finally:
        runners.close()
