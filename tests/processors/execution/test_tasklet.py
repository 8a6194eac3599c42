"""ProcessorTasklet in pipelined mode: try_process on an empty inbox, watermarks, edge completion."""

from __future__ import annotations

import pytest

from dag.errors import ProcessorContractError
from processors import Context, Processor
from processors.execution.coalescer import IDLE
from processors.execution.tasklet import NEEDS_INPUT, PIPELINED, PROGRESS, ProcessorTasklet
from processors.api.watermark import Watermark
from tests.support.processors import LifecycleLog


class Recorder(LifecycleLog):
    """Forwards items; records watermarks and lifecycle calls."""

    def try_process_any(self, ordinal, item):
        return self.try_emit(item)

    def try_process_watermark(self, watermark):
        self.log.append(watermark)
        return self.try_emit(f"wm({watermark.timestamp})")


def tasklet(processor, priorities=None, capacities=(16,), **kw):
    return ProcessorTasklet(processor, Context(vertex_name="v"), inbound_priorities={0: 0, 1: 0} if priorities is None else priorities,
                            outbound_capacities=list(capacities), policy=PIPELINED, **kw)


def run(t, limit=100):
    out = []
    for _ in range(limit):
        result = t.step()
        for _, payload in t.take_output():
            out += payload if isinstance(payload, list) else [payload]  # DONE, barriers: on their own
        if result == NEEDS_INPUT:
            break
    return out


def test_tasklet_pipelined_calls_try_process_before_any_input():
    p = Recorder()
    t = tasklet(p)
    run(t)
    assert "try_process" in p.log and not t.is_done


def test_tasklet_v85_items_then_watermark_processed_after_them():
    p = Recorder()
    t = tasklet(p, priorities={0: 0})
    t.add_batch(0, [0, 1])
    t.add_watermark(0, 123)
    assert run(t) == [0, 1, "wm(123)"]


def test_tasklet_v86_watermark_held_until_every_edge_reaches_it():
    p = Recorder()
    t = tasklet(p)
    t.add_batch(0, [0, 1])
    t.add_watermark(0, 100)
    assert run(t) == [0, 1]
    t.add_watermark(1, 99)
    assert run(t) == ["wm(99)"]


def test_tasklet_v90_idle_on_every_edge_forwarded_without_calling_the_processor():
    p = Recorder()
    t = tasklet(p)
    t.add_watermark(0, IDLE)
    t.add_watermark(1, IDLE)
    assert run(t) == [Watermark(IDLE)]
    assert not any(isinstance(x, Watermark) for x in p.log)


def test_tasklet_v92_done_edge_stops_holding_watermarks_and_edges_complete_in_order():
    p = Recorder()
    t = tasklet(p)
    t.add_watermark(0, 100)
    t.edge_done(1)
    assert run(t) == ["wm(100)"]
    t.edge_done(0)
    run(t)
    assert t.is_done
    assert [x for x in p.log if x != "try_process"][-3:] == [("complete_edge", 0), ("complete_edge", 1), "complete"]


def test_tasklet_priority_group_not_read_before_lower_group_completed():
    p = Recorder()
    t = tasklet(p, priorities={0: 1, 1: 0})
    t.add_batch(0, ["late"])
    t.add_batch(1, ["early"])
    assert run(t) == ["early"]
    t.edge_done(1)
    assert run(t) == ["late"]


def test_tasklet_when_watermark_decreases_then_error():
    t = tasklet(Recorder(), priorities={0: 0})
    t.add_watermark(0, 10)
    with pytest.raises(ValueError, match="monotonically"):
        t.add_watermark(0, 9)


def test_tasklet_pipelined_waiting_complete_is_not_a_contract_error():
    class Waits(Processor):
        def __init__(self):
            self.calls = 0

        def complete(self):
            self.calls += 1
            return self.calls > 3000

    t = tasklet(Waits(), priorities={})
    steps = 0
    while not t.is_done and steps < 10000:
        t.step()
        steps += 1
    assert t.is_done


def test_tasklet_pipelined_stuck_process_still_a_contract_error():
    class Stuck(Processor):
        def process(self, ordinal, inbox):
            pass

    t = tasklet(Stuck(), priorities={0: 0})
    t.add_batch(0, [1])
    with pytest.raises(ProcessorContractError, match="no progress"):
        for _ in range(5000):
            assert t.step() != NEEDS_INPUT


def test_tasklet_step_reports_progress_for_init():
    t = tasklet(Recorder())
    assert t.step() == PROGRESS
