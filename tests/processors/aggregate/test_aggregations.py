"""The aggregate operation library, checked against Jet's AggregateOperations results (incl. empty input)."""

from __future__ import annotations

import math

import pytest

from dag.errors import DagValidationError
from processors.aggregate.aggregations import (
    all_of, averaging, bottom_n, concatenating, counting, grouping_by, mapping, max_by, min_by, pick_any, reducing,
    sorting, summing, to_list, to_map, to_set, top_n,
)


def run(op, items):
    acc = op.create()
    for item in items:
        acc = op.accumulate(acc, item)
    return op.finish(acc)


def run_split(op, items, at):
    """Accumulate two halves separately, combine, finish: must equal run(op, items)."""
    left, right = op.create(), op.create()
    for item in items[:at]:
        left = op.accumulate(left, item)
    for item in items[at:]:
        right = op.accumulate(right, item)
    return op.finish(op.combine(left, right))


def accumulated(op, items):
    acc = op.create()
    for item in items:
        acc = op.accumulate(acc, item)
    return acc


@pytest.mark.parametrize("op, expected", [
    (counting(), 0), (summing(), 0), (min_by(), None), (max_by(), None), (to_list(), []), (to_set(), set()),
    (to_map(str, str), {}), (pick_any(), None), (sorting(), []), (concatenating(), ""),
    (concatenating(",", "(", ")"), "()"), (grouping_by(len), {}), (top_n(3), []), (bottom_n(3), []),
    (reducing(7, abs, max), 7), (all_of(counting(), to_list()), (0, [])), (mapping(len, summing()), 0),
])
def test_library_when_empty_input_then_jet_empty_result(op, expected):
    assert run(op, []) == expected


def test_averaging_when_empty_then_nan():
    assert math.isnan(run(averaging(), []))


def test_counting_when_items_then_counts_and_deducts():
    op = counting()
    assert run(op, ["a", "b", "a"]) == 3
    assert run_split(op, ["a", "b", "a"], 1) == 3
    assert op.deduct(5, 2) == 3


def test_summing_when_fn_then_sums_mapped_values_with_combine_and_deduct():
    op = summing(len)
    assert run(op, ["ab", "cde"]) == 5
    assert run_split(op, ["ab", "cde", "f"], 2) == 6
    assert op.deduct(accumulated(op, ["ab", "cde"]), accumulated(op, ["ab"])) == 3
    assert run(summing(), [1.5, 2.5]) == 4.0


def test_averaging_when_values_then_float_mean_and_deduct_undoes_combine():
    op = averaging(lambda t: t[1])
    items = [("a", 1), ("b", 2), ("c", 4)]
    assert run(op, items) == pytest.approx(7 / 3)
    assert run_split(op, items, 1) == pytest.approx(7 / 3)
    acc = op.deduct(accumulated(op, items), accumulated(op, items[:1]))
    assert op.finish(acc) == 3.0
    assert run(averaging(), [1, 2]) == 1.5


def test_max_by_when_ties_then_earlier_item_kept():
    op = max_by(lambda t: t[1])
    assert run(op, [("a", 1), ("b", 3), ("c", 3), ("d", 2)]) == ("b", 3)
    assert run_split(op, [("a", 1), ("b", 3), ("c", 3)], 2) == ("b", 3)
    assert run_split(op, [("a", 1), ("b", 3), ("c", 3)], 1) == ("b", 3)
    assert op.deduct_fn is None


def test_min_by_when_ties_then_earlier_item_kept():
    op = min_by(len)
    assert run(op, ["ccc", "a", "b", "dd"]) == "a"
    assert run_split(op, ["ccc", "a", "b"], 2) == "a"
    assert run(min_by(), [3, 1, 2]) == 1
    assert run_split(min_by(), [1, 2, 3], 3) == 1  # right side empty


def test_to_list_when_exported_then_copy_and_combine_keeps_order():
    op = to_list()
    acc = accumulated(op, [1, 2])
    exported = op.export(acc)
    exported.append(99)
    assert acc == [1, 2]
    assert run_split(op, [1, 2, 3], 1) == [1, 2, 3]
    assert op.deduct_fn is None


def test_to_set_when_duplicates_then_distinct():
    assert run(to_set(), [1, 2, 1]) == {1, 2}
    assert run_split(to_set(), [1, 2, 1, 3], 2) == {1, 2, 3}


def test_to_map_when_duplicate_key_without_merge_then_error_names_key():
    op = to_map(lambda w: w[0], len)
    assert run(op, ["apple", "banana"]) == {"a": 5, "b": 6}
    with pytest.raises(ValueError, match="duplicate key 'a'.*merge_fn"):
        run(op, ["apple", "avocado"])
    with pytest.raises(ValueError, match="duplicate key 'a'"):
        run_split(op, ["apple", "avocado"], 1)  # detected on combine


def test_to_map_when_merge_fn_then_values_merged():
    op = to_map(lambda w: w[0], len, lambda old, new: old + new)
    assert run(op, ["apple", "avocado", "bee"]) == {"a": 12, "b": 3}
    assert run_split(op, ["apple", "avocado", "bee"], 1) == {"a": 12, "b": 3}


def test_all_of_when_components_then_tuple_and_combine_only_if_all_have_it():
    op = all_of(counting(), summing(), to_list())
    assert run(op, [1, 2, 3]) == (3, 6, [1, 2, 3])
    assert run_split(op, [1, 2, 3], 2) == (3, 6, [1, 2, 3])
    assert op.deduct_fn is None  # to_list cannot deduct
    both = all_of(counting(), summing())
    assert both.finish(both.deduct(accumulated(both, [1, 2, 3]), accumulated(both, [3]))) == (2, 3)
    from processors.aggregate.operation import AggregateOperation
    assert all_of(counting(), AggregateOperation(lambda: 0, lambda a, x: a)).combine_fn is None
    with pytest.raises(DagValidationError, match="at least one"):
        all_of()
    with pytest.raises(DagValidationError, match="argument 1 must be an AggregateOperation"):
        all_of(counting(), "summing")


def test_mapping_when_none_mapped_then_skipped_and_downstream_primitives_inherited():
    op = mapping(lambda x: x if x > 0 else None, counting())
    assert run(op, [1, -1, 2, -5]) == 2
    assert op.deduct_fn is not None and op.combine_fn is not None
    assert run(mapping(str.upper, to_list()), ["a", "b"]) == ["A", "B"]


def test_reducing_when_items_then_reduced_from_identity_with_deduct():
    op = reducing(0, len, lambda a, b: a + b, lambda a, b: a - b)
    assert run(op, ["ab", "c"]) == 3
    assert run_split(op, ["ab", "c", "def"], 1) == 6
    assert op.deduct(6, 2) == 4
    assert reducing(1, abs, max).deduct_fn is None


def test_pick_any_when_nulls_then_ignored_and_deduct_to_zero_resets():
    op = pick_any()
    assert run(op, [None, "x", "y"]) == "x"
    assert run(op, [None, None]) is None
    assert run_split(op, [None, "y"], 1) == "y"
    acc = op.deduct(accumulated(op, ["x"]), accumulated(op, ["z"]))
    assert op.finish(acc) is None
    acc = op.deduct(accumulated(op, ["x", "y"]), accumulated(op, ["z"]))
    assert op.finish(acc) == "x"


def test_sorting_when_key_then_stable_sorted_and_export_copies():
    op = sorting(len)
    acc = accumulated(op, ["ccc", "a", "bb", "b"])
    assert op.export(acc) == ["a", "b", "bb", "ccc"]
    assert acc == ["ccc", "a", "bb", "b"]
    assert run_split(sorting(), [3, 1, 2], 1) == [1, 2, 3]


def test_concatenating_when_empty_items_then_no_extra_delimiter():
    op = concatenating(", ", "[", "]")
    assert run(op, ["a", "", "b", "c"]) == "[a, b, c]"
    assert run_split(op, ["a", "b"], 1) == "[a, b]"
    assert run_split(op, ["a", ""], 1) == "[a]"
    assert run(concatenating(), ["x", "y"]) == "xy"
    with pytest.raises(TypeError, match="concatenating.*got 3.*mapping\\(str"):
        run(op, ["a", 3])


def test_grouping_by_when_default_then_lists_per_key():
    assert run(grouping_by(len), ["a", "bb", "c"]) == {1: ["a", "c"], 2: ["bb"]}
    op = grouping_by(len, counting())
    assert run_split(op, ["a", "bb", "c", "dd", "eee"], 2) == {1: 2, 2: 2, 3: 1}
    assert op.deduct_fn is None


def test_grouping_by_when_downstream_has_no_combine_then_no_combine():
    from processors.aggregate.operation import AggregateOperation
    downstream = AggregateOperation(lambda: 0, lambda a, x: a + 1)
    assert grouping_by(len, downstream).combine_fn is None


def test_top_n_when_items_then_n_largest_descending():
    op = top_n(3)
    items = [5, 1, 9, 3, 7, 9, 2]
    assert run(op, items) == [9, 9, 7]
    assert run_split(op, items, 3) == [9, 9, 7]
    assert run(top_n(2, key=len), ["a", "bbb", "cc"]) == ["bbb", "cc"]
    assert run(top_n(5), [2, 1]) == [2, 1]


def test_top_n_when_ties_then_earlier_items_win():
    op = top_n(2, key=lambda t: t[1])
    assert run(op, [("a", 1), ("b", 1), ("c", 1)]) == [("a", 1), ("b", 1)]
    assert run(op, [("a", 1), ("b", 2), ("c", 2), ("d", 2)]) == [("b", 2), ("c", 2)]


def test_bottom_n_when_items_then_n_smallest_ascending():
    op = bottom_n(3)
    items = [5, 1, 9, 3, 7, 1, 2]
    assert run(op, items) == [1, 1, 2]
    assert run_split(op, items, 4) == [1, 1, 2]
    assert run(bottom_n(2, key=lambda t: t[1]), [("a", 2), ("b", 1), ("c", 1)]) == [("b", 1), ("c", 1)]


def test_top_n_when_n_not_positive_then_rejected():
    with pytest.raises(DagValidationError, match="top_n\\(n\\) needs a positive int n, got 0"):
        top_n(0)
    with pytest.raises(DagValidationError, match="bottom_n"):
        bottom_n(-1)


def test_library_when_items_unorderable_then_top_n_never_compares_items():
    class Opaque:
        pass
    items = [Opaque() for _ in range(4)]
    assert run(top_n(2, key=lambda o: 1), items) == items[:2]


SPLITTABLE = {
    "counting": counting, "summing": summing, "to_list": to_list, "to_set": to_set, "sorting": sorting,
    "min_by": min_by, "max_by": max_by, "pick_any": pick_any, "top_n": lambda: top_n(3),
    "bottom_n": lambda: bottom_n(3), "grouping_by": lambda: grouping_by(lambda x: x % 3, summing()),
    "all_of": lambda: all_of(counting(), max_by(), to_list()),
    "concatenating": lambda: mapping(str, concatenating(",")),
}


@pytest.mark.parametrize("name", sorted(SPLITTABLE))
def test_library_when_input_split_anywhere_and_combined_then_same_result(name):
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.integers(-5, 5), max_size=12), st.integers(0, 12))
    def check(items, at):
        op = SPLITTABLE[name]()
        assert run_split(op, items, min(at, len(items))) == run(SPLITTABLE[name](), items)

    check()


@pytest.mark.parametrize("make", [counting, summing, averaging, pick_any])
def test_library_when_deducting_combined_part_then_result_of_the_rest(make):
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.integers(1, 9), max_size=8), st.lists(st.integers(1, 9), max_size=8))
    def check(rest, part):
        op = make()
        total = op.combine(accumulated(op, rest), accumulated(op, part))
        got, expected = op.finish(op.deduct(total, accumulated(op, part))), run(make(), rest)
        if make is pick_any:  # deduct keeps some remaining item, or None when nothing remains
            assert (got is None) == (not rest)
        elif isinstance(expected, float) and math.isnan(expected):
            assert math.isnan(got)
        else:
            assert got == expected

    check()
