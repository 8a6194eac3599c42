"""Who runs when in a pipelined task (dag/runtime/pipelined/runner.py), without Spark: a processor in a thread of
its own runs when its own queues give it work, not whenever the task's scheduler moves something."""

from __future__ import annotations

import threading
import time

from dag import DAG
from dag.runtime.pipelined import runner as runner_module
from dag.runtime.pipelined.runner import TaskRunners
from edges import between
from processors import AbstractProcessor, Processor

from tests.support.tasks import in_process_spec

ITEMS = 3000


class Trickle(Processor):
    """A cooperative source emitting ``ITEMS`` items, one per call: the scheduler always has work. Each call also
    lets go of the GIL for a moment, as a scheduler's socket calls do."""

    def init(self, outbox, context):
        self.outbox, self.n = outbox, 0

    def complete(self):
        time.sleep(0)
        if self.outbox.offer(self.n):
            self.n += 1
        return self.n == ITEMS


class CountAtEnd(AbstractProcessor):
    """Cooperative: counts its items and emits the count when its input is done (so its consumer waits idle
    until then)."""

    def init_processor(self, context):
        self.count = 0

    def try_process0(self, item):
        self.count += 1
        return True

    def complete(self):
        return self.try_emit(self.count)


class BlockingCollect(AbstractProcessor):
    """A non-cooperative sink (in a thread of its own) keeping what it receives."""

    received: list = []

    def is_cooperative(self):
        return False

    def try_process0(self, item):
        BlockingCollect.received.append(item)
        return True


def test_non_cooperative_processor_waiting_for_input_when_scheduler_busy_then_not_run_meanwhile(monkeypatch):
    """The sink's thread has nothing to do while the scheduler moves one item per round. It used to share the
    scheduler's wake-up and retry every 25 us, so it ran about as many rounds as the scheduler (each taking the
    GIL from it). Now only its own queue wakes it, and meanwhile it backs off up to 10 ms."""
    rounds: dict[str, int] = {}
    real_run_once = runner_module.ProcessorRunner.run_once

    def counted(self):
        rounds[self.vertex] = rounds.get(self.vertex, 0) + 1
        return real_run_once(self)

    monkeypatch.setattr(runner_module.ProcessorRunner, "run_once", counted)
    BlockingCollect.received = []
    dag = DAG()
    source = dag.new_vertex("source", Trickle, local_parallelism=1)
    count = dag.new_vertex("count", CountAtEnd, local_parallelism=1)
    sink = dag.new_vertex("sink", BlockingCollect, local_parallelism=1)
    dag.edge(between(source, count)).edge(between(count, sink))
    runners = TaskRunners(0, in_process_spec(dag), None, threading.Event())
    try:
        runners.links.connect([runners.links.address])
        runners.run()
    finally:
        runners.close()
    assert BlockingCollect.received == [ITEMS], "the count reached the sink"
    assert rounds["source"] >= ITEMS, rounds
    assert rounds["sink"] < ITEMS / 3, f"the idle sink's thread ran {rounds['sink']} rounds: {rounds}"
