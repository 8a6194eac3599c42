"""Generated tight loops (processors/library/stateless_loops.py): the same accumulators, counts and errors as running the
built-in processors batch by batch and accumulating their output."""

from __future__ import annotations

from collections import Counter

import pytest

from dag.errors import ProcessorContractError
from processors import (
    ContextFactory,
    counting,
    filter_p,
    filter_using_context_p,
    flat_map_p,
    flat_map_using_context_p,
    map_p,
    map_using_context_p,
    summing,
    to_list,
    whole_item,
)
from processors.api.context import Context
from processors.api.outbox import Outbox
from processors.library.stateless import MapP
from processors.library.stateless_loops import FusedLoop, loop_kind
from processors.api.traverser import traverse_items

LINES = [["To be, or not to be", "", "that IS the question"], ["# comment", "Whether tis nobler"]]


def _initialised(supplier, name="v"):
    processor = supplier()
    processor.init(Outbox([1024]), Context(vertex_name=name))
    return processor


def _batchwise(processors, batches):
    """The processor-by-processor path: each processor transforms whole batches, lists in between."""
    out, received = [], None
    counts = [sum(map(len, batches))] + [0] * len(processors)
    for batch in batches:
        items = batch
        for i, processor in enumerate(processors):
            items = processor.transform_batch(items)
            counts[i + 1] += len(items)
        out += items
    return out, counts


def _chain():
    ctx = ContextFactory.with_create_fn(lambda: "#")
    return [
        filter_using_context_p(ctx, lambda c, line: not line.startswith(c)),
        map_p(lambda line: line.lower() or None),                      # empty lines dropped (None)
        flat_map_p(lambda line: line.replace(",", " ").split()),
        map_using_context_p(ctx, lambda c, w: w.strip(c)),
        filter_p(lambda w: w != "is"),
        flat_map_using_context_p(ctx, lambda c, w: traverse_items(w, w.upper()) if w == "be" else (w,)),
    ]


@pytest.mark.parametrize("cut", range(1, 7))
def test_fused_loop_when_counting_whole_items_then_same_counts_as_batchwise(cut):
    suppliers = _chain()[:cut]
    expected, expected_counts = _batchwise([_initialised(s) for s in suppliers], LINES)
    acc: dict = {}
    counts = FusedLoop([_initialised(s) for s in suppliers], counting(), whole_item).run(LINES, acc)
    assert acc == Counter(expected)
    assert counts == expected_counts


def test_fused_loop_when_keyed_and_generic_operation_then_same_accumulators_in_order():
    suppliers = _chain()
    expected, _ = _batchwise([_initialised(s) for s in suppliers], LINES)
    acc: dict = {}
    FusedLoop([_initialised(s) for s in suppliers], to_list(), len).run(LINES, acc)
    by_length: dict = {}
    for w in expected:
        by_length.setdefault(len(w), []).append(w)
    assert acc == by_length  # per-key order is the chain's output order
    sums: dict = {}
    FusedLoop([_initialised(s) for s in suppliers], summing(len), whole_item).run(LINES, sums)
    assert sums == {w: len(w) * n for w, n in Counter(expected).items()}
    counted: dict = {}
    FusedLoop([_initialised(s) for s in suppliers], counting(), len).run(LINES, counted)
    assert counted == Counter(map(len, expected))


@pytest.mark.parametrize("result, message", [
    (None, "returned None instead of a traverser"),
    (7, "must return an iterable or a Traverser"),
    (["a", None], "iterable holding None"),
])
@pytest.mark.parametrize("last", [True, False])
def test_fused_loop_when_flat_map_breaks_contract_then_same_error_as_batchwise(result, message, last):
    bad = flat_map_p(lambda line: result)
    suppliers = [bad] if last else [bad, map_p(str.upper)]
    with pytest.raises(ProcessorContractError, match=message) as batchwise:
        _batchwise([_initialised(s, "bad") for s in suppliers], [["x"]])
    with pytest.raises(ProcessorContractError, match=message) as looped:
        FusedLoop([_initialised(s, "bad") for s in suppliers], counting(), whole_item).run([["x"]], {})
    assert str(looped.value) == str(batchwise.value)
    assert "vertex 'bad'" in str(looped.value)


def test_fused_loop_when_user_function_raises_then_level_of_names_its_processor():
    def explode(word):
        if word == "b":
            raise ValueError("no b")
        return word

    loop = FusedLoop([_initialised(flat_map_p(str.split)), _initialised(map_p(explode))], counting(), whole_item)
    with pytest.raises(ValueError, match="no b") as info:
        loop.run([["a b"]], {})
    assert loop.level_of(info.value) == 1
    keyed = FusedLoop([_initialised(flat_map_p(str.split))], counting(), lambda w: 1 / 0)
    with pytest.raises(ZeroDivisionError) as info:
        keyed.run([["a"]], {})
    assert keyed.level_of(info.value) is None  # the key function: not a processor's


def test_loop_kind_when_exact_builtin_then_kind_else_none():
    class Shouting(MapP):
        pass

    assert loop_kind(MapP) == "map" and loop_kind(flat_map_p(str.split).processor_class) == "flat_map"
    assert loop_kind(Shouting) is None and loop_kind(None) is None
