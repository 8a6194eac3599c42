"""Small item functions as Jet's ``Functions``: an *entry* is a 2-tuple ``(key, value)``.

>>> entry("a", 1), entry_key(("a", 1)), entry_value(("a", 1)), whole_item(5)
(('a', 1), 'a', 1, 5)
"""

from __future__ import annotations

from typing import Any

__all__ = ["whole_item", "entry_key", "entry_value", "entry"]


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
