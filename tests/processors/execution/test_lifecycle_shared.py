"""verify_processor, the staged drive() and the pipelined tasklet run a processor through the same
ProcessorTasklet: a lifecycle rule or message implemented once in the tasklet shows up identically in all three.

Each test runs one processor three ways - ``verify_processor`` (Jet's TestSupport), ``drive`` (the staged
runtime's driver) and a ``ProcessorTasklet(policy=PIPELINED)`` stepped as the pipelined runner steps it - and
compares what the user sees."""

from __future__ import annotations

import pytest

from dag.errors import ProcessorContractError
from processors import AbstractProcessor, Context, Processor, verify_processor
from processors.execution.staged import drive
from processors.execution.tasklet import NEEDS_INPUT, PIPELINED, ProcessorTasklet


def _staged(processor, items=(1,)):
    """Run ``processor`` on the staged driver with 1-slot buckets, as verify_processor's outbox."""
    return list(drive(processor, Context(), inbound=[(0, list(items))], inbound_priorities={0: 0},
                      outbound_capacities=[1]))


def _pipelined(processor, items=(1,), restore=None):
    """Step ``processor`` as the pipelined runner does, until done (or it needs input it won't get)."""
    tasklet = ProcessorTasklet(processor, Context(), inbound_priorities={0: 0}, outbound_capacities=[1],
                               policy=PIPELINED, snapshot_aligned=None if restore is None else True)
    if restore is not None:
        tasklet.restore_snapshot(restore)
    failure = None
    try:
        tasklet.add_batch(0, list(items))
        tasklet.edge_done(0)
        while not tasklet.is_done:
            result = tasklet.step()
            tasklet.take_output()
            assert result != NEEDS_INPUT
    except BaseException as exc:
        failure = exc
        raise
    finally:
        tasklet.close(failure)


class LosesRefusedItem(AbstractProcessor):
    """BROKEN: complete() emits two items and claims to be done although the 1-slot bucket refused the second."""

    def complete(self):
        self.try_emit("first")
        self.try_emit("second")
        return True


def test_lost_refused_item_when_complete_returns_true_then_one_message_in_verify_and_both_runtimes():
    with pytest.raises(ProcessorContractError) as staged:
        _staged(LosesRefusedItem(), items=())
    with pytest.raises(ProcessorContractError) as pipelined:
        _pipelined(LosesRefusedItem(), items=())
    with pytest.raises(AssertionError) as verified:
        verify_processor(LosesRefusedItem).disable_snapshots().expect_output(["first", "second"])

    rule = str(staged.value)
    assert "processor LosesRefusedItem of vertex 'testVertex' #0: complete() returned True" in rule
    assert "unfinished item ('second')" in rule
    assert str(pipelined.value) == rule
    # Jet's TestSupport wording first, then the tasklet's own explanation, word for word
    assert str(verified.value) == "outbox has unfinished items, but complete() claims to be done: " + rule


class SavesWithoutRestore(Processor):
    """BROKEN: saves an entry but does not implement restore_from_snapshot."""

    def init(self, outbox, context):
        self.outbox = outbox

    def process(self, ordinal, inbox):
        inbox.clear()

    def save_to_snapshot(self):
        return self.outbox.offer_to_snapshot("k", 1)


def test_restore_without_override_when_entries_saved_then_same_error_in_verify_and_pipelined_restart():
    with pytest.raises(ProcessorContractError) as restarted:
        _pipelined(SavesWithoutRestore(), restore=[("k", 1)])
    with pytest.raises(ProcessorContractError) as verified:
        verify_processor(SavesWithoutRestore).input([1]).expect_output([])

    message = str(restarted.value)
    assert message.startswith("processor SavesWithoutRestore of vertex 'testVertex' #0 received 1 snapshot entries "
                              "on restore, but class")
    assert str(verified.value) == message
    assert 'verify_processor mode: "snapshots enabled, restoring every snapshot"' in " ".join(verified.value.__notes__)


class FailsOnSecondItem(AbstractProcessor):
    def try_process0(self, item):
        if item == 2:
            raise ValueError("bad item 2")
        return self.try_emit(item)


@pytest.mark.parametrize("run", ["verify_processor", "staged", "pipelined"])
def test_processor_exception_when_raised_then_note_names_processor_and_method(run):
    with pytest.raises(ValueError, match="bad item 2") as err:
        if run == "verify_processor":
            verify_processor(FailsOnSecondItem).input([1, 2]).expect_output([1])
        elif run == "staged":
            _staged(FailsOnSecondItem(), [1, 2])
        else:
            _pipelined(FailsOnSecondItem(), [1, 2])
    assert "in processor FailsOnSecondItem of vertex 'testVertex' #0, method process(0, inbox)" in err.value.__notes__
