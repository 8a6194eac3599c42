"""Small item functions as Jet's ``Functions``: an *entry* is a 2-tuple ``(key, value)``.

>>> entry("a", 1), entry_key(("a", 1)), entry_value(("a", 1)), whole_item(5)
(('a', 1), 'a', 1, 5)
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable

__all__ = ["whole_item", "entry_key", "entry_value", "entry", "c_level"]


def whole_item(item: Any) -> Any:
    """The identity function: returns ``item`` itself (e.g. as a key function keying on the whole item)."""
    return item


def entry_key(e: tuple) -> Any:
    """The key of an entry ``(key, value)``."""
    return e[0]


def entry_value(e: tuple) -> Any:
    """The value of an entry ``(key, value)``."""
    return e[1]


def entry(key: Any, value: Any) -> tuple:
    """Make an entry: the 2-tuple ``(key, value)``."""
    return (key, value)


_C_LEVEL: dict = {entry_key: itemgetter(0), entry_value: itemgetter(1)}


def c_level(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn``, or its C-implemented ``operator`` equivalent when it is ``entry_key``/``entry_value`` (the same
    results, cheaper calls in loops that call it per item).

    >>> c_level(entry_key)(("a", 1)), c_level(len) is len
    ('a', True)
    """
    try:
        return _C_LEVEL.get(fn, fn)
    except TypeError:  # an unhashable callable object
        return fn
