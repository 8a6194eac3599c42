"""Stateless library processors: noop_p, map_p, filter_p, flat_map_p and the *_using_context_p variants."""

from __future__ import annotations

import pickle

import pytest

from dag.errors import DagValidationError, ProcessorContractError
from processors.api.context import Context
from processors.api.context_factory import ContextFactory
from processors.execution.staged import drive
from processors.api.processor import BatchTransform
from processors.library.stateless import (
    filter_p, filter_using_context_p, flat_map_p, flat_map_using_context_p, map_p, map_using_context_p, noop_p,
)
from processors.testing import verify_processor
from processors.api.traverser import traverse_items


def driven(supplier, items, n_out=1):
    """Output per outbound ordinal when the driver runs the processor over ``items`` in two batches."""
    out = [[] for _ in range(n_out)]
    half = len(items) // 2
    inbound = [(0, items[:half]), (0, items[half:])]
    for ordinal, batch in drive(supplier(), Context(), inbound=inbound, inbound_priorities={0: 0},
                                outbound_capacities=[1024] * n_out):
        out[ordinal].extend(batch)
    return out


def test_map_p_when_fn_returns_none_then_item_dropped():
    supplier = map_p(lambda x: x * 10 if x % 2 else None)
    verify_processor(supplier).input([1, 2, 3, 4, 5]).expect_output([10, 30, 50])
    assert driven(supplier, [1, 2, 3, 4, 5], n_out=2) == [[10, 30, 50], [10, 30, 50]]


def test_filter_p_when_predicate_then_matching_items_kept_in_order():
    supplier = filter_p(lambda w: len(w) > 1)
    verify_processor(supplier).input(["a", "bb", "ccc", "d"]).expect_output(["bb", "ccc"])
    assert driven(supplier, ["a", "bb", "ccc", "d"]) == [["bb", "ccc"]]


def test_flat_map_p_when_iterable_or_traverser_then_all_items_emitted():
    def explode(x):
        if x == 0:
            return []
        if x == 1:
            return traverse_items("t1", "t2")
        return [x] * x
    supplier = flat_map_p(explode)
    verify_processor(supplier).input([0, 1, 2, 3]).expect_output(["t1", "t2", 2, 2, 3, 3, 3])
    assert driven(supplier, [0, 1, 2, 3]) == [["t1", "t2", 2, 2, 3, 3, 3]]


def test_flat_map_p_when_fn_returns_none_then_fails_naming_vertex_and_function():
    def explode(x):
        return None if x == 2 else [x]
    inbound = [(0, [1, 2, 3])]
    with pytest.raises(ProcessorContractError,
                       match=r"FlatMapP of vertex 'tokenize': the function explode returned None instead of a "
                             r"traverser .* return an empty list"):
        list(drive(flat_map_p(explode)(), Context(vertex_name="tokenize"), inbound=inbound,
                   inbound_priorities={0: 0}, outbound_capacities=[16]))


def test_flat_map_using_context_p_when_fn_returns_none_then_fails_naming_function():
    def lookup(ctx, x):
        return None
    with pytest.raises(ProcessorContractError, match="FlatMapUsingContextP of vertex 'v': the function lookup"):
        list(drive(flat_map_using_context_p(ContextFactory.with_create_fn(lambda: {}), lookup)(),
                   Context(vertex_name="v"), inbound=[(0, [1])], inbound_priorities={0: 0}, outbound_capacities=[4]))


def test_flat_map_p_when_iterable_holds_none_then_contract_error():
    with pytest.raises(ProcessorContractError, match="FlatMapP of vertex 'testVertex': the function <lambda> returned an iterable holding"):
        driven(flat_map_p(lambda x: [x, None]), [1, 2])


def test_flat_map_p_when_fn_returns_non_iterable_then_contract_error_names_type():
    with pytest.raises(ProcessorContractError, match="must return an iterable or a Traverser, got int 5"):
        driven(flat_map_p(lambda x: 5), [1])


def test_flat_map_p_when_iteration_raises_type_error_then_user_error_propagates():
    def gen(x):
        yield 1
        raise TypeError("user bug")
    with pytest.raises(TypeError, match="user bug"):
        driven(flat_map_p(gen), [1])


def test_noop_p_when_input_then_nothing_emitted():
    verify_processor(noop_p()).input([1, 2, 3]).expect_output([])
    assert driven(noop_p(), [1, 2, 3]) == [[]]


def test_factories_when_not_callable_then_rejected_naming_factory():
    with pytest.raises(DagValidationError, match=r"map_p\(fn\): fn must be callable, got 3"):
        map_p(3)
    with pytest.raises(DagValidationError, match=r"filter_p\(pred\): pred must be callable"):
        filter_p("x")
    with pytest.raises(DagValidationError, match="factory must be a ContextFactory"):
        map_using_context_p(lambda: 1, lambda c, x: x)


def test_stateless_processors_are_batch_transforms_and_suppliers_pickle():
    for supplier in [noop_p(), map_p(str), filter_p(bool), flat_map_p(list)]:
        assert isinstance(supplier(), BatchTransform)
        clone = pickle.loads(pickle.dumps(supplier))
        assert clone.processor_class is supplier.processor_class
        assert repr(clone) == repr(supplier)
    assert repr(map_p(str.upper)) == "map_p(upper)"


class Resource:
    instances: list = []

    def __init__(self, factor):
        self.factor = factor
        self.closed = False
        Resource.instances.append(self)


def _factory(**kw):
    return ContextFactory(lambda ctx: Resource(ctx.global_processor_index + 3), lambda r: setattr(r, "closed", True),
                          **kw)


def test_map_using_context_p_when_run_then_context_created_per_processor_and_destroyed():
    Resource.instances = []
    supplier = map_using_context_p(_factory(), lambda r, x: x * r.factor if x else None)
    assert driven(supplier, [1, 0, 2]) == [[3, 6]]
    assert len(Resource.instances) == 1 and Resource.instances[0].closed
    verify_processor(supplier).input([1, 0, 2]).expect_output([3, 6])
    assert all(r.closed for r in Resource.instances)


def test_filter_and_flat_map_using_context_p_when_run_then_use_context_object():
    words = ContextFactory.with_create_fn(lambda: {"the", "a"})
    verify_processor(filter_using_context_p(words, lambda stop, w: w not in stop)) \
        .input(["the", "cat", "a", "hat"]).expect_output(["cat", "hat"])
    splitter = ContextFactory.with_create_fn(lambda: str.split)
    verify_processor(flat_map_using_context_p(splitter, lambda split, line: split(line))) \
        .input(["to be", "or not"]).expect_output(["to", "be", "or", "not"])
    supplier = flat_map_using_context_p(splitter, lambda split, line: split(line))
    assert driven(supplier, ["a b", "c"]) == [["a", "b", "c"]]


def test_using_context_p_when_factory_non_cooperative_then_processor_non_cooperative():
    assert map_using_context_p(_factory(), lambda r, x: x)().is_cooperative()
    assert not map_using_context_p(_factory(cooperative=False), lambda r, x: x)().is_cooperative()
    assert not flat_map_using_context_p(_factory().non_cooperative(), lambda r, x: [x])().is_cooperative()
