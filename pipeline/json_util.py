"""``JsonUtil``: Jet 4.5's JSON helpers, over Python's ``json`` module.

Jet parses JSON into maps, lists or beans; in Python a JSON object is a ``dict``, an array a ``list``, and a
"bean" is any class whose constructor takes the object's fields as keyword arguments (a dataclass, a
``NamedTuple``, a pydantic model).

>>> JsonUtil.map_from('{"name": "Ann", "age": 30}')
{'name': 'Ann', 'age': 30}
>>> JsonUtil.to_json({"a": [1, 2]})
'{"a": [1, 2]}'
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = ["JsonUtil", "bean_from_dict"]


def bean_from_dict(cls: type, fields: dict, where: str) -> Any:
    """``cls(**fields)``; a ``DagValidationError`` naming ``where`` when the class cannot take the fields."""
    try:
        return cls(**fields)
    except TypeError as error:
        raise DagValidationError(f"{where}: {cls.__name__} cannot take the fields {sorted(fields)}: {error}; "
                                 "give a class whose constructor takes them as keyword arguments") from error


class JsonUtil:
    """JSON helpers (Jet's ``com.hazelcast.jet.json.JsonUtil``)."""

    @staticmethod
    def map_from(text: str) -> dict:
        """The JSON object in ``text`` as a ``dict`` (``ValueError`` naming the position if it is no object)."""
        value = json.loads(text)
        if not isinstance(value, dict):
            raise ValueError(f"JsonUtil.map_from: expected a JSON object, got {type(value).__name__} {text!r:.80}")
        return value

    @staticmethod
    def list_from(text: str) -> list:
        """The JSON array in ``text`` as a ``list``."""
        value = json.loads(text)
        if not isinstance(value, list):
            raise ValueError(f"JsonUtil.list_from: expected a JSON array, got {type(value).__name__} {text!r:.80}")
        return value

    @staticmethod
    def bean_from(text: str, cls: type) -> Any:
        """``cls(**object)`` of the JSON object in ``text``.

        >>> from typing import NamedTuple
        >>> class Person(NamedTuple):
        ...     name: str
        ...     age: int
        >>> JsonUtil.bean_from('{"name": "Ann", "age": 30}', Person)
        Person(name='Ann', age=30)
        """
        return bean_from_dict(cls, JsonUtil.map_from(text), "JsonUtil.bean_from")

    @staticmethod
    def to_json(obj: Any) -> str:
        """``obj`` as JSON text: dicts, lists and scalars as they are; dataclasses and named tuples by their
        fields; other objects by their ``__dict__``."""
        return json.dumps(_plain(obj))


def _plain(obj: Any) -> Any:
    """``obj`` with named tuples, dataclasses and objects turned into dicts (recursively)."""
    if isinstance(obj, dict):
        return {key: _plain(value) for key, value in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_asdict"):
        return {key: _plain(value) for key, value in obj._asdict().items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(value) for value in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if hasattr(obj, "__dict__"):
        return _plain(vars(obj))
    raise TypeError(f"JsonUtil.to_json: cannot write {type(obj).__name__} {obj!r:.80} as JSON")
