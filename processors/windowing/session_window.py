"""Session windows (Jet's ``SessionWindowP``): ``aggregate_to_session_window_p``.

A session of a key is a run of its events where each is less than ``session_timeout`` after the previous one.
Each event at ``ts`` covers the closed interval ``[ts, ts + session_timeout]``; a key's windows are kept sorted
and disjoint, and an event that overlaps (or touches) a window extends it, one that bridges two windows merges
them (``combine_fn``). A window ``(start, end)`` has ``start`` = its earliest event and ``end`` = its latest event
+ ``session_timeout``; it closes when the watermark passes ``end`` (``wm > end``) and is emitted as
``map_to_output_fn(start, end, key, finish(acc))`` (``WindowResult`` by default; ``None`` skipped).

- Item on ordinal ``o``: ``ts = timestamp_fns[o](item)``; below the current watermark it is late and dropped
  (``late_events_dropped``), else accumulated with ``accumulate_fns[o]`` into the window of
  ``key_fns[o](item)``.
- Watermark ``wm``: for each deadline (window end) below ``wm`` in ascending order, each key with that deadline
  emits all its windows that end below ``wm``, in start order; then the watermark is forwarded.
- ``complete()``: closes every window (as a watermark of ``MAX_TIMESTAMP`` would), without a watermark.
- Snapshots: one entry per key, ``key -> [(start, end, acc), ...]`` (partitioned by the key), then
  ``broadcast_key("CURRENT_WATERMARK")``; restore keeps the lowest watermark (exactly-once: all equal).

>>> from processors import Watermark, counting, entry_key, entry_value, verify_processor
>>> p = aggregate_to_session_window_p(10, entry_value, entry_key, counting())
>>> verify_processor(p).input([("a", 1), ("a", 6), ("a", 30), Watermark(25)]).expect_output(
...     [WindowResult(1, 16, "a", 2), Watermark(25), WindowResult(30, 40, "a", 1)])
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, Iterator

from jetspark_base.errors import DagValidationError, ProcessorContractError
from processors.aggregate.operation import AggregateOperation
from processors.windowing.event_time import check_timestamp
from processors.api.inbox import Inbox
from processors.library.stateless import check_callable, fn_name
from processors.windowing.base import (MAX_RESTORED, WindowingProcessor, WindowingSupplier, check_fns, check_op,
                                    raise_diagnosed)
from processors.windowing.definitions import MAX_TIMESTAMP, MIN_WATERMARK, WindowResult, broadcast_key

__all__ = ["aggregate_to_session_window_p", "SessionWindowP"]

CURRENT_WATERMARK = broadcast_key("CURRENT_WATERMARK")


class SessionWindowP(WindowingProcessor):
    """The processor of :func:`aggregate_to_session_window_p` (see the module docstring)."""

    _position_key = CURRENT_WATERMARK

    def __init__(self, session_timeout: int, timestamp_fns: tuple, key_fns: tuple, aggr_op: AggregateOperation,
                 map_to_output_fn: Callable[[int, int, Any, Any], Any]):
        super().__init__()
        self._timeout = session_timeout
        self._timestamp_fns = timestamp_fns
        self._key_fns = key_fns
        self._op = aggr_op
        self._map_to_output_fn = map_to_output_fn
        self.windows: dict[Any, list[list]] = {}  # key -> [[start, end, acc], ...] sorted, disjoint
        self.deadlines: dict[int, set] = {}  # window end -> keys with a window ending there
        self._deadline_heap: list[int] = []
        self.current_watermark = MIN_WATERMARK
        self.late_events_dropped = 0
        self._closing: Iterator | None = None
        self._pending_wm: Any = None

    # ------------------------------------------------------------------ items
    def process(self, ordinal: int, inbox: Inbox) -> None:
        ts_fn, key_fn = self._timestamp_fns[ordinal], self._key_fns[ordinal]
        accumulate = self._op.accumulate_fns[ordinal]
        items = inbox._items if type(inbox) is Inbox else list(inbox)
        item = None
        try:
            for item in items:
                ts = ts_fn(item)
                if ts.__class__ is not int:
                    ts = check_timestamp(ts, self._owner, f"timestamp_fns[{ordinal}]", item)
                if ts < self.current_watermark:
                    self.late_events_dropped += 1
                    continue
                window = self._window_for(key_fn(item), ts)
                window[2] = accumulate(window[2], item)
        except Exception as exc:
            raise_diagnosed(self._owner, ordinal, item, [("timestamp_fns", ts_fn), ("key_fns", key_fn)], exc)
        inbox.clear()

    def _window_for(self, key: Any, ts: int) -> list:
        """The window ``[start, end, acc]`` of ``key`` the event at ``ts`` belongs to, extended, merged or new."""
        event_end = ts + self._timeout
        wins = self.windows.get(key)
        if wins is None:
            wins = self.windows[key] = []
        i, n = 0, len(wins)
        while i < n and wins[i][0] <= event_end:
            window = wins[i]
            if window[1] < ts:  # ends before the event
                i += 1
                continue
            if window[0] <= ts and window[1] >= event_end:  # covers the event
                return window
            if i == n - 1 or wins[i + 1][0] > event_end:  # overlaps only this window: extend it
                window[0] = min(window[0], ts)
                if window[1] < event_end:
                    self._move_deadline(key, window[1], event_end)
                    window[1] = event_end
                return window
            following = wins.pop(i + 1)  # the event bridges two windows: merge them
            self._drop_deadline(key, window[1])
            window[1] = following[1]
            window[2] = self._op.combine_fn(window[2], following[2])
            return window
        window = [ts, event_end, self._op.create()]
        wins.insert(i, window)
        self._add_deadline(key, event_end)
        return window

    def _add_deadline(self, key: Any, end: int) -> None:
        keys = self.deadlines.get(end)
        if keys is None:
            keys = self.deadlines[end] = set()
            heapq.heappush(self._deadline_heap, end)
        keys.add(key)

    def _drop_deadline(self, key: Any, end: int) -> None:
        keys = self.deadlines.get(end)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self.deadlines[end]  # its heap entry is skipped when popped

    def _move_deadline(self, key: Any, old: int, new: int) -> None:
        self._drop_deadline(key, old)
        self._add_deadline(key, new)

    # ------------------------------------------------------------------ closing windows
    def try_process_watermark(self, watermark: Any) -> bool:
        if self._pending_wm is None:
            self._check_watermark(watermark.timestamp)
            self.current_watermark = watermark.timestamp
            self._pending_wm = watermark
            self._closing = self._close_windows(watermark.timestamp)
        if self._closing is not None:
            if not self.emit_from_traverser(self._closing):
                return False
            self._closing = None
        if not self.try_emit(watermark):
            return False
        self._pending_wm = None
        return True

    def _close_windows(self, wm: int) -> Iterator[Any]:
        heap, deadlines, windows = self._deadline_heap, self.deadlines, self.windows
        map_to_output, finish = self._map_to_output_fn, self._op.finish_fn
        while heap and heap[0] < wm:
            keys = deadlines.pop(heapq.heappop(heap), None)
            for key in keys or ():
                wins = windows.get(key)
                while wins and wins[0][1] < wm:
                    start, end, acc = wins.pop(0)
                    out = map_to_output(start, end, key, finish(acc))
                    if out is not None:
                        yield out
                if wins is not None and not wins:
                    del windows[key]

    def complete(self) -> bool:
        if self._closing is None:
            if not self.windows:
                return True
            self._closing = self._close_windows(MAX_TIMESTAMP)
        if not self.emit_from_traverser(self._closing):
            return False
        self._closing = None
        return True

    # ------------------------------------------------------------------ snapshots
    def save_to_snapshot(self) -> bool:
        if self._closing is not None and not self.complete():  # a flush by complete() in progress: finish it
            return False
        return self._emit_snapshot()

    def _snapshot_entries(self) -> Iterator[tuple]:
        for key, wins in list(self.windows.items()):
            yield key, [tuple(window) for window in wins]
        yield CURRENT_WATERMARK, self.current_watermark

    def _restore_keyed(self, key: Any, value: Any) -> None:
        if key in self.windows:
            raise ProcessorContractError(f"{self._owner}: Duplicate key in snapshot: {key!r}")
        self.windows[key] = [list(window) for window in value]

    def finish_snapshot_restore(self) -> bool:
        for key, wins in self.windows.items():
            for window in wins:
                self._add_deadline(key, window[1])
        if self._min_restored != MAX_RESTORED:
            self.current_watermark = self._min_restored
        return True


def aggregate_to_session_window_p(session_timeout: int, timestamp_fns: Any, key_fns: Any,
                                  aggr_op: AggregateOperation,
                                  map_to_output_fn: Callable[[int, int, Any, Any], Any] = WindowResult
                                  ) -> WindowingSupplier:
    """Session windows per key (see the module docstring): one timestamp and one key function per inbound
    ordinal, ``aggr_op`` of that arity with a ``combine_fn`` (to merge sessions that an event bridges).
    """
    factory = "aggregate_to_session_window_p"
    if isinstance(session_timeout, bool) or not isinstance(session_timeout, int) or session_timeout < 1:
        raise DagValidationError(f"{factory}: session_timeout must be an int >= 1, got {session_timeout!r}")
    stamps = check_fns(factory, "timestamp_fns", timestamp_fns)
    keys = check_fns(factory, "key_fns", key_fns)
    if len(stamps) != len(keys):
        raise DagValidationError(
            f"{factory}: {len(keys)} key function(s) but {len(stamps)} timestamp function(s); give one of each per "
            "inbound ordinal"
        )
    check_op(factory, aggr_op, len(keys))
    if aggr_op.combine_fn is None:
        raise DagValidationError(
            f"{factory}: {aggr_op!r} has no combine_fn, which session windows need to merge sessions; give it one"
        )
    check_callable(factory, "map_to_output_fn", map_to_output_fn)
    description = f"session window, timeout {session_timeout}"
    return WindowingSupplier(SessionWindowP, session_timeout, stamps, keys, aggr_op, map_to_output_fn,
                             name=f"{factory}({session_timeout}, [{', '.join(fn_name(f) for f in keys)}], "
                                  f"{aggr_op.name or aggr_op!r})",
                             description=description)
