"""The tasklet's one state machine, engine-free: which state follows which, what each state emits, and the
snapshot, DONE and close transitions the runtimes rely on (they only route what the tasklet emits)."""

from __future__ import annotations

import pytest

from dag.errors import DagValidationError
from processors import Context, ProcessorSupplier, verify_processor
from processors.execution.barrier import SnapshotBarrier
from processors.execution.lifecycle import open_processors, priority_groups
from processors.execution.tasklet import (
    DONE,
    NEEDS_INPUT,
    PIPELINED,
    PROGRESS,
    STAGED,
    ProcessorState,
    ProcessorTasklet,
)
from tests.support.processors import LifecycleLog

S = ProcessorState


class Logged(LifecycleLog):
    """Forwards items; logs every lifecycle call; keeps a count as its snapshot state."""

    def __init__(self, complete_after: int = 1):
        super().__init__()
        self.count = 0
        self.complete_after = complete_after
        self.closed = 0

    def try_process_any(self, ordinal, item):
        if not self.try_emit(item):
            return False  # refused by the full bucket: offered again on the next call
        self.log.append(("item", item))
        self.count += 1
        return True

    def complete(self):
        super().complete()
        return self.log.count("complete") >= self.complete_after

    def save_to_snapshot(self):
        self.log.append("save")
        return self.try_emit_to_snapshot("count", self.count)

    def snapshot_commit_prepare(self):
        self.log.append("prepare")
        return True

    def snapshot_commit_finish(self, success):
        self.log.append(("finish", success))
        return True

    def restore_from_snapshot_entry(self, key, value):
        self.log.append(("restore", key, value))
        self.count = value

    def close(self):
        self.closed += 1


def tasklet(processor, priorities=None, policy=PIPELINED, snapshots=True, capacity=16):
    priorities = {0: 0} if priorities is None else priorities
    return ProcessorTasklet(processor, Context(vertex_name="v"), inbound_priorities=priorities,
                            outbound_capacities=[capacity], policy=policy,
                            snapshot_aligned=True if snapshots else None)


def steps(t, limit=50):
    """Step until NEEDS_INPUT; the output (DONE and barriers as themselves) and the states after each step."""
    out, states = [], []
    for _ in range(limit):
        result = t.step()
        states.append(t.state)
        for _, payload in t.take_output():
            out += payload if isinstance(payload, list) else [payload]
        if result == NEEDS_INPUT:
            return out, states
    raise AssertionError(f"no NEEDS_INPUT in {limit} steps: {states}")


def test_tasklet_states_init_then_process_inbox_then_complete_then_done_last():
    p = Logged()
    t = tasklet(p, snapshots=False)
    assert t.state is S.INIT
    assert t.step() == PROGRESS and t.state is S.PROCESS_INBOX
    t.add_batch(0, ["a", "b"])
    out, _ = steps(t)
    assert out == ["a", "b"] and not t.is_done
    t.edge_done(0)
    out, states = steps(t)
    assert out == [DONE] and t.state is S.END and t.is_done
    assert S.COMPLETE in states
    assert [x for x in p.log if x != "try_process"][-2:] == [("complete_edge", 0), "complete"]


def test_tasklet_states_snapshot_requested_mid_inbox_saves_after_the_inbox_then_emits_barrier_after_items():
    p = Logged()
    t = tasklet(p, capacity=1)  # one item per step: the inbox is still full when the barrier arrives
    t.step()
    t.add_batch(0, [1, 2, 3])
    assert t.step() == PROGRESS  # process(): item 1
    out = [x for _, items in t.take_output() for x in items]
    t.add_barrier(0, SnapshotBarrier(7))
    assert not t.wants_input()  # no new input while a save is due
    rest, states = steps(t)
    out += rest
    barrier = out.index(SnapshotBarrier(7))
    assert out[:barrier] == [1, 2, 3] and p.log.index("save") > p.log.index(("item", 3))
    assert states.count(S.SNAPSHOT_COMMIT_PREPARE) == 1 and states[-1] is S.PROCESS_INBOX
    assert t.take_snapshots() == [(7, [("count", 3)])] and p.log.count("prepare") == 1
    assert t.wants_input()


def test_tasklet_states_done_only_after_every_edge_completed_and_the_pending_snapshot():
    p = Logged(complete_after=2)  # complete() returns False once
    t = tasklet(p, priorities={0: 0, 1: 0})
    t.step()
    t.add_batch(0, ["x"])
    t.edge_done(0)
    out, _ = steps(t)
    assert DONE not in out and not t.is_done  # edge 1 is still active
    t.add_barrier(1, SnapshotBarrier(1))  # edge 0 ended, so this completes the barrier
    t.edge_done(1)
    out, states = steps(t)
    assert out == [SnapshotBarrier(1), DONE]
    assert p.log.index("save") < p.log.index("complete") and p.log.count("complete") == 2
    assert states[-1] is S.END and t.take_snapshots() == [(1, [("count", 1)])]


def test_tasklet_states_close_exactly_once_on_failure():
    class Fails(Logged):
        def try_process_any(self, ordinal, item):
            raise RuntimeError("boom")

    p = Fails()
    t = tasklet(p)
    t.step()
    t.add_batch(0, [1])
    with pytest.raises(RuntimeError, match="boom") as err:
        t.step()
    assert err.value.__notes__[0].endswith("Fails of vertex 'v' #0, method process(0, inbox)")
    t.close(err.value)
    t.close(err.value)
    assert p.closed == 1 and t.state is S.CLOSED
    assert t.step() == NEEDS_INPUT and p.log == []  # a closed tasklet calls nothing


def test_tasklet_states_phase_two_preempts_end_and_resumes_it():
    p = Logged()
    t = tasklet(p, priorities={})
    t.step()
    t.request_snapshot(3)  # a source: no active input, so the request applies
    steps(t)
    assert t.take_snapshots() == [(3, [("count", 0)])] and t.is_done
    t.on_snapshot_completed(2, True)  # not prepared here: dropped without a call
    t.on_snapshot_completed(3, True)
    assert t.phase_two_pending
    assert t.step() != PROGRESS and t.state is S.ON_SNAPSHOT_COMPLETED
    assert t.step() == PROGRESS and t.state is S.END
    assert p.log.count(("finish", True)) == 1 and not t.phase_two_pending
    t.request_snapshot(4)  # completed: takes part without saving
    assert t.take_snapshots() == [(4, None)]


def test_tasklet_states_restore_runs_before_any_input():
    p = Logged()
    t = tasklet(p)
    t.restore_snapshot([("count", 5)])
    assert t.restoring and t.step() == PROGRESS and t.state is S.RESTORE_FROM_SNAPSHOT
    assert not t.wants_input()
    steps(t)
    assert p.log[:1] == [("restore", "count", 5)] and p.count == 5 and t.state is S.PROCESS_INBOX
    assert not t.restoring and t.wants_input()


def test_tasklet_states_restored_as_completed_emits_done_without_init():
    class NeverInit(Logged):
        def init_processor(self, context):
            raise AssertionError("initialised")

    t = tasklet(NeverInit())
    t.restored_as_completed()
    assert t.is_done and not t.wants_input()
    assert steps(t)[0] == [DONE]


def test_tasklet_states_staged_policy_nullary_after_each_inbox_and_no_done():
    p = Logged()
    t = tasklet(p, policy=STAGED, snapshots=False)
    t.step()
    t.add_batch(0, ["a"])
    assert t.step() == PROGRESS and t.state is S.NULLARY_PROCESS
    t.edge_done(0)
    out, _ = steps(t)
    assert out == ["a"] and t.is_done  # the staged runtime ends a processor's stream itself
    assert p.log == [("item", "a"), "try_process", ("complete_edge", 0), "complete"]


def test_tasklet_states_restarting_a_tasklet_is_refused():
    t = tasklet(Logged())
    t.step()
    with pytest.raises(RuntimeError, match="PROCESS_INBOX"):
        t.restore_snapshot([])


def test_priority_groups_lowest_priority_first_ordinals_ascending():
    assert priority_groups({2: 1, 0: 1, 1: 0}) == [(0, [1]), (1, [0, 2])]
    assert priority_groups({}) == []


class _Wrong(ProcessorSupplier):
    def get(self, count):
        return [Logged()]


def test_open_processors_wrong_count_names_vertex_expected_and_got():
    with pytest.raises(DagValidationError, match=r"vertex 'tokenize' failed .* Requested: 2, returned: 1"):
        open_processors(_Wrong(), 2, "tokenize")


def test_open_processors_closes_the_processors_not_kept():
    made: list[Logged] = []

    class Supplier(ProcessorSupplier):
        def get(self, count):
            made.extend(Logged() for _ in range(count))
            return made[-count:]

    kept = open_processors(Supplier(), 3, "v", keep={1})
    assert list(kept) == [1] and [p.closed for p in made] == [1, 0, 1]


def test_verify_processor_wrong_supplier_count_is_the_same_error():
    class Two(ProcessorSupplier):
        def get(self, count):
            return [Logged(), Logged()]

    with pytest.raises(DagValidationError, match=r"vertex 'testVertex' failed .* Requested: 1, returned: 2"):
        verify_processor(Two()).disable_snapshots().input([1]).expect_output([1])
