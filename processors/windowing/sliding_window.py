"""Sliding and tumbling windows (Jet's ``SlidingWindowP``): ``aggregate_to_sliding_window_p`` (single stage),
``accumulate_by_frame_p`` (stage 1) and ``combine_to_sliding_window_p`` (stage 2).

State: ``frames: {frame_ts: {key: acc}}``, ``next_win_to_emit`` (end of the next window to emit, ``MIN_WATERMARK``
until a watermark acted), ``top_ts`` (highest frame seen) and, for a sliding policy whose operation has a
``deduct_fn``, ``sliding_window: {key: acc}`` (the last window, patched frame by frame).

- Item on ordinal ``o``: ``f`` = its frame (``EVENT``: ``higher_frame_ts(ts)``, ``FRAME``: ``higher_frame_ts(ts - 1)``);
  if ``f < next_win_to_emit`` the item is late and dropped (counted in ``late_events_dropped``), otherwise it is
  accumulated into ``frames[f][key_fns[o](item)]`` with ``accumulate_fns[o]``.
- Watermark ``wm``: windows ``E = start, start + frame_size, ... <= wm`` are emitted in ascending order, each as
  ``map_to_output_fn(E - window_size, E, key, result)`` per key (``None`` skipped), where ``start`` is
  ``next_win_to_emit`` or, at the first watermark, ``min(lowest frame, floor_frame_ts(wm))``. A window is the
  frame ``E`` (tumbling), the recomputed combination of its frames (no ``deduct_fn``), or the sliding window
  patched with its leading frame (``deduct_fn``; the trailing frame is deducted when the window is done and a key
  whose accumulator equals a fresh one disappears). Each emitted window evicts its trailing frame. Then
  ``next_win_to_emit = higher_frame_ts(wm)`` and the watermark is forwarded. A lower watermark than the last
  one received is an error within one execution.
- ``complete()``: emits every window that holds a remaining frame (up to ``top_ts + window_size - frame_size``).
- Snapshots: the last stage saves ``SnapshotKey(frame_ts, key) -> acc`` per frame and key, then
  ``broadcast_key("NEXT_WIN_TO_EMIT")``; restore keeps the minimum position (exactly-once: all equal). Stage 1
  saves nothing: it flushes its frames downstream instead (stage 2 saves them).

Results of the recomputed and tumbling windows use ``finish_fn``; the persistent sliding window's use
``export_fn`` (the accumulator lives on).

Fast paths (same output, same order): ``entry_key``/``entry_value`` run as ``operator.itemgetter``; a key
function with a ``keys_of(items)`` method (the Pipeline API's ``CheckedKey``) gives a batch's keys in one call; with
``counting()`` or ``summing()`` (``AggregateOperation.fast_path``) accumulators are ints combined with ``+``/``-``
inline, ``counting()`` counts a whole inbox at once when its timestamps are ints (``processors.windowing.bulk``) and
stage 2 folds ``TimestampedEntry`` items without calls; the default ``TimestampedEntry.from_window_result``
outputs are made a chunk at a time without a call per result; a ``map_to_output_fn`` object with a
``window_outputs(start, end, pairs)`` method (the Pipeline API's) is called once per chunk of ``(key, result)``
pairs instead of once per key and returns the outputs, ``None`` outputs left out; one whose ``wrap_entries`` is
not None (the Pipeline API's around the default function) gets the default outputs a chunk at a time to wrap.

>>> from processors import Watermark, counting, entry_key, sliding_win_policy, TimestampKind, verify_processor
>>> p = aggregate_to_sliding_window_p([entry_key], [lambda e: e[1]], TimestampKind.EVENT,
...                                   sliding_win_policy(4, 2), counting())
>>> verify_processor(p).input([("a", 0), ("a", 3), Watermark(4)]).expect_output(
...     [TimestampedEntry(2, "a", 1), TimestampedEntry(4, "a", 2), Watermark(4), TimestampedEntry(6, "a", 1)])
"""

from __future__ import annotations

from itertools import islice
from operator import attrgetter, itemgetter
from typing import Any, Callable, Iterator, Sequence

from jetspark_base.errors import DagValidationError, ProcessorContractError
from processors.aggregate.operation import AggregateOperation, identity
from processors.windowing.event_time import check_timestamp
from processors.api.functions import c_level, entry_key, entry_value
from processors.api.inbox import Inbox
from processors.library.stateless import check_callable, fn_name
from processors.api.snapshot_keys import SnapshotKey
from processors.windowing.bulk import all_ints, count_into, frame_runs, stamped_chunks
from processors.windowing.base import (MAX_RESTORED, WindowingProcessor, WindowingSupplier, check_fns, check_op,
                                    raise_diagnosed)
from processors.windowing.definitions import (MAX_TIMESTAMP, MIN_WATERMARK, SlidingWindowPolicy, TimestampedEntry,
                                TimestampKind, broadcast_key)

__all__ = ["aggregate_to_sliding_window_p", "accumulate_by_frame_p", "combine_to_sliding_window_p", "SlidingWindowP"]

NEXT_WIN_TO_EMIT = broadcast_key("NEXT_WIN_TO_EMIT")
_CHUNK = 1024  # window outputs are made and offered this many at a time
_MISSING = object()


def _timestamp_of(item: Any) -> int:
    """The timestamp of a ``TimestampedEntry`` (stage 2's timestamp function)."""
    return item.timestamp


_TIMESTAMP_GETTER = attrgetter("timestamp")


def _c_level(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The library's item functions as their C-implemented ``operator`` equivalents (same results, cheaper calls)."""
    return _TIMESTAMP_GETTER if fn is _timestamp_of else c_level(fn)


class SlidingWindowP(WindowingProcessor):
    """The processor of the three sliding-window factories (see the module docstring)."""

    _position_key = NEXT_WIN_TO_EMIT

    def __init__(self, key_fns: tuple, timestamp_fns: tuple, timestamp_kind: TimestampKind,
                 win_policy: SlidingWindowPolicy, aggr_op: AggregateOperation,
                 map_to_output_fn: Callable[[int, int, Any, Any], Any], is_last_stage: bool,
                 fast_path: str | None = None):
        super().__init__()
        self._key_fns = tuple(_c_level(fn) for fn in key_fns)
        self._timestamp_fns = tuple(_c_level(fn) for fn in timestamp_fns)
        self._shift = 1 if timestamp_kind is TimestampKind.FRAME else 0
        self._policy = win_policy
        self._op = aggr_op
        self._accumulate_fns = aggr_op.accumulate_fns
        self._map_to_output_fn = map_to_output_fn
        self._is_last_stage = is_last_stage
        # "count" (acc + 1) or "add_value" (acc + item[1]): counting()/summing(), int accumulators from 0, combined
        # with + and deducted with -, so the loops inline them
        self._fast_path = fast_path
        self._uses_deduct = not win_policy.is_tumbling() and aggr_op.deduct_fn is not None
        self._empty_acc = aggr_op.create()
        self.frames: dict[int, dict] = {}
        self.sliding_window: dict | None = None
        self.next_win_to_emit = MIN_WATERMARK
        self.top_ts = MIN_WATERMARK
        self.late_events_dropped = 0
        self._window_iter: Iterator | None = None  # window output in progress (a watermark or a flush)
        self._window_out: list | None = None  # the window outputs being offered, from position _out_pos
        self._out_pos = 0
        self._pending_wm: Any = None  # the watermark to forward once its windows are out
        self._flushing = False

    # ------------------------------------------------------------------ items
    def process(self, ordinal: int, inbox: Inbox) -> None:
        if self._fast_path is not None and type(inbox) is Inbox:
            if self._fast_path == "add_value" and self._timestamp_fns[0] is _TIMESTAMP_GETTER:
                self._combine_numbers(inbox)
                return
            if self._fast_path == "count" and self._count_batch(ordinal, inbox._items):
                inbox.clear()
                return
        key_fn = self._key_fns[ordinal]
        ts_fn = self._timestamp_fns[ordinal]
        accumulate = self._accumulate_fns[ordinal]
        create = self._op.create_fn
        count_fast, add_fast = self._fast_path == "count", self._fast_path == "add_value"
        # frame of ts: higher_frame_ts(ts - shift) = ts - (ts - shift - offset) % size + size - shift
        size, shift = self._policy.frame_size, self._shift
        base, lift = shift + self._policy.frame_offset, size - shift
        next_win, top, late = self.next_win_to_emit, self.top_ts, 0
        items = inbox._items if type(inbox) is Inbox else list(inbox)
        item = frame = current_ts = None  # the frame of the previous item: consecutive items mostly share one
        try:
            for item in items:
                ts = ts_fn(item)
                if ts.__class__ is not int:
                    ts = check_timestamp(ts, self._owner, f"timestamp_fns[{ordinal}]", item)
                frame_ts = ts - (ts - base) % size + lift
                if frame_ts != current_ts:
                    current_ts = frame_ts
                    frame, top = self._frame_of(frame_ts, next_win, top)
                if frame is None:
                    late += 1
                    continue
                key = key_fn(item)
                if count_fast:
                    frame[key] = frame.get(key, 0) + 1
                elif add_fast:
                    frame[key] = frame.get(key, 0) + item[1]
                else:
                    acc = frame.get(key, _MISSING)
                    frame[key] = accumulate(create() if acc is _MISSING else acc, item)
        except Exception as exc:
            fns = [("timestamp_fns", ts_fn), ("key_fns", key_fn)]
            raise_diagnosed(self._owner, ordinal, item, fns, exc)
        finally:
            self.top_ts = top
            if late:
                self._count_late(late)
        inbox.clear()

    def _frame_of(self, frame_ts: int, next_win: int, top: int) -> tuple[dict | None, int]:
        """The frame ``frame_ts`` (created if new) and the new top frame; ``None`` if the frame is late."""
        if frame_ts < next_win:
            return None, top
        if frame_ts > MAX_TIMESTAMP:
            frame_ts = MAX_TIMESTAMP
        if frame_ts > top:
            top = frame_ts
        frame = self.frames.get(frame_ts)
        if frame is None:
            frame = self.frames[frame_ts] = {}
        return frame, top

    def _count_batch(self, ordinal: int, items: Any) -> bool:
        """``counting()``: count the whole batch with ``window_bulk``'s C-level loops; False when that is not
        possible for this batch (a function failed, a timestamp is not an int, frames out of order), and the
        per-item loop, which also names a failing function, must run instead."""
        try:
            stamps = list(map(self._timestamp_fns[ordinal], items))
            key_fn = self._key_fns[ordinal]
            keys_of = getattr(key_fn, "keys_of", None)  # a key function with a batch form (the pipeline's)
            keys = keys_of(items) if keys_of is not None else list(map(key_fn, items))
        except Exception:
            return False
        if not stamps or not all_ints(stamps):
            return False
        runs = frame_runs(stamps, self._policy.frame_size, self._shift, self._policy.frame_offset)
        if runs is None:
            return False
        next_win, top, late = self.next_win_to_emit, self.top_ts, 0
        try:
            for frame_ts, start, stop in runs:
                frame, top = self._frame_of(frame_ts, next_win, top)
                if frame is None:
                    late += stop - start
                else:
                    count_into(frame, keys if stop - start == len(keys) else keys[start:stop])
        finally:
            self.top_ts = top
            if late:
                self._count_late(late)
        return True

    def _combine_numbers(self, inbox: Inbox) -> None:
        """Stage 2 of counting()/summing(): the loop of ``process`` for ``TimestampedEntry`` items holding ints,
        with the key, timestamp and ``+`` inline (C-level passes over the batch measured no faster: the frame's
        dict accesses dominate, and one key's get and set in a row find its slot in the cache)."""
        size, offset = self._policy.frame_size, self._policy.frame_offset
        next_win, top, late = self.next_win_to_emit, self.top_ts, 0
        item = frame = current_ts = stamp = None
        try:
            for item in inbox._items:
                if item.__class__ is not TimestampedEntry:
                    raise TypeError(f"expected a TimestampedEntry (stage 1's output), got {type(item).__name__}")
                if item[2] != stamp:  # the timestamp of a TimestampedEntry: stage 1 emits a frame's entries in a row
                    stamp = item[2]
                    ts = stamp - 1  # TimestampKind.FRAME
                    frame_ts = ts - (ts - offset) % size + size
                    if frame_ts != current_ts:
                        current_ts = frame_ts
                        frame, top = self._frame_of(frame_ts, next_win, top)
                if frame is None:
                    late += 1
                    continue
                key = item[0]
                frame[key] = frame.get(key, 0) + item[1]
        except Exception as exc:
            fns = [("timestamp_fns", _TIMESTAMP_GETTER), ("key_fns", itemgetter(0))]
            raise_diagnosed(self._owner, 0, item, fns, exc)
        finally:
            self.top_ts = top
            if late:
                self._count_late(late)
        inbox.clear()

    def _count_late(self, count: int) -> None:
        self.late_events_dropped += count
        self.logger.debug("%s dropped %d late item(s) (frames before %d)", self._owner, count, self.next_win_to_emit)

    # ------------------------------------------------------------------ windows
    def try_process_watermark(self, watermark: Any) -> bool:
        if self._pending_wm is None:
            wm = watermark.timestamp
            self._check_watermark(wm)
            self._pending_wm = watermark
            start = self._range_start(wm)
            self._window_iter = None if start is None else self._windows(start, wm)
        if self._window_iter is not None and not self._emit_windows():
            return False
        self.next_win_to_emit = self._policy.higher_frame_ts(watermark.timestamp)
        if not self.try_emit(watermark):
            return False
        self._pending_wm = None
        return True

    def _range_start(self, wm: int) -> int | None:
        """Where the windows to emit start; ``None`` when there is nothing to emit."""
        if self.next_win_to_emit != MIN_WATERMARK:
            return self.next_win_to_emit
        if not self.frames:
            return None
        # the first window computed holds at most the lowest frame on record, so that the sliding window can
        # start from it and add leading / deduct trailing frames from then on
        return min(min(self.frames), self._policy.floor_frame_ts(wm))

    def _emit_windows(self) -> bool:
        """Offer the outputs of ``_window_iter`` window by window (a window is computed only when the previous
        one is out); True when all are out."""
        offer_many = self._outbox.offer_many
        while True:
            out = self._window_out
            if out is None:
                out = next(self._window_iter, None)
                if out is None:
                    self._window_iter = None
                    return True
                self._window_out, self._out_pos = out, 0
            self._out_pos = offer_many(out, self._out_pos, no_none=True)  # _windows drops None results
            if self._out_pos < len(out):
                return False
            self._window_out = None

    def _windows(self, start: int, last: int) -> Iterator[list]:
        """The output lists of windows ``start, start + frame_size, ... <= last``, evicting as they complete."""
        policy, frames = self._policy, self.frames
        size, window_size = policy.frame_size, policy.window_size
        map_to_output, finish, export = self._map_to_output_fn, self._op.finish_fn, self._op.export_fn
        plain_entries = map_to_output is TimestampedEntry.from_window_result
        window_outputs = getattr(map_to_output, "window_outputs", None)
        wrap = getattr(map_to_output, "wrap_entries", None)  # the Pipeline API's JetEvent around plain entries
        end = start
        while end <= last:
            if not self.sliding_window:  # skip windows that hold no frame: they emit nothing
                if not frames:
                    return
                lowest = min(frames)
                if lowest > end:
                    end = lowest
                    if end > last:
                        return
            window = self._compute_window(end)
            result_fn = export if window is self.sliding_window else finish
            entries_as_is = (plain_entries or wrap is not None) and result_fn is identity
            # outputs are made and offered in chunks, so that few are alive at a time
            if entries_as_is:
                if wrap is None:
                    yield from stamped_chunks(end, window, _CHUNK)
                else:
                    for entries in stamped_chunks(end, window, _CHUNK):
                        yield wrap(end, entries)
            else:
                pairs, begin = iter(window.items()), end - window_size
                chunk = list(islice(pairs, _CHUNK))
                while chunk:
                    if result_fn is not identity:
                        chunk = [(key, result_fn(acc)) for key, acc in chunk]
                    if window_outputs is not None:
                        out = window_outputs(begin, end, chunk)
                    else:
                        out = [o for o in (map_to_output(begin, end, key, result) for key, result in chunk)
                               if o is not None]
                    if out:
                        yield out
                    chunk = list(islice(pairs, _CHUNK))
            self._complete_window(end)
            end += size

    def _compute_window(self, end: int) -> dict:
        frames = self.frames
        if self._policy.is_tumbling():
            return frames.get(end, {})
        if not self._uses_deduct:
            return self._recompute_window(end)
        if self.sliding_window is None:
            self.sliding_window = self._recompute_window(end)
        else:
            self._patch(self._op.combine_fn, frames.get(end))
        return self.sliding_window

    def _recompute_window(self, end: int) -> dict:
        policy, frames, combine, create = self._policy, self.frames, self._op.combine_fn, self._op.create_fn
        window: dict = {}
        for frame_ts in range(end - policy.window_size + policy.frame_size, end + 1, policy.frame_size):
            for key, acc in frames.get(frame_ts, {}).items():
                current = window.get(key, _MISSING)
                window[key] = combine(create() if current is _MISSING else current, acc)
        return window

    def _patch(self, fn: Callable[[Any, Any], Any], frame: dict | None) -> None:
        if not frame:
            return
        window, create, empty = self.sliding_window, self._op.create_fn, self._empty_acc
        if self._fast_path is not None:  # int accumulators: + and - inline, 0 is empty
            get = window.get
            if fn is self._op.combine_fn:  # (one dict access after the other per key: faster than C-level passes)
                for key, acc in frame.items():
                    result = get(key, 0) + acc
                    if result:
                        window[key] = result
                    else:
                        window.pop(key, None)
            else:
                for key, acc in frame.items():
                    result = get(key, 0) - acc
                    if result:
                        window[key] = result
                    else:
                        window.pop(key, None)
            return
        for key, acc in frame.items():
            current = window.get(key, _MISSING)
            result = fn(create() if current is _MISSING else current, acc)
            if result == empty:
                window.pop(key, None)
            else:
                window[key] = result

    def _complete_window(self, end: int) -> None:
        policy = self._policy
        removed = self.frames.pop(end - policy.window_size + policy.frame_size, None)
        if removed is not None and self._uses_deduct and self.sliding_window is not None:
            self._patch(self._op.deduct_fn, removed)

    # ------------------------------------------------------------------ end of input and snapshots
    def complete(self) -> bool:
        return self._flush()

    def _flush(self) -> bool:
        """Emit every window holding a remaining frame; ``next_win_to_emit`` stays as it is."""
        if not self._flushing:
            if not self.frames:
                return True
            last = self.top_ts + self._policy.window_size - self._policy.frame_size
            self._window_iter = self._windows(self._range_start(last), last)
            self._flushing = True
        if not self._emit_windows():
            return False
        self._flushing = False
        return True

    def save_to_snapshot(self) -> bool:
        if not self._is_last_stage or self._flushing:
            return self._flush()  # stage 1 flushes its frames to stage 2 instead of saving them
        return self._emit_snapshot()

    def _snapshot_entries(self) -> Iterator[tuple]:
        for frame_ts, frame in list(self.frames.items()):
            for key, acc in list(frame.items()):
                yield SnapshotKey(frame_ts, key), acc
        yield NEXT_WIN_TO_EMIT, self.next_win_to_emit

    def _restore_keyed(self, key: Any, value: Any) -> None:
        if not isinstance(key, SnapshotKey):
            raise ProcessorContractError(f"{self._owner}: unexpected key in snapshot: {key!r}")
        frame = self.frames.setdefault(key.timestamp, {})
        if key.key in frame:
            raise ProcessorContractError(f"{self._owner}: Duplicate key in snapshot: {key!r}")
        frame[key.key] = value
        self.top_ts = max(self.top_ts, key.timestamp)

    def finish_snapshot_restore(self) -> bool:
        if self._is_last_stage and self._min_restored != MAX_RESTORED:
            self.next_win_to_emit = self._min_restored
        return True


# ---------------------------------------------------------------------------------------------------------------
# factories
# ---------------------------------------------------------------------------------------------------------------


def _fast_path(op: AggregateOperation, combining: bool) -> str | None:
    kind = op.fast_path[0] if op.fast_path else None
    if combining:
        return "add_value" if kind in ("counting", "summing") else None
    return "count" if kind == "counting" else None


def _check_policy(factory: str, win_policy: Any, op: AggregateOperation) -> SlidingWindowPolicy:
    if not isinstance(win_policy, SlidingWindowPolicy):
        raise DagValidationError(
            f"{factory}: win_policy must be a SlidingWindowPolicy (sliding_win_policy(size, slide) or "
            f"tumbling_win_policy(size)), got {win_policy!r:.80}"
        )
    if not win_policy.is_tumbling() and op.combine_fn is None:
        raise DagValidationError(
            f"{factory}: {op!r} has no combine_fn, which sliding windows need to combine frames into windows; give "
            "it a combine_fn or use a tumbling window"
        )
    return win_policy


def _check_kind(factory: str, kind: Any) -> TimestampKind:
    if not isinstance(kind, TimestampKind):
        raise DagValidationError(f"{factory}: timestamp_kind must be TimestampKind.EVENT or FRAME, got {kind!r}")
    return kind


def _keyed_args(factory: str, key_fns: Any, timestamp_fns: Any, aggr_op: Any) -> tuple[tuple, tuple]:
    keys = check_fns(factory, "key_fns", key_fns)
    stamps = check_fns(factory, "timestamp_fns", timestamp_fns)
    if len(stamps) != len(keys):
        raise DagValidationError(
            f"{factory}: {len(keys)} key function(s) but {len(stamps)} timestamp function(s); give one of each per "
            "inbound ordinal"
        )
    check_op(factory, aggr_op, len(keys))
    return keys, stamps


def _names(fns: Sequence[Callable]) -> str:
    return ", ".join(fn_name(f) for f in fns)


def aggregate_to_sliding_window_p(key_fns: Any, timestamp_fns: Any, timestamp_kind: TimestampKind,
                                  win_policy: SlidingWindowPolicy, aggr_op: AggregateOperation,
                                  map_to_output_fn: Callable[[int, int, Any, Any], Any] =
                                  TimestampedEntry.from_window_result) -> WindowingSupplier:
    """Single-stage sliding (or tumbling) window aggregation: groups by ``key_fns[o]``, puts items into frames by
    ``timestamp_fns[o]`` and emits ``map_to_output_fn(start, end, key, result)`` per key and window when the
    watermark passes the window's end (see the module docstring). One key and timestamp function per inbound
    ordinal; ``aggr_op`` has that arity.
    """
    factory = "aggregate_to_sliding_window_p"
    keys, stamps = _keyed_args(factory, key_fns, timestamp_fns, aggr_op)
    _check_kind(factory, timestamp_kind)
    _check_policy(factory, win_policy, aggr_op)
    check_callable(factory, "map_to_output_fn", map_to_output_fn)
    return WindowingSupplier(SlidingWindowP, keys, stamps, timestamp_kind, win_policy, aggr_op, map_to_output_fn,
                             True, _fast_path(aggr_op, False),
                             name=f"{factory}([{_names(keys)}], {win_policy.describe()}, {aggr_op.name or aggr_op!r})",
                             description=win_policy.describe())


def accumulate_by_frame_p(key_fns: Any, timestamp_fns: Any, timestamp_kind: TimestampKind,
                          win_policy: SlidingWindowPolicy, aggr_op: AggregateOperation) -> WindowingSupplier:
    """Stage 1 of two-stage window aggregation: accumulates items into the frames of ``win_policy`` (as a tumbling
    window of one frame) and emits ``TimestampedEntry(frame_end, key, accumulator)`` when the watermark passes
    the frame's end. Partition its input by key; send its output, partitioned by ``entry_key``, to
    ``combine_to_sliding_window_p``. Saves no snapshot state: it flushes its frames instead.
    """
    factory = "accumulate_by_frame_p"
    keys, stamps = _keyed_args(factory, key_fns, timestamp_fns, aggr_op)
    _check_kind(factory, timestamp_kind)
    _check_policy(factory, win_policy, aggr_op)
    by_frame = win_policy.to_tumbling_by_frame()
    return WindowingSupplier(SlidingWindowP, keys, stamps, timestamp_kind, by_frame, aggr_op.with_identity_finish(),
                             TimestampedEntry.from_window_result, False, _fast_path(aggr_op, False),
                             name=f"{factory}([{_names(keys)}], {win_policy.describe()}, {aggr_op.name or aggr_op!r})",
                             description=f"frames of {win_policy.describe()}")


def combine_to_sliding_window_p(win_policy: SlidingWindowPolicy, aggr_op: AggregateOperation,
                                map_to_output_fn: Callable[[int, int, Any, Any], Any] =
                                TimestampedEntry.from_window_result) -> WindowingSupplier:
    """Stage 2 of two-stage window aggregation: combines the ``TimestampedEntry(frame_end, key, accumulator)``
    items of ``accumulate_by_frame_p`` into frames and frames into windows, emitting
    ``map_to_output_fn(start, end, key, result)`` as ``aggregate_to_sliding_window_p`` does.
    """
    factory = "combine_to_sliding_window_p"
    check_op(factory, aggr_op)
    if aggr_op.combine_fn is None:
        raise DagValidationError(f"{factory}: {aggr_op!r} has no combine_fn, so it cannot combine frames")
    _check_policy(factory, win_policy, aggr_op)
    check_callable(factory, "map_to_output_fn", map_to_output_fn)
    combining = aggr_op.with_combining_accumulate_fn(entry_value)
    return WindowingSupplier(SlidingWindowP, (entry_key,), (_timestamp_of,), TimestampKind.FRAME, win_policy,
                             combining, map_to_output_fn, True, _fast_path(aggr_op, True),
                             name=f"{factory}({win_policy.describe()}, {aggr_op.name or aggr_op!r})",
                             description=win_policy.describe())
