"""Hash-join clauses and tags: ``JoinClause``, ``Tag``, ``ItemsByTag`` (Jet's ``pipeline.JoinClause`` and
``datamodel.Tag``/``ItemsByTag``).

A :class:`JoinClause` holds three functions: the key of the left (enriched) item, the key of the right
(enriching) item and the projection of a matching right item into what the output function receives.

- ``JoinClause.join_map_entries(left_key_fn)``: the right items are ``(key, value)`` entries; joins on the
  entry key and gives the entry value.
- ``JoinClause.on_keys(left_key_fn, right_key_fn)``: the right item itself, unless ``.project_right(fn)``.

Tags name the inputs of a builder: ``Tag.tag0()``, ``tag1()``, ``tag2()`` or ``Tag(index)``;
``items_by_tag.get(tag)`` returns what a builder collected for that tag (``None`` if nothing).

>>> clause = JoinClause.join_map_entries(lambda trade: trade["ticker"])
>>> clause.right_key_fn(("ACME", "Acme Corp")), clause.right_projection_fn(("ACME", "Acme Corp"))
('ACME', 'Acme Corp')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from processors.api.functions import entry_key, entry_value

__all__ = ["JoinClause", "Tag", "ItemsByTag"]


def _identity(item: Any) -> Any:
    return item


def _callable(owner: str, label: str, fn: Any) -> Callable:
    if not callable(fn):
        raise DagValidationError(f"{owner}: {label} must be callable, got {fn!r:.80} ({type(fn).__name__})")
    return fn


class JoinClause:
    """How to join one enriching stage: left key, right key, right projection. Immutable."""

    __slots__ = ("left_key_fn", "right_key_fn", "right_projection_fn")

    def __init__(self, left_key_fn: Callable[[Any], Any], right_key_fn: Callable[[Any], Any],
                 right_projection_fn: Callable[[Any], Any] = _identity):
        self.left_key_fn = _callable("JoinClause", "left_key_fn", left_key_fn)
        self.right_key_fn = _callable("JoinClause", "right_key_fn", right_key_fn)
        self.right_projection_fn = _callable("JoinClause", "right_projection_fn", right_projection_fn)

    @staticmethod
    def join_map_entries(left_key_fn: Callable[[Any], Any]) -> JoinClause:
        """Join with ``(key, value)`` entries on their key; the output function gets the entry's value."""
        return JoinClause(left_key_fn, entry_key, entry_value)

    @staticmethod
    def on_keys(left_key_fn: Callable[[Any], Any], right_key_fn: Callable[[Any], Any]) -> JoinClause:
        """Join where ``left_key_fn(left) == right_key_fn(right)``; the output function gets the right item."""
        return JoinClause(left_key_fn, right_key_fn)

    def project_right(self, fn: Callable[[Any], Any]) -> JoinClause:
        """The same clause giving ``fn(right_item)`` to the output function."""
        return JoinClause(self.left_key_fn, self.right_key_fn, _callable("JoinClause.project_right", "fn", fn))

    def __repr__(self) -> str:
        return f"JoinClause({_name(self.left_key_fn)}, {_name(self.right_key_fn)}, {_name(self.right_projection_fn)})"


def _name(fn: Any) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


class Tag:
    """The index of one input of a builder (hash-join or co-group), as Jet's ``Tag``."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise DagValidationError(f"Tag(index): index must be an int >= 0, got {index!r}")
        self.index = index

    @staticmethod
    def tag0() -> Tag:
        return Tag(0)

    @staticmethod
    def tag1() -> Tag:
        return Tag(1)

    @staticmethod
    def tag2() -> Tag:
        return Tag(2)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tag) and other.index == self.index

    def __hash__(self) -> int:
        return self.index

    def __reduce__(self) -> tuple:
        return Tag, (self.index,)

    def __repr__(self) -> str:
        return f"Tag{self.index}"


class ItemsByTag:
    """What a builder collected, by tag: ``ibt.get(tag)`` (``None`` when there is nothing for it).

    >>> ibt = ItemsByTag({Tag(1): "x"})
    >>> ibt.get(Tag(1)), ibt.get(Tag(2))
    ('x', None)
    """

    __slots__ = ("_items",)

    def __init__(self, items: dict[Tag, Any] | None = None):
        self._items = dict(items or {})

    @staticmethod
    def items_by_tag(*tags_and_values: Any) -> ItemsByTag:
        """``items_by_tag(tag0, v0, tag1, v1, ...)``."""
        pairs = zip(tags_and_values[::2], tags_and_values[1::2])
        return ItemsByTag(dict(pairs))

    def get(self, tag: Tag) -> Any:
        if not isinstance(tag, Tag):
            raise TypeError(f"ItemsByTag.get(tag): expected a Tag (from the builder's add()/tag0()), got {tag!r}")
        return self._items.get(tag)

    def put(self, tag: Tag, value: Any) -> None:
        self._items[tag] = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ItemsByTag) and other._items == self._items

    def __reduce__(self) -> tuple:
        return ItemsByTag, (self._items,)

    def __repr__(self) -> str:
        inner = ", ".join(f"{t!r}: {v!r}" for t, v in sorted(self._items.items(), key=lambda e: e[0].index))
        return f"ItemsByTag{{{inner}}}"
