"""ProcessorRunner (dag/runtime/pipelined/runner.py) without Spark: a processor restored as completed."""

from __future__ import annotations

import threading

from dag.planner.physical_plan import EdgeOp, Route
from dag.runtime.pipelined.queues import Queue
from processors.execution.lifecycle import DONE
from dag.runtime.pipelined.runner import ProcessorRunner, _Outbound
from dag.runtime.common.senders import Router, SenderSpec
from processors import AbstractProcessor, Context
from processors.execution.tasklet import PIPELINED, ProcessorTasklet


class Untouchable(AbstractProcessor):
    """A processor that must never run (it completed before the restored snapshot)."""

    def init_processor(self, context):
        raise AssertionError("a processor restored as completed was initialized")


def test_runner_when_restored_as_completed_then_sends_done_reports_and_ignores_phase_two():
    target = Queue(threading.Event())
    spec = SenderSpec(EdgeOp.PARTITION_BY, Route.ISOLATED, 0, ls=1, ld=1, members=1, partition_count=271,
                      queue_size=1024)
    outbound = [_Outbound(Router(spec, 0), lambda gd, entry: target.offer(entry))]
    tasklet = ProcessorTasklet(Untouchable(), Context(vertex_name="v"), inbound_priorities={},
                               outbound_capacities=[1024], vertex_name="v", policy=PIPELINED, snapshot_aligned=True)
    reports = []
    tasklet.restored_as_completed()
    runner = ProcessorRunner("v", 0, tasklet, {}, outbound,
                             lambda vertex, g, sid, entries: reports.append((vertex, g, sid, entries)))
    runner.run_once()
    assert runner.finished and list(target.entries) == [DONE]
    # the coordinator's next snapshot and the phase 2 of the previous one reach the finished processor
    runner.control.extend([("finish", 4, True), ("snapshot", 5)])
    runner.run_once()
    assert reports == [("v", 0, 5, None)]  # takes part in snapshot 5 as completed, saving nothing
    assert not runner.has_control()  # nothing left to do: the task's scheduler can end
