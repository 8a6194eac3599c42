from __future__ import annotations

import pytest

from dag.errors import ProcessorContractError
from processors import (
    SAME_ITEMS_ANY_ORDER,
    AbstractProcessor,
    Outbox,
    Processor,
    ProcessorMetaSupplier,
    ProcessorSupplier,
    Watermark,
    traverse_iterable,
    verify_processor,
)
from processors.api.processor import BatchTransform
from processors.testing import TestMode
from tests.support.processors import EmitsNone, Slow, Tag


class Double(AbstractProcessor):
    def try_process0(self, item):
        return self.try_emit(item * 2)


class Pairs(AbstractProcessor):
    """Emits every item twice via a FlatMapper: correct under a 1-slot outbox."""

    def __init__(self):
        super().__init__()
        self.fm = self.flat_mapper(lambda x: [x, x])

    def try_process0(self, item):
        return self.fm.try_process(item)


class Summer(AbstractProcessor):
    """Sums its input and emits the sum in complete(); snapshots its state correctly."""

    def __init__(self):
        super().__init__()
        self.total = 0
        self.emitted = False

    def try_process0(self, item):
        self.total += item
        return True

    def complete(self):
        return self.try_emit(self.total)

    def save_to_snapshot(self):
        return self.try_emit_to_snapshot("total", self.total)

    def restore_from_snapshot_entry(self, key, value):
        self.total += value


class Counting(AbstractProcessor):
    """Emits 0..n-1 from complete() (a source), with resumable emission."""

    def __init__(self, n=5):
        super().__init__()
        self.t = traverse_iterable(range(n))

    def complete(self):
        return self.emit_from_traverser(self.t)


def test_verify_processor_when_correct_processor_then_passes():
    verify_processor(Double).input([1, 2, 3]).expect_output([2, 4, 6])
    verify_processor(Pairs).input([1, 2]).expect_output([1, 1, 2, 2])
    verify_processor(Summer).input([1, 2, 3, 4]).expect_output([10])
    verify_processor(Counting).disable_snapshots().expect_output([0, 1, 2, 3, 4])


def test_verify_processor_accepts_supplier_and_meta_supplier():
    verify_processor(ProcessorSupplier.of(Double)).input([1]).expect_output([2])
    verify_processor(ProcessorMetaSupplier.force_total_parallelism_one(Double)).input([1]).expect_output([2])


def test_verify_processor_expect_output_returns_none():
    assert verify_processor(Double).input([1]).expect_output([2]) is None


def test_verify_processor_when_output_differs_then_assertion_shows_mode_expected_and_actual_per_line():
    with pytest.raises(AssertionError) as err:
        verify_processor(Double).input([1, 2]).expect_output([2, 5])
    msg = str(err.value)
    assert 'mode "snapshots disabled, inboxLimit=1"' in msg
    assert "expected:\n  2\n  5\nactual:\n  2\n  4" in msg


def test_verify_processor_when_order_differs_then_same_items_any_order_accepts():
    class Reverse(AbstractProcessor):
        def __init__(self):
            super().__init__()
            self.items = []
            self.out = None

        def try_process0(self, item):
            self.items.append(item)
            return True

        def complete(self):
            if self.out is None:
                self.out = traverse_iterable(list(reversed(self.items)))
            return self.emit_from_traverser(self.out)

    with pytest.raises(AssertionError):
        verify_processor(Reverse).disable_snapshots().input([1, 2, 3]).expect_output([1, 2, 3])
    verify_processor(Reverse).disable_snapshots().output_checker(SAME_ITEMS_ANY_ORDER).input([1, 2, 3]).expect_output(
        [1, 2, 3]
    )


def test_same_items_any_order():
    assert SAME_ITEMS_ANY_ORDER([1, 2, 2], [2, 1, 2])
    assert not SAME_ITEMS_ANY_ORDER([1, 2, 2], [2, 1, 1])
    assert SAME_ITEMS_ANY_ORDER([[1], [2]], [[2], [1]])  # unhashable items
    assert not SAME_ITEMS_ANY_ORDER([[1]], [[2]])


class IgnoresRefusal(AbstractProcessor):
    """BROKEN: emits two items per input and ignores try_emit's result."""

    def try_process0(self, item):
        self.try_emit(item)
        self.try_emit(item + 100)
        return True


def test_verify_processor_when_processor_ignores_refused_offer_then_assertion_error():
    with pytest.raises(AssertionError, match=r"Outbox rule broken by .*offer\(\) returned False") as err:
        verify_processor(IgnoresRefusal).input([1, 2]).expect_output([1, 101, 2, 102])
    assert not isinstance(err.value, ProcessorContractError)  # Jet's TestSupport fails with an AssertionError
    assert any("verify_processor mode" in note for note in err.value.__notes__)


class EmitsToOrdinal3(AbstractProcessor):
    def try_process0(self, item):
        return self.try_emit(item, 3)


@pytest.mark.parametrize("broken, rule", [(EmitsNone, "None"), (EmitsToOrdinal3, "illegal edge ordinal 3")])
def test_verify_processor_when_outbox_rule_broken_then_assertion_error_with_runtime_message(broken, rule):
    with pytest.raises(AssertionError, match=f"Outbox rule broken by processor {broken.__name__}.*{rule}"):
        verify_processor(broken).input([1]).expect_output([1])
    outbox = Outbox([4], owner="p")
    with pytest.raises(ProcessorContractError, match="Outbox rule broken by p"):  # the runtime's type is kept
        outbox.offer(None) if broken is EmitsNone else outbox.offer(1, 3)


def test_verify_processor_when_given_instance_then_runs_it_once_without_snapshots():
    processor = Summer()
    verifier = verify_processor(processor).input([1, 2, 3])
    verifier.expect_output([6])
    assert processor.total == 6  # one mode only: the modes needing fresh instances are off, as in Jet
    with pytest.raises(AssertionError, match="processor instance, which runs once"):
        verifier.expect_output([6])


class DropsRefused(AbstractProcessor):
    """BROKEN: when the outbox refuses, silently skips the item instead of retrying."""

    def try_process0(self, item):
        self.try_emit(item)
        return True


def test_verify_processor_when_processor_drops_refused_items_then_caught():
    # inbox limit 1024: item 2 is refused and dropped, item 3 is offered after the refusal
    with pytest.raises(AssertionError, match="called again after it returned False"):
        verify_processor(DropsRefused).input([1, 2, 3]).expect_output([1, 2, 3])


class ForgetsState(Summer):
    """BROKEN: saves nothing to the snapshot, so a restored instance loses the running total."""

    def save_to_snapshot(self):
        return True


def test_verify_processor_when_processor_loses_state_across_snapshot_then_caught():
    verify_processor(ForgetsState).disable_snapshots().input([1, 2, 3]).expect_output([6])  # fine without restore
    with pytest.raises(AssertionError, match='mode "snapshots enabled, restoring every snapshot"'):
        verify_processor(ForgetsState).input([1, 2, 3]).expect_output([6])


class SharesState(Summer):
    """Snapshots its live list and keeps mutating it: the outbox must copy the entry when it accepts it."""

    saved: list = []

    def __init__(self):
        super().__init__()
        self.seen = []

    def try_process0(self, item):
        self.seen.append(item)
        return True

    def complete(self):
        return self.try_emit(sum(self.seen))

    def save_to_snapshot(self):
        return self.try_emit_to_snapshot("seen", self.seen)

    def restore_from_snapshot_entry(self, key, value):
        self.seen = value

    def init_processor(self, context):
        SharesState.saved.append(self)


def test_verify_processor_snapshot_entries_are_copied_so_restored_state_is_independent():
    SharesState.saved.clear()
    verify_processor(SharesState).input([1, 2, 3]).expect_output([6])
    lists = [id(p.seen) for p in SharesState.saved]
    assert len(set(lists)) == len(lists), "restored instances must not share the saved list"


def test_outbox_snapshot_entry_copied_when_accepted():
    from processors import Outbox

    box = Outbox([1], snapshot_capacity=2)
    state = {"a": [1]}
    box.offer_to_snapshot("k", state)
    state["a"].append(2)
    assert box.drain_snapshot() == [("k", {"a": [1]})]


class NoProgress(Processor):
    """BROKEN: process() never removes an item."""

    def process(self, ordinal, inbox):
        pass


def test_verify_processor_when_no_progress_then_assertion_names_method():
    with pytest.raises(AssertionError, match=r"process\(\) call without progress"):
        verify_processor(NoProgress).input([1]).expect_output([])


def test_verify_processor_disable_progress_assertion():
    class Lazy(Processor):
        def __init__(self):
            self.calls = 0

        def process(self, ordinal, inbox):
            self.calls += 1
            if self.calls % 2 == 0:
                inbox.clear()

    verify_processor(Lazy).disable_progress_assertion().input([1, 2]).expect_output([])


def test_verify_processor_when_complete_claims_done_with_unfinished_item_then_assertion():
    class Liar(AbstractProcessor):
        def complete(self):
            self.try_emit("a")
            self.try_emit("b")  # refused by the 1-slot outbox, result ignored
            return True

    with pytest.raises(AssertionError, match="unfinished items, but complete\\(\\) claims to be done"):
        verify_processor(Liar).disable_snapshots().expect_output(["a", "b"])


def test_verify_processor_complete_call_and_snapshots_can_be_disabled():
    calls = []

    class P(Summer):
        def complete(self):
            calls.append("complete")
            return True

        def save_to_snapshot(self):
            calls.append("save")
            return True

    verify_processor(P).disable_complete_call().disable_snapshots().input([1]).expect_output([])
    assert calls == []


def test_verify_processor_runs_jet_modes_with_fresh_processors():
    made = []

    class P(Double):
        def __init__(self):
            super().__init__()
            made.append(self)

    modes = []
    verify_processor(P).input([1]).assert_output(1, lambda mode, actual: modes.append(str(mode)))
    assert modes == [
        "snapshots disabled, inboxLimit=1",
        "snapshots disabled, inboxLimit=1024",
        "snapshots enabled, restoring every snapshot",
        "snapshots enabled, restoring every other snapshot",
        "snapshots enabled, never restoring them, inboxLimit=1",
    ]
    assert len(made) > 5, "restoring modes create fresh instances"


def test_verify_processor_without_input_skips_inbox_limit_1024_mode():
    modes = []
    verify_processor(Counting).assert_output(1, lambda mode, actual: modes.append(mode))
    assert TestMode(False, 0, 1024) not in modes and len(modes) == 4


def test_verify_processor_calls_process_again_with_full_outbox():
    seen_full = []

    class Watcher(AbstractProcessor):
        def try_process0(self, item):
            seen_full.append(self.outbox.is_full(0))
            return self.try_emit(item)

    verify_processor(Watcher).disable_snapshots().input([1, 2]).expect_output([1, 2])
    assert True in seen_full, "process() must also be called while the 1-slot outbox is still full"


def test_verify_processor_inputs_round_robin_and_priorities():
    def ordinal_tag():
        return Tag("ordinal", "item")

    verify_processor(ordinal_tag).disable_snapshots().inputs([[1, 2], ["a", "b"]]).expect_output(
        [(0, 1), (1, "a"), (0, 2), (1, "b")]
    )
    verify_processor(ordinal_tag).disable_snapshots().inputs([[1, 2], ["a", "b"]], priorities=[1, 0]).expect_output(
        [(1, "a"), (1, "b"), (0, 1), (0, 2)]
    )
    with pytest.raises(ValueError, match="Number of inputs must be equal to number of priorities"):
        verify_processor(ordinal_tag).inputs([[1]], priorities=[0, 1])


def test_verify_processor_expect_outputs_per_ordinal():
    class Split(AbstractProcessor):
        def try_process0(self, item):
            return self.try_emit(item, item % 2)

    verify_processor(Split).input([1, 2, 3, 4]).expect_outputs([[2, 4], [1, 3]])
    with pytest.raises(AssertionError, match="at outbound ordinal 1"):
        verify_processor(Split).input([1, 2]).expect_outputs([[2], [3]])


def test_verify_processor_watermarks_go_to_try_process_watermark():
    verify_processor(Double).input([1, Watermark(5), 2]).expect_output([2, Watermark(5), 4])


def test_verify_processor_batch_transform_via_process():
    class Words(BatchTransform):
        def transform_batch(self, items):
            return [w for line in items for w in line.split()]

    verify_processor(Words).input(["a b", "", "c d e"]).expect_output(list("abcde"))


def test_verify_processor_cooperative_timeout():
    def slow():  # 30 ms a process() call: longer than the cooperative timeout
        return Slow(0.03)

    def slow_non_cooperative():
        return Slow(0.03, cooperative=False)

    with pytest.raises(AssertionError, match=r"took .*ms, it should be <20ms"):
        verify_processor(slow).cooperative_timeout(20).disable_snapshots().input([1]).expect_output([])
    verify_processor(slow).cooperative_timeout(0).disable_snapshots().input([1]).expect_output([])
    verify_processor(slow_non_cooperative).cooperative_timeout(20).disable_snapshots().input([1]).expect_output([])


def test_verify_processor_closes_processors_and_supplier():
    closed = []

    class P(Double):
        def close(self):
            closed.append("p")

    class PS(ProcessorSupplier):
        def get(self, count):
            return [P() for _ in range(count)]

        def close(self, error):
            closed.append(("ps", error))

    verify_processor(PS()).disable_snapshots().input([1]).expect_output([2])
    assert closed == ["p", "p", ("ps", None)]


def test_verify_processor_when_logging_enabled_then_logs_items(caplog):
    with caplog.at_level("INFO", logger="jetspark.verify_processor"):
        verify_processor(Double).disable_snapshots().input([21]).expect_output([42])
    assert "input[0]: 21" in caplog.text and "output[0]: 42" in caplog.text
    caplog.clear()
    with caplog.at_level("INFO", logger="jetspark.verify_processor"):
        verify_processor(Double).disable_logging().disable_snapshots().input([21]).expect_output([42])
    assert caplog.text == ""


def test_verify_processor_output_checker_when_not_callable_then_rejected():
    with pytest.raises(TypeError, match=r"output_checker\(fn\)"):
        verify_processor(Double).output_checker("==")
