"""Stateful mapping (Jet 4's ``map_stateful``, ``filter_stateful``, ``flat_map_stateful``): the processor.

A user function gets a *state object* next to each item and may change it: ``map_fn(state, item)`` (global)
or ``map_fn(state, key, item)`` (after ``grouping_key``). ``create_fn()`` makes a state the first time (per
key). Jet's lowering, kept here:

- global (``map-stateful-global``, ``flatmap-stateful-global``): one vertex of local parallelism 1 fed on a
  distributed all-to-one edge, so there is one state in the whole job;
- keyed (``map-stateful-keyed``, ``flatmap-stateful-keyed``): items are partitioned by key over all
  processors; each key has its state. On a stream stage with ``ttl``, a key's state is dropped once the
  watermark passes the key's last event time plus ``ttl``; ``on_evict_fn(state, key, watermark)`` is called
  then and a non-``None`` result is emitted (stamped with the watermark's time).

``filter_stateful`` is ``map_stateful`` keeping the item when the function returns true (Jet's own lowering:
vertex ``map-stateful-*``).

Snapshots save every state: a key's as ``SnapshotKey(last event time, key) -> state`` (restored on the
processor that owns the key, whatever the new parallelism), the global state under a broadcast key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipeline.events import JetEvent
from pipeline.internal import _Emitting, _iterate
from processors.api.snapshot_keys import BroadcastKey, SnapshotKey, broadcast_key
from processors.api.watermark import Watermark

__all__ = ["StatefulMapP"]

_GLOBAL = broadcast_key("stateful-global")
_NO_TIME = -(2 ** 63)


class StatefulMapP(_Emitting):
    """The processor of the stateful operations (see the module docstring).

    ``kind``: ``"map"``, ``"filter"`` or ``"flat_map"``; ``key_fn`` None: one global state; ``events``: items
    are ``JetEvent`` (outputs keep the input's timestamp); ``ttl``: milliseconds of event time a key's state
    outlives its last event (keyed stream stages only)."""

    def __init__(self, kind: str, create_fn: Callable[[], Any], fn: Callable[..., Any],
                 key_fn: Callable[[Any], Any] | None = None, ttl: int | None = None,
                 on_evict_fn: Callable[[Any, Any, int], Any] | None = None, events: bool = False,
                 stage: str = "map-stateful-keyed"):
        self.stage = stage
        self.kind = kind
        self.create_fn = create_fn
        self.fn = fn
        self.key_fn = key_fn
        self.ttl = ttl
        self.on_evict_fn = on_evict_fn
        self.events = events
        self._states: dict = {}  # key (None when global) -> state
        self._times: dict = {}  # key -> last event time (keyed stream stages)
        self._wm_pending: list | None = None
        self._wm_position = 0
        self._snapshot: list | None = None
        self._snapshot_position = 0

    # ------------------------------------------------------------------ items
    def outputs(self, ordinal: int, items: list) -> list:
        if self.kind == "map" and not self.events and self.key_fn is not None:
            return self._keyed_map(items)  # the common case in one tight loop
        out: list = []
        states, times, fn, key_fn, events = self._states, self._times, self.fn, self.key_fn, self.events
        for item in items:
            plain = item.item if events else item
            key = None if key_fn is None else self._key(plain)
            state = states.get(key, _MISSING)
            if state is _MISSING:
                state = states[key] = self.create_fn()
            if events and key_fn is not None:
                times[key] = max(times.get(key, _NO_TIME), item.timestamp)
            result = fn(state, plain) if key_fn is None else fn(state, key, plain)
            if self.kind == "filter":
                if result:
                    out.append(item)
                continue
            for value in [result] if self.kind == "map" else _iterate(result):
                if value is not None:
                    out.append(JetEvent(item.timestamp, value) if events else value)
        return out

    def _keyed_map(self, items: list) -> list:
        states, fn, key_fn, create_fn, out = self._states, self.fn, self.key_fn, self.create_fn, []
        for item in items:
            key = key_fn(item)
            state = states.get(key, _MISSING)
            if state is _MISSING:
                if key is None:
                    self._key(item)  # raises the null-key error
                state = states[key] = create_fn()
            result = fn(state, key, item)
            if result is not None:
                out.append(result)
        return out

    def _key(self, item: Any) -> Any:
        key = self.key_fn(item)
        if key is None:
            raise ValueError(f"Null key from the key function of stage '{self.stage}' for item {item!r:.100}; make "
                             "the function return a key for every item (filter out the items without one first)")
        return key

    # ------------------------------------------------------------------ watermarks: ttl eviction
    def try_process_watermark(self, watermark: Watermark) -> bool:
        if self._wm_pending is None:
            self._wm_pending, self._wm_position = self._evict(watermark.timestamp), 0
        self._wm_position = self._outbox.offer_many(self._wm_pending, self._wm_position)
        if self._wm_position < len(self._wm_pending) or not self._outbox.offer(watermark):
            return False
        self._wm_pending = None
        return True

    def _evict(self, watermark: int) -> list:
        if self.ttl is None or self.key_fn is None:
            return []
        expired = [key for key, last in self._times.items() if last + self.ttl < watermark]
        out = []
        for key in expired:
            del self._times[key]
            state = self._states.pop(key)
            if self.on_evict_fn is not None:
                result = self.on_evict_fn(state, key, watermark)
                results = _iterate(result) if self.kind == "flat_map" and result is not None else [result]
                out.extend(JetEvent(watermark, value) for value in results if value is not None)
        return out

    # ------------------------------------------------------------------ snapshots
    def save_to_snapshot(self) -> bool:
        if self._snapshot is None:
            if self.key_fn is None:
                self._snapshot = [(_GLOBAL, (state,)) for state in self._states.values()]
            else:
                self._snapshot = [(SnapshotKey(self._times.get(key, _NO_TIME), key), (state,))
                                  for key, state in self._states.items()]
            self._snapshot_position = 0
        offer, entries = self._outbox.offer_to_snapshot, self._snapshot
        while self._snapshot_position < len(entries):
            key, value = entries[self._snapshot_position]
            if not offer(key, value):
                return False
            self._snapshot_position += 1
        self._snapshot = None
        return True

    def restore_from_snapshot(self, inbox: Any) -> None:
        for key, value in inbox.take_all():
            if isinstance(key, BroadcastKey):
                self._states[None] = value[0]
            else:
                self._states[key.key] = value[0]
                if key.timestamp != _NO_TIME:
                    self._times[key.key] = key.timestamp


_MISSING = object()
