"""Session windows: Jet's SessionWindowPTest / failover vectors (V55-V59) and the model-derived cases, in every
verify_processor mode (snapshot/restore cycles included)."""

from __future__ import annotations

import random

import pytest

from processors import (MIN_WATERMARK, SAME_ITEMS_ANY_ORDER, AggregateOperation, Watermark, WindowResult,
                        aggregate_operation2, aggregate_to_session_window_p, counting, entry_key, entry_value,
                        to_list, verify_processor)
from processors.api.context import Context
from processors.api.inbox import Inbox
from processors.api.outbox import Outbox
from processors.windowing.session_window import CURRENT_WATERMARK

from tests.support.processors import RememberingSupplier

W = Watermark


def session_p(timeout=10):
    return aggregate_to_session_window_p(timeout, entry_value, entry_key, counting())


def events(key):
    return [(key, t) for t in (1, 6, 12, 30, 35, 40)]


def sessions(key):
    return [WindowResult(1, 22, key, 3), WindowResult(30, 50, key, 3)]


@pytest.mark.parametrize("seed", [None] + list(range(10)))
def test_session_window_when_one_key_ordered_or_shuffled_then_two_sessions(seed):
    items = events("a")
    if seed is not None:
        random.Random(seed).shuffle(items)
    recorder = RememberingSupplier(session_p())
    verify_processor(recorder).disable_complete_call().output_checker(SAME_ITEMS_ANY_ORDER).input(
        items + [W(100)]).expect_output(sessions("a") + [W(100)])
    final = recorder.made[-1]
    assert not final.windows and not final.deadlines


@pytest.mark.parametrize("seed", [None] + list(range(10)))
def test_session_window_when_three_keys_then_two_sessions_each(seed):
    items = events("a") + events("b") + events("c")
    if seed is not None:
        random.Random(seed).shuffle(items)
    verify_processor(session_p()).disable_complete_call().output_checker(SAME_ITEMS_ANY_ORDER).input(
        items + [W(100)]).expect_output(sessions("a") + sessions("b") + sessions("c") + [W(100)])


def test_session_window_when_watermark_between_sessions_then_first_closed_and_rest_at_complete():
    verify_processor(session_p()).input(events("a") + [W(25)]).expect_output(
        [WindowResult(1, 22, "a", 3), W(25), WindowResult(30, 50, "a", 3)])


def test_session_window_when_item_behind_watermark_then_dropped():
    verify_processor(session_p()).input([W(20), ("key", 19)]).expect_output([W(20)])


@pytest.mark.parametrize("items, expected", [
    ([("k", 0), ("k", 20), ("k", 10)], [WindowResult(0, 30, "k", 3)]),
    ([("k", 0), ("k", 10)], [WindowResult(0, 20, "k", 2)]),
    ([("k", 0), ("k", 11)], [WindowResult(0, 10, "k", 1), WindowResult(11, 21, "k", 1)]),
    ([("k", 10), ("k", 5)], [WindowResult(5, 20, "k", 2)]),
    ([("k", 0), ("k", 30), ("k", 10), ("k", 20)], [WindowResult(0, 40, "k", 4)]),
    ([("k", 0), ("k", 30), ("k", 12), ("k", 24)],
     [WindowResult(0, 10, "k", 1), WindowResult(12, 22, "k", 1), WindowResult(24, 40, "k", 2)]),
], ids=["bridging-merge", "touching", "apart", "earlier-extends-start", "chain-merge", "gaps"])
def test_session_window_when_events_overlap_touch_or_bridge_then_sessions_as_jet(items, expected):
    verify_processor(session_p()).input(items).expect_output(expected)


def test_session_window_when_watermark_equals_end_then_still_open():
    verify_processor(session_p()).disable_complete_call().input([("k", 0), W(10), W(11)]).expect_output(
        [W(10), WindowResult(0, 10, "k", 1), W(11)])


def test_session_window_when_two_inputs_then_co_aggregated():
    p = aggregate_to_session_window_p(5, [entry_value, entry_value], [entry_key, entry_key],
                                      aggregate_operation2(to_list(), to_list()),
                                      lambda s, e, k, v: (s, e, k, tuple(map(len, v))))
    verify_processor(p).inputs([[("a", 1), ("a", 3)], [("a", 2), ("b", 20)]]).output_checker(
        SAME_ITEMS_ANY_ORDER).expect_output([(1, 8, "a", (2, 1)), (20, 25, "b", (0, 1))])


def _restored(guarantee, values):
    p = session_p(5000)()
    p.init(Outbox([1], snapshot_capacity=1), Context(processing_guarantee=guarantee))
    p.restore_from_snapshot(Inbox([(CURRENT_WATERMARK, v) for v in values]))
    p.finish_snapshot_restore()
    return p


def test_session_restore_when_watermarks_differ_then_lowest_at_least_once_and_error_exactly_once():
    from dag.config import ProcessingGuarantee as G
    assert _restored(G.AT_LEAST_ONCE, [2, 1]).current_watermark == 1
    assert _restored(G.AT_LEAST_ONCE, []).current_watermark == MIN_WATERMARK
    with pytest.raises(Exception, match="different values for CURRENT_WATERMARK restored, before=1, new=2"):
        _restored(G.EXACTLY_ONCE, [1, 2])


def test_session_restore_when_duplicate_key_then_error():
    p = session_p()()
    p.init(Outbox([1], snapshot_capacity=1), Context())
    with pytest.raises(Exception, match="Duplicate key in snapshot: 'k'"):
        p.restore_from_snapshot(Inbox([("k", [(0, 10, 1)]), ("k", [(20, 30, 1)])]))


def test_session_factory_when_bad_arguments_then_errors_naming_them():
    with pytest.raises(ValueError, match="session_timeout must be an int >= 1"):
        aggregate_to_session_window_p(0, entry_value, entry_key, counting())
    with pytest.raises(ValueError, match="2 key function.*1-arity"):
        aggregate_to_session_window_p(5, [entry_value] * 2, [entry_key] * 2, counting())
    with pytest.raises(ValueError, match="no combine_fn"):
        aggregate_to_session_window_p(5, entry_value, entry_key, AggregateOperation(lambda: 0, lambda a, e: a + 1))


def test_session_processor_when_timestamp_not_int_then_error_naming_argument():
    with pytest.raises(Exception, match=r"timestamp_fns\[0\] returned str '5'"):
        verify_processor(session_p()).input([("k", "5")]).expect_output([])


def test_session_processor_when_watermark_goes_back_then_error():
    with pytest.raises(Exception, match=r"received Watermark\(3\) after Watermark\(5\)"):
        verify_processor(session_p()).disable_snapshots().input([W(5), W(3)]).expect_output([])
