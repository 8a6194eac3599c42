from __future__ import annotations

import pytest

from processors import Inbox, Watermark


def test_inbox_when_filled_then_peek_poll_remove_in_fifo_order():
    inbox = Inbox([1, 2, 3])
    assert not inbox.is_empty() and len(inbox) == 3 and inbox.len() == 3
    assert inbox.peek() == 1
    assert inbox.poll() == 1
    assert inbox.remove() == 2
    assert list(inbox) == [3]
    assert list(inbox) == [3], "iteration must not remove items"


def test_inbox_when_empty_then_peek_and_poll_return_none_and_remove_raises():
    inbox = Inbox()
    assert inbox.is_empty() and inbox.peek() is None and inbox.poll() is None
    with pytest.raises(IndexError, match="empty inbox"):
        inbox.remove()


def test_inbox_drain_to_when_limit_then_moves_only_limit_items():
    inbox = Inbox(range(5))
    target: list = []
    assert inbox.drain_to(target, limit=2) == 2
    assert target == [0, 1] and list(inbox) == [2, 3, 4]
    assert inbox.drain_to(target) == 3
    assert target == [0, 1, 2, 3, 4] and inbox.is_empty()
    assert inbox.drain_to(target) == 0


def test_inbox_drain_to_when_set_target_then_uses_add():
    inbox = Inbox(["a", "b", "a"])
    target: set = set()
    assert inbox.drain_to(target) == 3
    assert target == {"a", "b"}


def test_inbox_drain_when_consumer_then_all_items_consumed_in_order():
    seen = []
    inbox = Inbox("xyz")
    assert inbox.drain(seen.append) == 3
    assert seen == ["x", "y", "z"] and inbox.is_empty()


def test_inbox_clear_and_take_all():
    inbox = Inbox([1, 2])
    assert inbox.take_all() == [1, 2] and inbox.is_empty()
    inbox._items.extend([3, 4])
    inbox.clear()
    assert len(inbox) == 0


def test_watermark_equality_by_timestamp():
    assert Watermark(5) == Watermark(5) and Watermark(5) != Watermark(6)
    assert hash(Watermark(5)) == hash(Watermark(5))
    assert Watermark(7).timestamp == 7
    with pytest.raises(TypeError):
        Watermark("7")


def test_inbox_add_all_when_items_taken_then_put_back_after_what_is_left():
    inbox = Inbox([1, 2])
    taken = inbox.take_all()
    inbox.add_all([3])
    inbox.add_all(x * 10 for x in taken)
    assert list(inbox) == [3, 10, 20]
