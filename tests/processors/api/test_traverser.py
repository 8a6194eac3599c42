from __future__ import annotations

import pytest

from dag.errors import ProcessorContractError
from processors import Traverser, empty, lazy, traverse_items, traverse_iterable


def _drain(t: Traverser, limit: int = 100) -> list:
    return [t.next() for _ in range(limit)]


def test_traverser_when_exhausted_then_keeps_returning_none():
    t = traverse_iterable([1, 2])
    assert [t.next(), t.next(), t.next(), t.next()] == [1, 2, None, None]


def test_traverse_iterable_when_none_element_then_contract_error():
    t = traverse_iterable([1, None])
    assert t.next() == 1
    with pytest.raises(ProcessorContractError, match="position 1"):
        t.next()


def test_traverse_items_skips_none():
    assert traverse_items(1, None, 2).to_list() == [1, 2]


def test_empty_and_lazy():
    assert empty().next() is None
    calls = []
    t = lazy(lambda: calls.append(1) or [7, 8])
    assert calls == []
    assert t.to_list() == [7, 8] and calls == [1]
    assert t.next() is None and calls == [1]


def test_map_skips_none_results():
    assert traverse_items(1, 2, 3, 4).map(lambda x: x * 2 if x % 2 else None).to_list() == [2, 6]


def test_filter():
    assert traverse_iterable(range(1, 7)).filter(lambda x: x % 3 == 0).to_list() == [3, 6]


def test_flat_map_with_traversers_and_iterables():
    t = traverse_items(1, 2, 3).flat_map(lambda x: traverse_items(*([x] * x)) if x != 2 else [])
    assert t.to_list() == [1, 3, 3, 3]


def test_flat_map_when_upstream_returns_none_then_passes_none_and_resumes_later():
    source = [1, None, 2]
    t = Traverser(lambda: source.pop(0) if source else None).flat_map(lambda x: [x, x * 10])
    assert [t.next(), t.next(), t.next(), t.next(), t.next(), t.next()] == [1, 10, None, 2, 20, None]


def test_append_emitted_once_at_first_null():
    t = traverse_items(1).append(9)
    assert [t.next(), t.next(), t.next()] == [1, 9, None]


def test_prepend_emitted_first():
    assert traverse_items(1, 2).prepend(0).to_list() == [0, 1, 2]


def test_take_while_then_none_forever():
    source = iter([1, 2, 5, 1, 2])
    t = Traverser(lambda: next(source, None)).take_while(lambda x: x < 3)
    assert _drain(t, 5) == [1, 2, None, None, None]


def test_drop_while_then_passes_everything():
    assert traverse_items(1, 2, 5, 1, 2).drop_while(lambda x: x < 3).to_list() == [5, 1, 2]


def test_peek_sees_only_non_null_items():
    seen = []
    t = traverse_items(1, 2).peek(seen.append)
    assert _drain(t, 4) == [1, 2, None, None]
    assert seen == [1, 2]


def test_on_first_null_runs_once():
    calls = []
    t = traverse_items(1).on_first_null(lambda: calls.append("done"))
    assert _drain(t, 4) == [1, None, None, None]
    assert calls == ["done"]


def test_traverser_is_lazy():
    seen = []
    t = traverse_items(1, 2).map(lambda x: seen.append(x) or x)
    assert seen == []
    t.next()
    assert seen == [1]


def test_traverser_python_iteration_stops_at_first_none():
    source = [1, None, 2]
    t = Traverser(lambda: source.pop(0) if source else None)
    assert list(t) == [1]
    assert list(t) == [2]


def test_flat_map_when_outer_returns_none_then_same_inner_traverser_asked_again():
    inner_items: list = []
    inner = Traverser(lambda: inner_items.pop(0) if inner_items else None)  # may have items again later
    outer_items = ["x"]
    t = Traverser(lambda: outer_items.pop(0) if outer_items else None).flat_map(lambda _: inner)
    assert t.next() is None
    inner_items.append(5)
    assert [t.next(), t.next()] == [5, None]


@pytest.mark.parametrize("sequence", [[1, 2, 3, 4], (1, 2, 3, 4)])
def test_traverse_iterable_over_a_sequence_when_skipped_then_next_continues_after_the_skipped_items(sequence):
    t = traverse_iterable(sequence)
    t.skip_to(2)
    assert t.next() == 3
    t.skip_to(3)  # an iterator already made moves too
    assert [t.next(), t.next()] == [4, None]


def test_traverse_iterable_over_a_list_when_appended_before_reading_then_sees_the_live_list():
    items = [1]
    t = traverse_iterable(items)
    items.append(2)
    assert t.to_list() == [1, 2]
    items.append(3)  # a list iterator that reached the end stays exhausted, as Python's does
    assert t.next() is None
