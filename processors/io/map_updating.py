"""Sinks that update a driver map item by item: Jet's ``mergeMapP``/``updateMapP`` (``Sinks.mapWithMerging``,
``mapWithUpdating``, ``mapWithEntryProcessor``).

Unlike ``write_map_p``, which puts ``(key, value)`` entries, these sinks read the key's current value and
decide the new one with a user function, so the read and the write must happen together where the map lives:
on Jet the member owning the key runs the function; here the driver, which holds the engine's maps, does.
Every item therefore travels to the driver (small data, as for every driver-side sink), and
:meth:`MapUpdatingSink.apply_items` applies a batch under the map's journal lock, so concurrent processors
never interleave inside one read-modify-write. The three kinds:

- **merging** ``(key_fn, value_fn, merge_fn)``: an absent key gets ``value_fn(item)``, a present one
  ``merge_fn(old, value_fn(item))``;
- **updating** ``(key_fn, update_fn)``: the key gets ``update_fn(old_or_None, item)``;
- **entry processor** ``(key_fn, processor_fn)``: ``processor_fn(item).process(entry)`` reads and sets the
  entry (:class:`MapEntry`: ``get_key``, ``get_value``, ``set_value``).

A ``None`` result (or ``set_value(None)``) removes the key, as Jet's ``null``. Changes go through the
:class:`~dag.runtime.common.driver_collections.JournaledMap`, so a ``map_journal`` source sees them.

The items reach the driver as for every :class:`~processors.io.driver_apply.DriverApplySink` (both runtimes; under
``EXACTLY_ONCE`` applied when the snapshot that covers them completes, so a restart neither loses nor repeats
an update; a user function that fails then fails the job when that snapshot's batches are applied).

>>> target = {}
>>> sink = merge_map_p("counts", lambda w: w, lambda w: 1, lambda old, new: old + new)
>>> sink.apply_items(target, ["a", "b", "a"], vertex="v"); target
{'a': 2, 'b': 1}
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError, JobFailedError
from processors.io.driver_apply import DriverApplySink

__all__ = ["MapEntry", "MapUpdatingSink", "merge_map_p", "update_map_p",
           "update_map_with_entry_processor_p"]

_MISSING = object()


class MapEntry:
    """The entry an entry processor's ``process(entry)`` works on (Jet's ``Map.Entry`` of an ``EntryProcessor``):
    ``set_value`` writes through to the map at once, ``set_value(None)`` removes the key.

    >>> m = {"a": 1}; e = MapEntry(m, "a"); e.set_value(e.get_value() + 1); m
    {'a': 2}
    """

    __slots__ = ("_map", "_key")

    def __init__(self, target: dict, key: Any):
        self._map, self._key = target, key

    def get_key(self) -> Any:
        """The entry's key."""
        return self._key

    def get_value(self) -> Any:
        """The key's current value, or ``None`` when the map holds no such key."""
        return self._map.get(self._key)

    def set_value(self, value: Any) -> None:
        """Put ``value`` under the key (``None`` removes the key)."""
        _store(self._map, self._key, value)


def _store(target: dict, key: Any, value: Any) -> None:
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value


class MapUpdatingSink(DriverApplySink):
    """The runtime-bound supplier of the three map-updating sinks (see the module docstring).

    ``kind`` is ``"merging"``, ``"updating"`` or ``"entry_processor"``; ``functions`` the user's functions in
    the order of the factory's arguments.
    """

    def __init__(self, kind: str, name: str, functions: tuple[Callable, ...]):
        super().__init__(("map", name))
        self.kind, self.map_name, self.functions = kind, name, functions

    def apply_items(self, target: dict, items: list, vertex: str) -> None:
        """Apply ``items`` to ``target`` in order, on the driver, under the map's journal lock when it has one.

        A user function that raises stops the batch (items before it stay applied) with a ``JobFailedError``
        naming ``vertex``, the function, the item and the key."""
        lock = getattr(getattr(target, "journal", None), "lock", None)
        with lock if lock is not None else contextlib.nullcontext():
            for item in items:
                self._apply(target, item, vertex)

    def _apply(self, target: dict, item: Any, vertex: str) -> None:
        call = functools.partial(self._call, vertex, item)
        key = call("key_fn", None, self.functions[0], item)
        if self.kind == "merging":
            value = call("value_fn", key, self.functions[1], item)
            old = target.get(key, _MISSING)
            _store(target, key, value if old is _MISSING else call("merge_fn", key, self.functions[2], old, value))
        elif self.kind == "updating":
            _store(target, key, call("update_fn", key, self.functions[1], target.get(key), item))
        else:
            processor = call("processor_fn", key, self.functions[1], item)
            process = getattr(processor, "process", None)
            if not callable(process):
                raise JobFailedError(
                    f"vertex '{vertex}': processor_fn of Sinks.map_with_entry_processor({self.map_name!r}) returned "
                    f"{type(processor).__name__}, which has no process(entry) method; return an object with one",
                    vertex=vertex, exc_type="TypeError", exc_message="entry processor without process(entry)")
            call("process", key, process, MapEntry(target, key))

    def _call(self, vertex: str, item: Any, label: str, key: Any, fn: Callable, *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:
            where = "" if label == "key_fn" else f", key {key!r:.60}"
            raise JobFailedError(
                f"vertex '{vertex}': {label} of {self!r} raised {type(exc).__name__}: {exc} for item {item!r:.80}"
                f"{where}; fix the function or filter such items out before the sink",
                vertex=vertex, exc_type=type(exc).__name__, exc_message=str(exc)) from exc

    def __repr__(self) -> str:
        factory = {"merging": "map_with_merging", "updating": "map_with_updating",
                   "entry_processor": "map_with_entry_processor"}[self.kind]
        return f"Sinks.{factory}({self.map_name!r})"


def _checked(factory: str, name: Any, **functions: Any) -> tuple[str, tuple[Callable, ...]]:
    if not isinstance(name, str) or not name:
        raise DagValidationError(f"{factory}: the map name must be a non-empty str, got {name!r}")
    for label, fn in functions.items():
        if not callable(fn):
            raise DagValidationError(f"{factory}({name!r}): {label} must be a function, got {fn!r:.60}")
    return name, tuple(functions.values())


def merge_map_p(name: str, key_fn: Callable[[Any], Any], value_fn: Callable[[Any], Any],
                merge_fn: Callable[[Any, Any], Any]) -> MapUpdatingSink:
    """Jet's ``mergeMapP``: put ``value_fn(item)`` under ``key_fn(item)`` in the engine's map ``name``, or
    ``merge_fn(old, value)`` when the key is present (``None`` removes the key)."""
    name, fns = _checked("merge_map_p", name, key_fn=key_fn, value_fn=value_fn, merge_fn=merge_fn)
    return MapUpdatingSink("merging", name, fns)


def update_map_p(name: str, key_fn: Callable[[Any], Any],
                 update_fn: Callable[[Any, Any], Any]) -> MapUpdatingSink:
    """Jet's ``updateMapP``: put ``update_fn(old_value_or_None, item)`` under ``key_fn(item)`` in the engine's
    map ``name`` (``None`` removes the key)."""
    name, fns = _checked("update_map_p", name, key_fn=key_fn, update_fn=update_fn)
    return MapUpdatingSink("updating", name, fns)


def update_map_with_entry_processor_p(name: str, key_fn: Callable[[Any], Any],
                                      processor_fn: Callable[[Any], Any]) -> MapUpdatingSink:
    """Jet's ``updateMapP`` with an entry processor: ``processor_fn(item).process(entry)`` on the entry of
    ``key_fn(item)`` in the engine's map ``name`` (:class:`MapEntry`)."""
    name, fns = _checked("update_map_with_entry_processor_p", name, key_fn=key_fn, processor_fn=processor_fn)
    return MapUpdatingSink("entry_processor", name, fns)
