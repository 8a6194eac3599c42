"""``emit_from_traverser`` over a traverser of a list or tuple (``traverse_iterable(list)``, or the list itself)
offers the rest of the sequence in one ``Outbox.offer_many``: the same items in the same order, the same calls
until done and the same errors as the per-item path (an iterator over the same items), whatever the outbox's
capacity and whoever reads the traverser afterwards."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dag.errors import ProcessorContractError
from processors import AbstractProcessor, traverse_iterable
from processors.api.context import Context
from processors.api.outbox import Outbox


class _Emitter(AbstractProcessor):
    pass


def _start(capacities: list[int]) -> tuple[_Emitter, Outbox]:
    p, box = _Emitter(), Outbox(capacities)
    p.init(box, Context())
    return p, box


def _emit_all(capacity: int, make_traverser, ordinal=-1) -> tuple[list, int]:
    """Items emitted and calls made until ``emit_from_traverser`` returned True, draining the outbox between
    calls as the tasklet does."""
    p, box = _start([capacity])
    traverser = make_traverser()
    out, calls = [], 0
    while True:
        box.reset()
        calls += 1
        done = p.emit_from_traverser(traverser, ordinal)
        out += box.drain(0)
        if done:
            return out, calls


@settings(max_examples=60, deadline=None)
@given(items=st.lists(st.integers(), max_size=60), capacity=st.integers(1, 9), as_tuple=st.booleans())
def test_sequence_traverser_when_any_capacity_then_same_items_and_calls_as_per_item(items, capacity, as_tuple):
    sequence = tuple(items) if as_tuple else list(items)
    expected = _emit_all(capacity, lambda: traverse_iterable(iter(items)))  # an iterator: the per-item path
    assert _emit_all(capacity, lambda: traverse_iterable(sequence)) == expected
    assert _emit_all(capacity, lambda: sequence) == expected  # the sequence itself, resumed, not restarted
    assert expected[0] == items


def test_sequence_traverser_when_partly_emitted_then_next_continues_after_the_emitted_items():
    p, box = _start([3])
    t = traverse_iterable([1, 2, 3, 4, 5])
    assert not p.emit_from_traverser(t)
    assert box.drain(0) == [1, 2, 3]
    assert [t.next(), t.next(), t.next()] == [4, 5, None]


def test_sequence_traverser_when_none_inside_then_items_before_it_out_and_the_traverser_error():
    p, box = _start([10])
    with pytest.raises(ProcessorContractError, match="yielded None at position 2"):
        p.emit_from_traverser(traverse_iterable(["a", "b", None, "c"]))
    assert box.drain(0) == ["a", "b"]


def test_sequence_traverser_when_several_ordinals_then_each_gets_every_item_in_order():
    p, box = _start([4, 4, 4])
    t = traverse_iterable(list(range(6)))
    assert not p.emit_from_traverser(t, [0, 2])
    assert box.drain(0) == box.drain(2) == [0, 1, 2, 3] and box.drain(1) == []
    box.reset()
    assert p.emit_from_traverser(t, [0, 2])
    assert box.drain(0) == box.drain(2) == [4, 5]


def test_sequence_traverser_when_items_compare_equal_to_none_then_emitted_all_the_same():
    class EqualsAll:
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    items = [EqualsAll(), EqualsAll(), EqualsAll()]
    out, calls = _emit_all(2, lambda: traverse_iterable(items))
    assert out == items and all(a is b for a, b in zip(out, items)) and calls == 2
