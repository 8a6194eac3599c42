"""Whole-batch helpers of the sliding-window processors (``processors.windowing.sliding_window``), run in CPython's C
code (``map``, ``starmap``, ``sorted``, ``min``/``max``, ``bisect``, ``collections._count_elements``) instead of a
Python loop per item, with the per-item loop's results in the same order:

- :func:`frame_runs` cuts a batch into runs of consecutive items of one frame: the whole batch when its lowest and
  highest timestamps share a frame (in order, as a sort finds in one pass, its first and last ones; else ``min``
  and ``max``), else (timestamps in order) one ``bisect`` per frame; ``None`` when a batch in no order spans
  frames (the caller takes the per-item loop);
- :func:`count_into` counts keys into a frame (``counting()`` in stage 1 or in the single stage);
- :func:`stamped_chunks` makes a window's ``TimestampedEntry`` outputs a chunk at a time.

Callers check that every timestamp is an ``int`` (:func:`all_ints`) before they rely on ``frame_runs``, so that
a timestamp of another type still reaches the per-item loop and its error. Folding stage 1's entries into stage
2's frames and patching the running window stay Python loops: C-level passes over a batch measured no faster
there, since each pass looks every key up again in a large dict, where the loop's get and set of one key in a row
find its slot in the cache.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import _count_elements  # type: ignore[attr-defined]  # the C loop behind Counter.update
from itertools import islice, repeat, starmap
from operator import le
from typing import Iterator

from processors.windowing.definitions import TimestampedEntry

__all__ = ["all_ints", "frame_runs", "count_into", "stamped_chunks"]

_INT_ONLY = {int}
_new_tuple = tuple.__new__


def all_ints(values: list) -> bool:
    """True when every value is exactly an ``int`` (not a bool, float or subclass)."""
    return set(map(type, values)) == _INT_ONLY


def frame_runs(timestamps: list, size: int, shift: int, offset: int) -> list[tuple[int, int, int]] | None:
    """``[(frame_ts, start, stop)]``: ``timestamps[start:stop]`` all belong to ``frame_ts``, runs in input order
    and covering the list; ``None`` when the timestamps span several frames and are not in order.

    The frame of ``ts`` is ``higher_frame_ts(ts - shift)`` (``shift`` 1 for ``TimestampKind.FRAME``), unclamped.

    >>> frame_runs([0, 1, 4, 5, 9], 4, 0, 0)
    [(4, 0, 2), (8, 2, 4), (12, 4, 5)]
    >>> frame_runs([5, 0], 4, 0, 0) is None, frame_runs([1, 0], 4, 0, 0)
    (True, [(4, 0, 2)])
    """
    base, lift = shift + offset, size - shift
    # in order, told by sorting (one C-level pass over sorted ints, cheaper than min + max) unless the first items
    # already show that they are not (a batch in no order is not sorted)
    ordered = all(map(le, timestamps[:8], timestamps[1:9])) and sorted(timestamps) == timestamps
    lo, hi = (timestamps[0], timestamps[-1]) if ordered else (min(timestamps), max(timestamps))
    first = lo - (lo - base) % size + lift
    if first == hi - (hi - base) % size + lift:
        return [(first, 0, len(timestamps))]
    if not ordered:
        return None
    runs, start, n = [], 0, len(timestamps)
    while start < n:
        ts = timestamps[start]
        frame_ts = ts - (ts - base) % size + lift
        stop = bisect_left(timestamps, frame_ts + shift, start)  # the first item of a later frame
        runs.append((frame_ts, start, stop))
        start = stop
    return runs


def count_into(frame: dict, keys: list) -> None:
    """``frame[key] += 1`` (from 0) for every key, in order."""
    _count_elements(frame, keys)


def stamped_chunks(end: int, window: dict, chunk: int) -> Iterator[list]:
    """The window's ``TimestampedEntry(end, key, acc)`` outputs, ``chunk`` at a time (made lazily, so that few are
    alive at once; ``window`` must not change meanwhile)."""
    # tuple.__new__(TimestampedEntry, (key, acc, end)) per entry; starmap hands it each argument tuple as it is
    # (map would build one per call)
    entries = starmap(_new_tuple, zip(repeat(TimestampedEntry), zip(window, window.values(), repeat(end))))
    while True:
        out = list(islice(entries, chunk))
        if not out:
            return
        yield out
        if len(out) < chunk:
            return

