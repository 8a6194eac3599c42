"""AggregateOperation primitives (Jet's AggregateOperation / AggregateOperationImpl semantics)."""

from __future__ import annotations

import pytest

from dag.errors import DagValidationError
from processors.aggregate.operation import AggregateOperation
from processors.aggregate.aggregations import aggregate_operation2, aggregate_operation3, counting, summing, to_list


def _sum_op(**kw):
    return AggregateOperation(lambda: 0, lambda acc, x: acc + x, combine_fn=lambda a, b: a + b, **kw)


def test_operation_when_immutable_accumulator_then_functions_return_it():
    op = _sum_op()
    acc = op.create()
    for x in [1, 2, 3]:
        acc = op.accumulate(acc, x)
    assert acc == 6
    assert op.finish(acc) == 6
    assert op.combine(4, 5) == 9


def test_operation_when_defaults_then_export_identity_and_finish_is_export():
    op = AggregateOperation(list, lambda acc, x: acc + [x], export_fn=len)
    assert op.export([1, 2]) == 2
    assert op.finish([1, 2]) == 2
    assert op.combine_fn is None and op.deduct_fn is None
    plain = AggregateOperation(list, lambda acc, x: acc + [x])
    acc = [1]
    assert plain.export(acc) is acc and plain.finish(acc) is acc


def test_operation_when_missing_combine_or_deduct_then_clear_error():
    op = AggregateOperation(lambda: 0, lambda acc, x: acc + x)
    with pytest.raises(DagValidationError, match="no combine_fn"):
        op.combine(1, 2)
    with pytest.raises(DagValidationError, match="no deduct_fn"):
        op.deduct(1, 2)


def test_operation_when_not_callable_then_rejected_naming_the_argument():
    with pytest.raises(DagValidationError, match="accumulate_fn must be callable, got 3"):
        AggregateOperation(lambda: 0, 3)
    with pytest.raises(DagValidationError, match="combine_fn must be callable"):
        AggregateOperation(lambda: 0, lambda a, x: a, combine_fn="plus")
    with pytest.raises(DagValidationError, match="at least one accumulate function"):
        AggregateOperation(lambda: 0, [])


def test_with_identity_finish_when_finished_then_returns_accumulator_and_export_refused():
    op = AggregateOperation(list, lambda acc, x: acc + [x], export_fn=len).with_identity_finish()
    acc = op.accumulate(op.create(), "a")
    assert op.finish(acc) == ["a"]
    with pytest.raises(TypeError, match="identity finish"):
        op.export(acc)


def test_and_then_when_applied_then_transforms_export_and_finish_only():
    op = _sum_op().and_then(lambda total: f"total={total}")
    acc = op.accumulate(op.accumulate(op.create(), 2), 3)
    assert acc == 5
    assert op.export(acc) == "total=5"
    assert op.finish(acc) == "total=5"
    assert op.combine(1, 2) == 3


def test_and_then_when_library_counting_then_fast_path_kept():
    assert counting().and_then(str).fast_path == ("counting",)
    assert counting().with_identity_finish().fast_path == ("counting",)
    assert counting().with_accumulate_fns(lambda a, x: a).fast_path is None


def test_with_combining_accumulate_fn_when_items_are_accumulators_then_combined():
    op = counting().with_combining_accumulate_fn(lambda entry: entry[1])
    acc = op.create()
    for item in [("a", 2), ("a", 5)]:
        acc = op.accumulate(acc, item)
    assert op.finish(acc) == 7
    with pytest.raises(DagValidationError, match="no combine_fn"):
        AggregateOperation(lambda: 0, lambda a, x: a).with_combining_accumulate_fn(lambda x: x)


def test_arity_when_several_accumulate_fns_then_one_per_ordinal():
    op = AggregateOperation(lambda: [0, 0], [lambda acc, x: [acc[0] + x, acc[1]], lambda acc, x: [acc[0], acc[1] + x]])
    assert op.arity == 2
    acc = op.accumulate(op.create(), 5, ordinal=0)
    acc = op.accumulate(acc, 7, ordinal=1)
    assert acc == [5, 7]
    with pytest.raises(DagValidationError, match="2 accumulating functions, but was asked for the function at index 2"):
        op.accumulate(acc, 1, ordinal=2)
    with pytest.raises(DagValidationError, match="accumulate_fns"):
        op.accumulate_fn


def test_aggregate_operation2_when_two_inputs_then_each_ordinal_to_its_op():
    op = aggregate_operation2(counting(), to_list())
    assert op.arity == 2
    acc = op.create()
    acc = op.accumulate(acc, "x", 0)
    acc = op.accumulate(acc, "y", 0)
    acc = op.accumulate(acc, "z", 1)
    assert op.finish(acc) == (2, ["z"])
    assert op.combine_fn is not None  # both components combine
    assert op.deduct_fn is None  # to_list has no deduct


def test_aggregate_operation3_when_export_finish_fn_then_applied_to_results():
    op = aggregate_operation3(counting(), summing(), counting(), lambda a, b, c: a + b + c)
    acc = op.create()
    for ordinal, item in [(0, "a"), (1, 10), (2, "b"), (2, "c")]:
        acc = op.accumulate(acc, item, ordinal)
    assert op.finish(acc) == 1 + 10 + 2
    combined = op.combine(op.accumulate(op.create(), 4, 1), acc)
    assert op.export(combined) == 17
    assert op.finish(op.deduct(combined, op.accumulate(op.create(), 4, 1))) == 13


def test_aggregate_operation2_when_component_has_arity_2_then_rejected():
    two = aggregate_operation2(counting(), counting())
    with pytest.raises(DagValidationError, match="argument 1 .* has arity 2"):
        aggregate_operation2(counting(), two)


def test_repr_when_library_op_then_names_it():
    assert repr(counting()) == "AggregateOperation(counting(), arity=1)"
