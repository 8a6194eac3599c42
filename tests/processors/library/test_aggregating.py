"""Accumulating library processors: aggregate_p, accumulate_p, combine_p, *_by_key_p, sort_p."""

from __future__ import annotations

import pytest

from dag.errors import DagValidationError
from processors.aggregate.operation import AggregateOperation
from processors.library.aggregating import (
    AccumulateByKeyP, AggregateByKeyP, CombineByKeyP, accumulate_by_key_p, accumulate_p, aggregate_by_key_p,
    aggregate_p, combine_by_key_p, combine_p, sort_p,
)
from processors.aggregate.aggregations import (
    aggregate_operation2, averaging, counting, max_by, summing, to_list,
)
from processors.api.context import Context
from processors.execution.staged import drive
from processors.api.functions import entry_key, whole_item
from processors.testing import SAME_ITEMS_ANY_ORDER, verify_processor


def driven(supplier, inputs, priorities=None):
    """Output of the driver running the processor; ``inputs`` maps ordinal -> items (one batch of 2 per call)."""
    inbound = [(o, items[i:i + 2]) for o, items in sorted(inputs.items()) for i in range(0, len(items), 2)]
    out = []
    for _o, batch in drive(supplier(), Context(), inbound=inbound,
                           inbound_priorities=priorities or {o: 0 for o in inputs}, outbound_capacities=[3]):
        out.extend(batch)
    return out


def test_aggregate_p_when_items_then_one_finished_result():
    verify_processor(aggregate_p(summing())).input([1, 2, 3]).expect_output([6])
    assert driven(aggregate_p(averaging()), {0: [1, 2, 3, 4]}) == [2.5]


def test_aggregate_p_when_no_input_then_finish_of_empty_accumulator():
    verify_processor(aggregate_p(counting())).input([]).expect_output([0])
    verify_processor(aggregate_p(max_by())).input([]).expect_output([])  # None result: nothing emitted


def test_aggregate_p_when_two_ordinals_then_each_uses_its_accumulate_fn():
    op = aggregate_operation2(counting(), to_list())
    assert driven(aggregate_p(op), {0: ["a", "b", "c"], 1: ["x"]}) == [(3, ["x"])]


def test_aggregate_p_when_ordinal_beyond_arity_then_clear_error():
    with pytest.raises(DagValidationError, match="inbound ordinal 1, but its aggregate operation .* has arity 1"):
        driven(aggregate_p(summing()), {0: [1], 1: [2]})
    with pytest.raises(DagValidationError, match="inbound ordinal 1"):
        driven(aggregate_p(counting()), {0: [1], 1: [2]})


def test_accumulate_p_and_combine_p_when_chained_then_same_as_aggregate_p():
    op = averaging()
    partials = driven(accumulate_p(op), {0: [1, 2]}) + driven(accumulate_p(op), {0: [6]})
    assert partials == [[2, 3], [1, 6]]
    assert driven(combine_p(op), {0: partials}) == [3.0]
    verify_processor(combine_p(counting())).input([2, 5, 1]).expect_output([8])


def test_combine_p_when_op_has_no_combine_then_rejected():
    op = AggregateOperation(lambda: 0, lambda a, x: a + x)
    with pytest.raises(DagValidationError, match="has no combine_fn"):
        combine_p(op)
    with pytest.raises(DagValidationError, match="has no combine_fn"):
        combine_by_key_p(op)


def test_aggregate_by_key_p_when_counting_words_then_entries_per_key():
    words = ["to", "be", "or", "not", "to", "be"]
    expected = [("to", 2), ("be", 2), ("or", 1), ("not", 1)]
    verify_processor(aggregate_by_key_p(whole_item, counting())).input(words) \
        .output_checker(SAME_ITEMS_ANY_ORDER).expect_output(expected)
    assert driven(aggregate_by_key_p(whole_item, counting()), {0: words}) == expected
    assert driven(aggregate_by_key_p(len, counting()), {0: words}) == [(2, 5), (3, 1)]


def test_aggregate_by_key_p_when_summing_fast_path_then_sums_per_key():
    items = [("a", 1), ("b", 2), ("a", 3)]
    assert driven(aggregate_by_key_p(entry_key, summing(lambda e: e[1])), {0: items}) == [("a", 4), ("b", 2)]
    assert driven(aggregate_by_key_p(lambda x: x % 2, summing()), {0: [1, 2, 3, 4]}) == [(1, 4), (0, 6)]


def test_aggregate_by_key_p_when_map_to_output_fn_then_applied_and_none_skipped():
    supplier = aggregate_by_key_p(len, to_list(), lambda k, r: None if k == 1 else f"{k}:{','.join(r)}")
    verify_processor(supplier).input(["a", "bb", "cc", "d"]).expect_output(["2:bb,cc"])


def test_aggregate_by_key_p_when_identity_finish_and_own_output_fn_then_applied_and_none_skipped():
    supplier = aggregate_by_key_p(len, counting(), lambda k, n: None if k == 1 else f"{k}x{n}")
    verify_processor(supplier).input(["a", "bb", "cc", "d"]).expect_output(["2x2"])
    assert driven(aggregate_by_key_p(len, counting(), lambda k, n: f"{k}x{n}"), {0: ["a", "bb"]}) == ["1x1", "2x1"]


class _Ambiguous:
    """A result whose ``==`` raises, as a NumPy array's truth value does."""

    def __init__(self, key):
        self.key = key

    def __eq__(self, other):
        raise ValueError("the truth value is ambiguous")

    __hash__ = object.__hash__


def test_aggregate_by_key_p_when_results_compare_ambiguously_then_all_emitted():
    out = driven(aggregate_by_key_p(len, counting(), lambda k, n: _Ambiguous(k)), {0: ["a", "bb", "cc"]})
    assert [r.key for r in out] == [1, 2]


def test_aggregate_by_key_p_when_generic_op_then_accumulates_per_key():
    supplier = aggregate_by_key_p(lambda w: w[0], max_by(len))
    verify_processor(supplier).input(["apple", "avocado", "banana", "bee"]) \
        .output_checker(SAME_ITEMS_ANY_ORDER).expect_output([("a", "avocado"), ("b", "banana")])


def test_aggregate_by_key_p_when_two_ordinals_then_key_fn_per_ordinal():
    op = aggregate_operation2(counting(), summing(lambda t: t[1]))
    supplier = aggregate_by_key_p([str.lower, lambda t: t[0]], op)
    out = driven(supplier, {0: ["A", "a", "b"], 1: [("a", 10), ("c", 5)]})
    assert out == [("a", (2, 10)), ("b", (1, 0)), ("c", (0, 5))]


def test_by_key_p_when_key_fns_count_differs_from_arity_then_rejected():
    with pytest.raises(DagValidationError, match="2 key function\\(s\\) provided for the 1-arity aggregate operation"):
        aggregate_by_key_p([len, len], counting())
    with pytest.raises(DagValidationError, match="1 key function\\(s\\) provided for the 2-arity"):
        accumulate_by_key_p(len, aggregate_operation2(counting(), counting()))
    with pytest.raises(DagValidationError, match="key function 0 must be callable"):
        aggregate_by_key_p("word", counting())


def test_accumulate_then_combine_by_key_when_two_stages_then_same_as_one_stage():
    words = ["x", "y", "x", "z", "x"]
    stage1 = driven(accumulate_by_key_p(whole_item, counting()), {0: words[:2]}) + \
        driven(accumulate_by_key_p(whole_item, counting()), {0: words[2:]})
    assert stage1 == [("x", 1), ("y", 1), ("x", 2), ("z", 1)]
    assert driven(combine_by_key_p(counting()), {0: stage1}) == [("x", 3), ("y", 1), ("z", 1)]
    avg = averaging(lambda e: e[1])
    partial = driven(accumulate_by_key_p(entry_key, avg.and_then(round)), {0: [("k", 1), ("k", 2)]})
    assert partial == [("k", [2, 3])]  # raw accumulator, finish not applied
    assert driven(combine_by_key_p(avg, lambda k, r: f"{k}={r}"), {0: partial + [("k", [1, 3])]}) == ["k=2.0"]


def test_combine_by_key_p_when_generic_op_then_combines_accumulators():
    partial = [("a", [1]), ("b", [2]), ("a", [3])]
    verify_processor(combine_by_key_p(to_list())).input(partial).expect_output([("a", [1, 3]), ("b", [2])])


def test_by_key_classes_when_created_then_expose_planner_attributes():
    op = counting()
    p = aggregate_by_key_p(len, op)()
    assert isinstance(p, AggregateByKeyP) and p.aggregate_operation is op and p.key_fns == (len,)
    acc = accumulate_by_key_p([whole_item], op)()
    assert isinstance(acc, AccumulateByKeyP) and acc.aggregate_operation is op and acc.key_fns == (whole_item,)
    comb = combine_by_key_p(op, lambda k, v: v)()
    assert isinstance(comb, CombineByKeyP) and comb.aggregate_operation is op and comb.key_fns == (entry_key,)
    assert comb.map_to_output_fn(1, 2) == 2
    assert accumulate_by_key_p(len, op).processor_class is AccumulateByKeyP


def test_sort_p_when_items_then_sorted_output_stable():
    verify_processor(sort_p()).input([3, 1, 2]).expect_output([1, 2, 3])
    verify_processor(sort_p(len)).input(["bb", "a", "cc", "d"]).expect_output(["a", "d", "bb", "cc"])
    assert driven(sort_p(), {0: [5, 4, 3, 2, 1]}) == [1, 2, 3, 4, 5]


def test_aggregating_processors_when_snapshots_restored_then_state_survives():
    # verify_processor takes and restores snapshots between items and during complete() (default)
    verify_processor(aggregate_by_key_p(whole_item, to_list())).input(list("abcabcab")) \
        .expect_output([("a", ["a"] * 3), ("b", ["b"] * 3), ("c", ["c"] * 2)])
    verify_processor(sort_p()).input([9, 8, 7, 6, 5, 4]).expect_output([4, 5, 6, 7, 8, 9])
    verify_processor(aggregate_p(to_list())).input([1, 2, 3]).expect_output([[1, 2, 3]])


@pytest.mark.parametrize("supplier", [
    aggregate_p(counting()), accumulate_by_key_p(len, counting()), aggregate_by_key_p(len, counting()), sort_p(),
], ids=repr)
def test_aggregating_processor_when_watermark_then_forwarded_before_final_results(supplier):
    from processors import Watermark
    verify_processor(supplier).disable_snapshots().input(["x", Watermark(5)]).output_checker(
        lambda expected, actual: actual[0] == Watermark(5) and len(actual) == 2).expect_output([])
