"""``Inbox``: the queue of items a processor receives from one inbound edge (Jet's ``Inbox``).

Backed by a ``collections.deque``. Drivers reach the deque directly as ``inbox._items`` and empty it in one
step with ``take_all()``; processors use the public methods. A processor removes an item only once it has
fully processed it: items left in the inbox are offered again in the next ``process()`` call.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Iterable, Iterator

__all__ = ["Inbox"]


class Inbox:
    """A FIFO of received items.

    >>> inbox = Inbox([1, 2, 3])
    >>> inbox.peek(), inbox.poll(), len(inbox), list(inbox)
    (1, 1, 2, [2, 3])
    >>> out = []
    >>> inbox.drain_to(out), out, inbox.is_empty()
    (2, [2, 3], True)
    """

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[Any] = ()):
        self._items: deque = deque(items)

    def is_empty(self) -> bool:
        """True when the inbox holds no item."""
        return not self._items

    def peek(self) -> Any:
        """The head item without removing it, or ``None`` when empty."""
        items = self._items
        return items[0] if items else None

    def poll(self) -> Any:
        """Remove and return the head item, or ``None`` when empty."""
        items = self._items
        return items.popleft() if items else None

    def remove(self) -> Any:
        """Remove and return the head item; raises ``IndexError`` when the inbox is empty."""
        try:
            return self._items.popleft()
        except IndexError:
            raise IndexError(
                "Inbox.remove() called on an empty inbox; check is_empty() first or use poll(), "
                "which returns None when empty"
            ) from None

    def __len__(self) -> int:
        return len(self._items)

    def len(self) -> int:
        """The number of items (same as ``len(inbox)``)."""
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __iter__(self) -> Iterator[Any]:
        """Iterate over the items without removing them."""
        return iter(self._items)

    def clear(self) -> None:
        """Remove every item."""
        self._items.clear()

    def drain_to(self, target: Any, limit: int | None = None) -> int:
        """Move up to ``limit`` items (all when ``None``) to ``target`` (anything with ``append``, or ``add`` for
        sets) and return how many moved.
        """
        items = self._items
        count = len(items) if limit is None else min(limit, len(items))
        if count <= 0:
            return 0
        add = getattr(target, "append", None) or target.add
        if count == len(items):
            extend = getattr(target, "extend", None)
            if extend is not None:
                extend(items)
            else:
                for item in items:
                    add(item)
            items.clear()
            return count
        popleft = items.popleft
        for _ in range(count):
            add(popleft())
        return count

    def drain(self, consumer: Callable[[Any], Any]) -> int:
        """Pass every item to ``consumer`` in order, removing it, and return how many were drained."""
        items = self._items
        count = len(items)
        popleft = items.popleft
        for _ in range(count):
            consumer(popleft())
        return count

    def take_all(self) -> list:
        """Internal (drivers and tight library loops): remove and return all items as a list."""
        items = list(self._items)
        self._items.clear()
        return items

    def add_all(self, items: Iterable[Any]) -> None:
        """Internal (processors that wrap another): append ``items``, e.g. what ``take_all()`` returned,
        adapted for the wrapped processor (``pipeline.internal.UnwrapEventsP``)."""
        self._items.extend(items)

    def __repr__(self) -> str:
        return f"Inbox({list(self._items)!r})"
