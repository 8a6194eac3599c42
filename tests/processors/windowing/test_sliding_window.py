"""Sliding and tumbling window processors: Jet's SlidingWindowP*Test vectors (V38-V54) in every verify_processor
mode (snapshot/restore cycles included), deduct use, multi-input and bad input."""

from __future__ import annotations

import random

import pytest

from processors import (MIN_WATERMARK, AggregateOperation, TimestampedEntry, TimestampKind, Watermark,
                        accumulate_by_frame_p, aggregate_operation2, aggregate_to_sliding_window_p,
                        combine_to_sliding_window_p, counting, entry, entry_key, sliding_win_policy, to_list, to_set,
                        tumbling_win_policy, verify_processor)
from processors.api.context import Context
from processors.api.inbox import Inbox
from processors.api.outbox import Outbox
from processors.windowing.sliding_window import NEXT_WIN_TO_EMIT

from tests.support.processors import RememberingSupplier

W = Watermark
KEY = 77


def T(ts, value):  # noqa: N802 - the vectors' notation
    return TimestampedEntry(ts, KEY, value)


def summing_op(deduct: bool) -> AggregateOperation:
    return AggregateOperation(lambda: 0, lambda acc, e: acc + e[1], lambda a, b: a + b,
                              (lambda a, b: a - b) if deduct else None)


def run_sliding(events, watermarks_and_order, expected, two_stage, deduct, complete=False):
    """``events``: (frame, value) pairs; ``watermarks_and_order``: the input after the events as W(n) items."""
    policy = sliding_win_policy(4, 1)
    op = summing_op(deduct)
    if two_stage:
        supplier = combine_to_sliding_window_p(policy, op)
        items = [T(frame, value) for frame, value in events]
    else:
        supplier = aggregate_to_sliding_window_p([lambda e: KEY], [entry_key], TimestampKind.EVENT, policy, op)
        items = [entry(frame - 1, value) for frame, value in events]
    recorder = RememberingSupplier(supplier)
    verifier = verify_processor(recorder).input(items + watermarks_and_order)
    if not complete:
        verifier.disable_complete_call()
    verifier.expect_output(expected)
    final = recorder.made[-1]
    assert not final.frames and not final.sliding_window


MODES = [(two, deduct) for two in (False, True) for deduct in (False, True)]
MODE_IDS = [f"{'two' if two else 'single'}-stage-{'deduct' if deduct else 'recompute'}" for two, deduct in MODES]


@pytest.mark.parametrize("two_stage, deduct", MODES, ids=MODE_IDS)
def test_sliding_window_when_only_watermark_then_forwarded(two_stage, deduct):
    run_sliding([], [W(1)], [W(1)], two_stage, deduct)


@pytest.mark.parametrize("two_stage, deduct", MODES, ids=MODE_IDS)
def test_sliding_window_when_first_watermark_passes_several_windows_then_all_emitted(two_stage, deduct):
    run_sliding([(0, 1)], [W(3)], [T(0, 1), T(1, 1), T(2, 1), T(3, 1), W(3)], two_stage, deduct)


V40_OUT = [T(0, 1), W(0), T(1, 2), W(1), T(2, 3), W(2), T(3, 4), W(3), T(4, 4), W(4), T(5, 3), W(5), T(6, 2), W(6),
           T(7, 1), W(7)]


@pytest.mark.parametrize("two_stage, deduct", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("order", [range(5), range(4, -1, -1)], ids=["ordered", "reversed"])
def test_sliding_window_when_watermark_per_frame_then_each_window_once(two_stage, deduct, order):
    run_sliding([(f, 1) for f in order], [W(t) for t in range(8)], V40_OUT, two_stage, deduct)


@pytest.mark.parametrize("two_stage, deduct", MODES, ids=MODE_IDS)
def test_sliding_window_when_hundred_shuffled_frames_then_as_jet(two_stage, deduct):
    frames = list(range(100))
    random.Random(42).shuffle(frames)
    expected = [T(0, 1), W(0), T(1, 2), W(1), T(2, 3), W(2), T(3, 4), W(3)]
    for t in range(4, 100):
        expected += [T(t, 4), W(t)]
    expected += [T(100, 3), W(100), T(101, 2), W(101), T(102, 1), W(102), W(103), W(104), W(105)]
    run_sliding([(f, 1) for f in frames], [W(t) for t in range(106)], expected, two_stage, deduct)


@pytest.mark.parametrize("two_stage, deduct", MODES, ids=MODE_IDS)
def test_sliding_window_when_complete_then_every_window_with_a_frame_emitted(two_stage, deduct):
    run_sliding([(0, 1), (1, 1)], [], [T(0, 1), T(1, 2), T(2, 2), T(3, 2), T(4, 1)], two_stage, deduct,
                complete=True)


@pytest.mark.parametrize("two_stage, deduct", MODES, ids=MODE_IDS)
def test_sliding_window_when_items_behind_watermark_then_dropped_as_late(two_stage, deduct):
    policy = sliding_win_policy(4, 1)
    op = summing_op(deduct)
    if two_stage:
        supplier = combine_to_sliding_window_p(policy, op)
        items = [T(f, v) for f, v in [(7, 1), (8, 1), (9, 1), (10, 1), (11, 123)]]
    else:
        supplier = aggregate_to_sliding_window_p([lambda e: KEY], [entry_key], TimestampKind.EVENT, policy, op)
        items = [entry(f - 1, v) for f, v in [(7, 1), (8, 1), (9, 1), (10, 1), (11, 123)]]
    verify_processor(supplier).input([W(10)] + items).expect_output(
        [W(10), T(11, 123), T(12, 123), T(13, 123), T(14, 123)])


# ------------------------------------------------------------------------------------------------ stage 1

def stage1():
    op = AggregateOperation(lambda: 0, lambda acc, e: acc + e[1], lambda a, b: a + b)
    return accumulate_by_frame_p([lambda e: KEY], [entry_key], TimestampKind.EVENT, sliding_win_policy(16, 4), op)


@pytest.mark.parametrize("items, expected, complete", [
    ([(0, 1), (1, 1), W(4), (4, 1), (5, 1), (8, 1), (8, 1), W(8), (8, 1), W(12), W(16), W(20)],
     [T(4, 2), W(4), T(8, 2), W(8), T(12, 3), W(12), W(16), W(20)], False),
    ([(0, 1), (1, 1), W(12)], [T(4, 2), W(12)], False),
    ([W(4), W(8), W(12)], [W(4), W(8), W(12)], False),
    ([(0, 1), (4, 1), (8, 1), W(4)], [T(4, 1), W(4), T(8, 1), T(12, 1)], True),
    ([(0, 1), (4, 1)], [T(4, 1), T(8, 1)], True),
    ([W(16), (7, 1)], [W(16)], False),
], ids=["V45", "V46", "V47", "V48", "V49", "V50"])
def test_accumulate_by_frame_when_watermarks_then_frames_emitted_as_jet(items, expected, complete):
    verifier = verify_processor(stage1()).disable_snapshots().input(items)
    if not complete:
        verifier.disable_complete_call()
    verifier.expect_output(expected)


def test_accumulate_by_frame_when_snapshots_then_frames_flushed_and_totals_per_frame_kept():
    items = [(0, 1), (1, 1), W(4), (4, 1), (5, 1), (8, 1), (8, 1), W(8), (8, 1), W(12)]

    def check(mode, actual):
        (out,) = actual
        totals: dict = {}
        for item in out:
            if isinstance(item, TimestampedEntry):
                totals[item.timestamp] = totals.get(item.timestamp, 0) + item.value
        assert totals == {4: 2, 8: 2, 12: 3}, mode
        assert [item for item in out if isinstance(item, Watermark)] == [W(4), W(8), W(12)], mode
        highest_wm = MIN_WATERMARK
        for item in out:  # a frame is never emitted after a watermark that passed its end (it would be late)
            if isinstance(item, Watermark):
                highest_wm = item.timestamp
            else:
                assert item.timestamp > highest_wm, (mode, out)

    verify_processor(stage1()).input(items).assert_output(1, check)


def test_two_stage_when_stage1_snapshots_then_flushed_frames_combine_to_the_same_windows():
    policy = sliding_win_policy(4, 1)
    op = summing_op(True)
    s1 = accumulate_by_frame_p([lambda e: KEY], [entry_key], TimestampKind.EVENT, policy, op)
    a, b = s1(), s1()
    outboxes = []
    for p in (a, b):
        box = Outbox([16], snapshot_capacity=16)
        p.init(box, Context())
        outboxes.append(box)
    a.process(0, Inbox([(1, 1)]))
    b.process(0, Inbox([(2, 2)]))
    assert a.save_to_snapshot() and b.save_to_snapshot()
    assert outboxes[0].drain_snapshot() == [] and outboxes[1].drain_snapshot() == []
    assert not a.frames and not b.frames
    to_stage2 = outboxes[0].drain(0) + outboxes[1].drain(0)
    assert to_stage2 == [T(2, 1), T(3, 2)]
    a.process(0, Inbox([(3, 3), (4, 4)]))
    assert a.try_process_watermark(W(10)) and b.try_process_watermark(W(10))
    from_a, from_b = outboxes[0].drain(0), outboxes[1].drain(0)
    assert from_a == [T(4, 3), T(5, 4), W(10)] and from_b == [W(10)]
    stage2 = combine_to_sliding_window_p(policy, op)
    verify_processor(stage2).input(to_stage2 + from_a[:-1] + [W(10)]).expect_output(
        [T(2, 1), T(3, 3), T(4, 6), T(5, 10), T(6, 9), T(7, 7), T(8, 4), W(10)])


def test_combine_when_unaligned_frame_timestamps_and_no_deduct_then_rounded_up_and_recomputed():
    p = combine_to_sliding_window_p(sliding_win_policy(8, 4), to_set())
    verify_processor(p).input([TimestampedEntry(2, KEY, {"a"}), TimestampedEntry(4, KEY, {"b"}),
                               TimestampedEntry(6, KEY, {"c"})]).expect_output(
        [TimestampedEntry(4, KEY, {"a", "b"}), TimestampedEntry(8, KEY, {"a", "b", "c"}),
         TimestampedEntry(12, KEY, {"c"})])


def test_aggregate_when_two_inputs_then_co_grouped_per_key():
    p = aggregate_to_sliding_window_p([entry_key, entry_key], [lambda e: 1, lambda e: 1], TimestampKind.FRAME,
                                      tumbling_win_policy(1), aggregate_operation2(to_list(), to_list()))
    e1, e2, e3, e4, e5 = ("k1", "a"), ("k2", "b"), ("k1", "c"), ("k3", "d"), ("k1", "e")
    verify_processor(p).inputs([[e1, e2], [e3, e4, e5]]).expect_output([
        TimestampedEntry(1, "k1", ([e1], [e3, e5])), TimestampedEntry(1, "k2", ([e2], [])),
        TimestampedEntry(1, "k3", ([], [e4])),
    ])


def _restored(guarantee, values):
    p = aggregate_to_sliding_window_p([entry_key], [entry_key], TimestampKind.EVENT, tumbling_win_policy(1),
                                      counting())()
    p.init(Outbox([1], snapshot_capacity=1), Context(processing_guarantee=guarantee))
    p.restore_from_snapshot(Inbox([(NEXT_WIN_TO_EMIT, v) for v in values]))
    p.finish_snapshot_restore()
    return p


def test_restore_when_positions_differ_then_lowest_at_least_once_and_error_exactly_once():
    from dag.config import ProcessingGuarantee as G
    assert _restored(G.AT_LEAST_ONCE, [2, 1]).next_win_to_emit == 1
    assert _restored(G.AT_LEAST_ONCE, []).next_win_to_emit == MIN_WATERMARK
    with pytest.raises(Exception, match="different values for NEXT_WIN_TO_EMIT restored, before=1, new=2"):
        _restored(G.EXACTLY_ONCE, [1, 2])


# ------------------------------------------------------------------------------------------------ deduct

def test_sliding_window_when_op_has_deduct_then_deduct_used_instead_of_recomputing():
    calls = {"combine": 0, "deduct": 0}

    def combine(a, b):
        calls["combine"] += 1
        return a + b

    def deduct(a, b):
        calls["deduct"] += 1
        return a - b

    op = AggregateOperation(lambda: 0, lambda acc, e: acc + 1, combine, deduct)
    p = aggregate_to_sliding_window_p([entry_key], [lambda e: e[1]], TimestampKind.EVENT, sliding_win_policy(10, 1),
                                      op)
    items = [("k", t) for t in range(50)] + [W(60)]
    verify_processor(p).disable_snapshots().input(items).output_checker(lambda e, a: True).expect_output([])
    # 60 windows (ends 1..60) over 50 frames: per window one leading frame combined (recomputing would combine
    # up to ten) and each frame deducted once when it trails out; verify_processor runs two modes
    assert calls == {"combine": 2 * 50, "deduct": 2 * 50}


def test_sliding_window_when_count_back_to_zero_then_key_leaves_the_window():
    p = aggregate_to_sliding_window_p([entry_key], [lambda e: e[1]], TimestampKind.EVENT, sliding_win_policy(2, 1),
                                      counting())
    verify_processor(p).input([("a", 0), ("b", 1), W(4)]).expect_output([
        TimestampedEntry(1, "a", 1), TimestampedEntry(2, "a", 1), TimestampedEntry(2, "b", 1),
        TimestampedEntry(3, "b", 1), W(4)])


def test_map_to_output_fn_when_none_then_window_result_skipped():
    p = aggregate_to_sliding_window_p([entry_key], [lambda e: e[1]], TimestampKind.EVENT, tumbling_win_policy(2),
                                      counting(), lambda s, e, k, v: None if k == "skip" else (s, e, k, v))
    verify_processor(p).input([("a", 0), ("skip", 0), W(2)]).expect_output([(0, 2, "a", 1), W(2)])


# ------------------------------------------------------------------------------------------------ bad input

def test_factories_when_arity_mismatch_then_error_naming_counts():
    with pytest.raises(ValueError, match="2 key function.*1-arity aggregate operation"):
        aggregate_to_sliding_window_p([entry_key, entry_key], [entry_key, entry_key], TimestampKind.EVENT,
                                      tumbling_win_policy(1), counting())
    with pytest.raises(ValueError, match="1 key function.*but 2 timestamp function"):
        accumulate_by_frame_p([entry_key], [entry_key, entry_key], TimestampKind.EVENT, tumbling_win_policy(1),
                              counting())


def test_factories_when_sliding_policy_without_combine_then_error():
    op = AggregateOperation(lambda: 0, lambda a, e: a + 1)
    with pytest.raises(ValueError, match="no combine_fn"):
        aggregate_to_sliding_window_p(entry_key, entry_key, TimestampKind.EVENT, sliding_win_policy(4, 2), op)


def test_factories_when_bad_policy_or_kind_then_error():
    with pytest.raises(ValueError, match="win_policy must be a SlidingWindowPolicy"):
        combine_to_sliding_window_p(1000, counting())
    with pytest.raises(ValueError, match="timestamp_kind must be TimestampKind"):
        aggregate_to_sliding_window_p(entry_key, entry_key, "EVENT", tumbling_win_policy(2), counting())


def test_processor_when_timestamp_not_int_then_error_naming_vertex_and_argument():
    p = aggregate_to_sliding_window_p(entry_key, entry_value_fn := (lambda e: e[1]), TimestampKind.EVENT,
                                      tumbling_win_policy(2), counting())
    with pytest.raises(Exception, match=r"vertex 'testVertex'.*timestamp_fns\[0\] returned float 1.5"):
        verify_processor(p).input([("a", 1.5)]).expect_output([])
    assert entry_value_fn(("a", 1)) == 1


def test_processor_when_key_fn_fails_then_error_naming_argument_item_and_cause():
    p = aggregate_to_sliding_window_p(lambda e: e["k"], lambda e: 1, TimestampKind.EVENT, tumbling_win_policy(2),
                                      counting())
    with pytest.raises(Exception, match=r"key_fns\[0\] failed on item \('a', 1\).*TypeError"):
        verify_processor(p).input([("a", 1)]).expect_output([])


def test_processor_when_watermark_goes_back_then_error():
    p = aggregate_to_sliding_window_p(entry_key, lambda e: 1, TimestampKind.EVENT, tumbling_win_policy(2),
                                      counting())
    with pytest.raises(Exception, match=r"received Watermark\(3\) after Watermark\(5\)"):
        verify_processor(p).disable_snapshots().input([W(5), W(3)]).expect_output([])


def test_combine_when_item_is_not_a_timestamped_entry_then_error_naming_the_item():
    p = combine_to_sliding_window_p(sliding_win_policy(4, 2), counting())
    with pytest.raises(Exception, match=r"timestamp_fns\[0\] failed on item \('k', 1\).*AttributeError"):
        verify_processor(p).input([("k", 1)]).expect_output([])


def test_processor_when_accumulate_fails_then_its_own_error_is_raised_unwrapped():
    op = AggregateOperation(lambda: 0, lambda acc, e: acc + 1 / 0, lambda a, b: a + b)
    p = aggregate_to_sliding_window_p(entry_key, lambda e: 1, TimestampKind.EVENT, tumbling_win_policy(2), op)
    with pytest.raises(ZeroDivisionError) as info:
        verify_processor(p).input([("a", 1)]).expect_output([])
    assert info.value.__cause__ is not info.value


@pytest.mark.parametrize("keys", [1023, 1024, 1025, 2048, 3000])
def test_window_when_more_keys_than_an_output_chunk_then_every_key_emitted_once(keys):
    for mapper in (TimestampedEntry.from_window_result, lambda s, e, k, v: None if k % 3 == 0 else (e, k, v)):
        p = aggregate_to_sliding_window_p(entry_key, lambda e: 0, TimestampKind.EVENT, sliding_win_policy(2, 1),
                                          counting(), mapper)()
        outbox = Outbox([500])
        p.init(outbox, Context())
        p.process(0, Inbox([(k, 0) for k in range(keys)]))
        out = []
        while not p.try_process_watermark(W(2)):
            out += outbox.drain(0)
            outbox.reset()
        out += outbox.drain(0)
        results = [o for o in out if not isinstance(o, Watermark)]
        expected_keys = [k for k in range(keys) if mapper is TimestampedEntry.from_window_result or k % 3]
        assert sorted(r[1] if len(r) == 3 and not isinstance(r, TimestampedEntry) else r[0] for r in results) == \
            sorted(expected_keys * 2)  # windows ending at 1 and 2 both hold frame 1
        assert out[-1] == W(2)
