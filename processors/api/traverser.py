"""``Traverser``: a pull-style sequence of non-None items (Jet's ``Traverser`` and ``Traversers``).

``next()`` returns the next item, or ``None`` when there is none *now*: a finite traverser keeps returning
``None`` once exhausted, while e.g. an appendable one may return items again later. Combinators are lazy
(evaluated on ``next()``) with Jet's semantics:

- ``map(fn)``: a ``None`` result skips the item; ``filter(pred)``.
- ``flat_map(fn)``: ``fn`` returns a traverser (or an iterable); the outer item is taken only when the
  current inner traverser returns ``None``; an outer ``None`` is passed on as ``None``, and the next call asks
  the same inner traverser again first (it may have items by then).
- ``append(item)``: ``item`` comes once, at the first ``None`` of the upstream; ``prepend(item)``: first.
- ``take_while(pred)``: after the first failing item, ``None`` for ever; ``drop_while(pred)``.
- ``peek(fn)``: ``fn`` sees every non-None item; ``on_first_null(action)``: runs once, at the first ``None``.

Factories: ``traverse_iterable`` (a ``None`` element is a ``ProcessorContractError``), ``traverse_items``
(``None`` elements are skipped), ``lazy(supplier)`` (``supplier()`` is called at the first ``next()``),
``empty()``. A traverser also iterates in Python (``for x in t`` stops at the first ``None``).

>>> traverse_items(1, 2, 3).map(lambda x: x * 10).append(99).to_list()
[10, 20, 30, 99]
>>> traverse_iterable(["a b", "c"]).flat_map(lambda s: s.split()).to_list()
['a', 'b', 'c']
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence

from jetspark_base.errors import ProcessorContractError

__all__ = ["Traverser", "traverse_iterable", "traverse_array", "traverse_items", "lazy", "empty", "to_traverser"]

_END = object()


class Traverser:
    """A sequence read with ``next()``; ``None`` means "no item now". Wraps a zero-arg ``next_fn``.

    >>> it = iter([1, 2]); t = Traverser(lambda: next(it, None))
    >>> t.next(), t.next(), t.next()
    (1, 2, None)
    """

    __slots__ = ("_next_fn",)

    def __init__(self, next_fn: Callable[[], Any] | None = None):
        self._next_fn = next_fn

    def next(self) -> Any:
        """The next item, or ``None`` when none is available now."""
        return self._next_fn()

    def __iter__(self) -> Iterator[Any]:
        """Iterate until the first ``None``."""
        next_ = self.next
        while (item := next_()) is not None:
            yield item

    def to_list(self) -> list:
        """The items up to the first ``None``, as a list."""
        return list(self)

    def map(self, fn: Callable[[Any], Any]) -> "Traverser":
        """Apply ``fn`` to every item; a ``None`` result drops the item."""
        up = self.next

        def next_() -> Any:
            while True:
                item = up()
                if item is None:
                    return None
                result = fn(item)
                if result is not None:
                    return result

        return Traverser(next_)

    def filter(self, pred: Callable[[Any], bool]) -> "Traverser":
        """Keep only the items for which ``pred`` is true."""
        up = self.next

        def next_() -> Any:
            while True:
                item = up()
                if item is None or pred(item):
                    return item

        return Traverser(next_)

    def flat_map(self, fn: Callable[[Any], Any]) -> "Traverser":
        """Replace every item by the items of ``fn(item)`` (a traverser or an iterable)."""
        return _FlatMapping(self.next, fn)

    def append(self, item: Any) -> "Traverser":
        """Emit ``item`` once, when the upstream first returns ``None``."""
        if item is None:
            raise ValueError("Traverser.append(None): None is not an item")
        up = self.next
        state = [item]

        def next_() -> Any:
            value = up()
            if value is None and state:
                return state.pop()
            return value

        return Traverser(next_)

    def prepend(self, item: Any) -> "Traverser":
        """Emit ``item`` first, then the upstream items."""
        if item is None:
            raise ValueError("Traverser.prepend(None): None is not an item")
        up = self.next
        state = [item]

        def next_() -> Any:
            if state:
                return state.pop()
            return up()

        return Traverser(next_)

    def take_while(self, pred: Callable[[Any], bool]) -> "Traverser":
        """Items while ``pred`` holds; after the first failing item, ``None`` for ever."""
        up = self.next
        state = [False]  # done

        def next_() -> Any:
            if state[0]:
                return None
            item = up()
            if item is None or pred(item):
                return item
            state[0] = True
            return None

        return Traverser(next_)

    def drop_while(self, pred: Callable[[Any], bool]) -> "Traverser":
        """Skip items while ``pred`` holds, then pass every item."""
        up = self.next
        state = [True]  # dropping

        def next_() -> Any:
            if not state[0]:
                return up()
            while True:
                item = up()
                if item is None:
                    return None
                if not pred(item):
                    state[0] = False
                    return item

        return Traverser(next_)

    def peek(self, fn: Callable[[Any], Any]) -> "Traverser":
        """Call ``fn(item)`` for every non-None item as it passes."""
        up = self.next

        def next_() -> Any:
            item = up()
            if item is not None:
                fn(item)
            return item

        return Traverser(next_)

    def on_first_null(self, action: Callable[[], Any]) -> "Traverser":
        """Run ``action()`` once, the first time the upstream returns ``None``."""
        up = self.next
        state = [action]

        def next_() -> Any:
            item = up()
            if item is None and state:
                state.pop()()
            return item

        return Traverser(next_)


class _IteratorTraverser(Traverser):
    """``traverse_iterable``'s traverser. Over a list or tuple it keeps the sequence (``_items``; ``_position``
    is then the index of the next item), so that ``AbstractProcessor.emit_from_traverser`` can emit the rest in
    one ``Outbox.offer_many`` and move past it (:meth:`skip_to`). The iterator over a sequence is made at the
    first :meth:`next` only (at ``_position``): a sequence emitted whole never needs one. A list iterator reads
    the live list either way, so making it later changes nothing."""

    __slots__ = ("_it", "_position", "_items")

    def __init__(self, iterable: Iterable[Any]):
        cls = iterable.__class__
        if cls is list or cls is tuple:
            self._items, self._it = iterable, None
        else:
            self._items, self._it = None, iter(iterable)
        self._position = 0

    def skip_to(self, position: int) -> None:
        """Continue at index ``position`` of the list or tuple (the items before it were emitted)."""
        if self._it is not None:
            self._it.__setstate__(position)
        self._position = position

    def next(self) -> Any:
        it = self._it
        if it is None:  # a sequence: its iterator, from where skip_to left it
            it = self._it = iter(self._items)
            it.__setstate__(self._position)
        item = next(it, _END)
        if item is _END:
            return None
        if item is None:
            raise ProcessorContractError(
                f"traverse_iterable: the iterable yielded None at position {self._position}; "
                "items must not be None (filter them out, or use traverse_items, which skips None)"
            )
        self._position += 1
        return item

    def __iter__(self) -> Iterator[Any]:
        return iter(self.next, None)


class _FlatMapping(Traverser):
    __slots__ = ("_up", "_fn", "_inner")

    def __init__(self, up: Callable[[], Any], fn: Callable[[Any], Any]):
        self._up = up
        self._fn = fn
        self._inner: Callable[[], Any] | None = None

    def next(self) -> Any:
        while True:
            inner = self._inner
            if inner is not None:
                item = inner()
                if item is not None:
                    return item
            outer = self._up()  # the inner traverser is kept until the outer one has a new item (Jet's rule)
            if outer is None:
                return None
            self._inner = to_traverser(self._fn(outer)).next


class _Empty(Traverser):
    __slots__ = ()

    def next(self) -> Any:
        return None


_EMPTY = _Empty()


def to_traverser(obj: Any) -> Traverser:
    """``obj`` as a traverser: a ``Traverser`` as is, ``None`` as empty, any iterable via ``traverse_iterable``."""
    if isinstance(obj, Traverser):
        return obj
    if obj is None:
        return _EMPTY
    return _IteratorTraverser(obj)


def traverse_iterable(iterable: Iterable[Any]) -> Traverser:
    """Traverse the items of ``iterable`` (an iterator is consumed as it is read)."""
    return _IteratorTraverser(iterable)


def traverse_array(array: Sequence[Any]) -> Traverser:
    """Traverse the elements of a sequence (Jet's ``Traversers.traverseArray``), skipping ``None`` as Jet does.

    >>> traverse_array(["a", None, "b"]).to_list()
    ['a', 'b']
    """
    return _IteratorTraverser([x for x in array if x is not None])


def traverse_items(*items: Any) -> Traverser:
    """Traverse the given items, skipping ``None``."""
    return _IteratorTraverser([x for x in items if x is not None])


def lazy(supplier: Callable[[], Any]) -> Traverser:
    """A traverser that calls ``supplier()`` (returning a traverser or an iterable) at the first ``next()``."""
    state: list = []

    def next_() -> Any:
        if not state:
            state.append(to_traverser(supplier()).next)
        return state[0]()

    return Traverser(next_)


def empty() -> Traverser:
    """A traverser with no items."""
    return _EMPTY
