"""Window definitions and window items: ``SlidingWindowPolicy``, ``TimestampKind``, ``TimestampedEntry``,
``WindowResult`` and the time constants (Jet's ``SlidingWindowPolicy``, ``TimestampKind``, ``TimestampedEntry``,
``WindowResult``); ``BroadcastKey`` (``processors.api.snapshot_keys``) is re-exported for the window processors.

Time is an int. ``MIN_WATERMARK`` (``-2**63``, Java's ``Long.MIN_VALUE``) means "no watermark yet";
``MAX_TIMESTAMP`` (``2**63 - 1``) is the idle message's value. Python ints never overflow, so the frame
arithmetic clamps into ``[MIN_WATERMARK, MAX_TIMESTAMP]`` where Java's would wrap.

Frames: a sliding window policy cuts time into *frames* of ``frame_size`` (the slide step), each labelled by
its **exclusive end**: the frame timestamps are ``frame_offset + k * frame_size`` and frame ``F`` covers
``[F - frame_size, F)``; an event at ``t`` belongs to frame ``higher_frame_ts(t)``. A window labelled ``E``
covers ``[E - window_size, E)``, i.e. the ``window_size // frame_size`` frames ending at ``E``.

>>> policy = sliding_win_policy(4, 2)
>>> policy.floor_frame_ts(5), policy.higher_frame_ts(5), policy.is_tumbling()
(4, 6, False)
>>> tumbling_win_policy(4).with_offset(2).floor_frame_ts(-1)
-2
"""

from __future__ import annotations

import enum
from operator import itemgetter
from typing import Any, Iterator

from jetspark_base.errors import DagValidationError
from processors.api.snapshot_keys import BroadcastKey, broadcast_key  # re-exported with the window items

__all__ = [
    "MIN_WATERMARK", "MAX_TIMESTAMP", "SlidingWindowPolicy", "sliding_win_policy", "tumbling_win_policy",
    "TimestampKind", "TimestampedEntry", "WindowResult", "BroadcastKey", "broadcast_key",
]

MIN_WATERMARK = -(2**63)
MAX_TIMESTAMP = 2**63 - 1


def _check_int(value: Any, argument: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DagValidationError(f"{where}: {argument} must be an int, got {type(value).__name__} {value!r}")
    return value


class SlidingWindowPolicy:
    """A sliding (or tumbling) window definition: ``frame_size``, ``frame_offset``, ``window_size``.

    Make it with :func:`sliding_win_policy` or :func:`tumbling_win_policy`; immutable, equal by its three
    numbers.
    """

    __slots__ = ("_frame_size", "_frame_offset", "_window_size")

    def __init__(self, frame_size: int, frame_offset: int, frames_per_window: int):
        where = "SlidingWindowPolicy"
        _check_int(frame_size, "frame_size", where)
        _check_int(frame_offset, "offset", where)
        _check_int(frames_per_window, "frames_per_window", where)
        if frame_size <= 0:
            raise DagValidationError(f"{where}: frame_size (the slide) must be >= 1, got {frame_size}")
        if not 0 <= frame_offset < frame_size:
            raise DagValidationError(
                f"{where}: offset must be >= 0 and less than the frame size {frame_size}, got {frame_offset}; "
                "the offset is the lowest non-negative frame timestamp, use offset % frame_size"
            )
        if frames_per_window <= 0:
            raise DagValidationError(f"{where}: frames_per_window must be >= 1, got {frames_per_window}")
        self._frame_size = frame_size
        self._frame_offset = frame_offset
        self._window_size = frame_size * frames_per_window

    @property
    def frame_size(self) -> int:
        """The length of a frame, i.e. the slide step."""
        return self._frame_size

    @property
    def frame_offset(self) -> int:
        """The lowest non-negative frame timestamp (0 unless set with :meth:`with_offset`)."""
        return self._frame_offset

    @property
    def window_size(self) -> int:
        """The length of a window (a multiple of ``frame_size``)."""
        return self._window_size

    def is_tumbling(self) -> bool:
        """True when a window is exactly one frame (windows do not overlap)."""
        return self._window_size == self._frame_size

    def floor_frame_ts(self, timestamp: int) -> int:
        """The highest frame timestamp ``<= timestamp`` (``MIN_WATERMARK`` if there is none).

        >>> sliding_win_policy(8, 4).floor_frame_ts(-1)
        -4
        """
        return max(MIN_WATERMARK, timestamp - (timestamp - self._frame_offset) % self._frame_size)

    def higher_frame_ts(self, timestamp: int) -> int:
        """The lowest frame timestamp ``> timestamp`` (``MAX_TIMESTAMP`` if there is none): the frame, labelled by
        its exclusive end, of an event at ``timestamp``.

        >>> sliding_win_policy(8, 4).higher_frame_ts(4)
        8
        """
        size = self._frame_size
        return min(MAX_TIMESTAMP, timestamp - (timestamp - self._frame_offset) % size + size)

    def with_offset(self, offset: int) -> "SlidingWindowPolicy":
        """The same policy with frames shifted so that ``offset`` is the lowest non-negative frame timestamp
        (``0 <= offset < frame_size``).

        >>> tumbling_win_policy(4).with_offset(2).higher_frame_ts(0)
        2
        """
        _check_int(offset, "offset", "with_offset()")
        if not 0 <= offset < self._frame_size:
            raise DagValidationError(
                f"with_offset(offset={offset}): offset must be >= 0 and less than the frame size (slide_by) "
                f"{self._frame_size}; use offset % {self._frame_size}"
            )
        return SlidingWindowPolicy(self._frame_size, offset, self._window_size // self._frame_size)

    def to_tumbling_by_frame(self) -> "SlidingWindowPolicy":
        """A tumbling policy whose windows are this policy's frames (stage 1 of two-stage aggregation)."""
        return SlidingWindowPolicy(self._frame_size, self._frame_offset, 1)

    def describe(self) -> str:
        """A short text for plans and DOT labels, e.g. ``sliding window 1000 by 100``."""
        offset = f", offset {self._frame_offset}" if self._frame_offset else ""
        if self.is_tumbling():
            return f"tumbling window {self._window_size}{offset}"
        return f"sliding window {self._window_size} by {self._frame_size}{offset}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SlidingWindowPolicy) and (
            (self._frame_size, self._frame_offset, self._window_size)
            == (other._frame_size, other._frame_offset, other._window_size)
        )

    def __hash__(self) -> int:
        return hash((self._frame_size, self._frame_offset, self._window_size))

    def __repr__(self) -> str:
        return (f"SlidingWindowPolicy(frame_size={self._frame_size}, frame_offset={self._frame_offset}, "
                f"window_size={self._window_size})")

    def __reduce__(self):
        return (SlidingWindowPolicy, (self._frame_size, self._frame_offset, self._window_size // self._frame_size))


def sliding_win_policy(window_size: int, slide_by: int) -> SlidingWindowPolicy:
    """Windows of ``window_size`` sliding by ``slide_by`` (``window_size`` a positive multiple of ``slide_by``).

    >>> p = sliding_win_policy(1000, 100)
    >>> p.window_size, p.frame_size, p.frame_offset
    (1000, 100, 0)
    """
    where = f"sliding_win_policy(window_size={window_size!r}, slide_by={slide_by!r})"
    _check_int(window_size, "window_size", where)
    _check_int(slide_by, "slide_by", where)
    if window_size < 1:
        raise DagValidationError(f"{where}: window_size must be >= 1, got {window_size}")
    if slide_by < 1:
        raise DagValidationError(f"{where}: slide_by must be >= 1, got {slide_by}")
    if window_size % slide_by:
        lower = window_size - window_size % slide_by
        raise DagValidationError(
            f"{where}: window_size must be an integer multiple of slide_by; "
            f"use e.g. window_size={lower or slide_by} or window_size={lower + slide_by}"
        )
    return SlidingWindowPolicy(slide_by, 0, window_size // slide_by)


def tumbling_win_policy(window_size: int) -> SlidingWindowPolicy:
    """Adjacent, non-overlapping windows of ``window_size`` (``sliding_win_policy(window_size, window_size)``).

    >>> tumbling_win_policy(4).higher_frame_ts(-1)
    0
    """
    where = f"tumbling_win_policy(window_size={window_size!r})"
    _check_int(window_size, "window_size", where)
    if window_size < 1:
        raise DagValidationError(f"{where}: window_size must be >= 1, got {window_size}")
    return SlidingWindowPolicy(window_size, 0, 1)


class TimestampKind(enum.Enum):
    """What a windowing processor's timestamp function returns: an ``EVENT`` time (the frame is
    ``higher_frame_ts(ts)``) or a ``FRAME`` timestamp (``higher_frame_ts(ts - 1)``: an aligned frame end maps to
    itself, an unaligned one is rounded up)."""

    EVENT = "EVENT"
    FRAME = "FRAME"


class _StampedEntry(tuple):
    """An entry ``(key, value)`` with extra attributes (``_fields``, in the instance dict): index 0 is the key and
    index 1 the value, so ``entry_key``/``entry_value`` and ``key, value = e`` work; equality and hash include the
    extra attributes; the constructor takes the extra attributes first, then key and value."""

    _fields: tuple[str, ...] = ()

    @property
    def key(self) -> Any:
        return self[0]

    @property
    def value(self) -> Any:
        return self[1]

    def _extras(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        return (other.__class__ is self.__class__ and tuple.__eq__(self, other)
                and self._extras() == other._extras())  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((*self._extras(), self[0], self[1]))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(v) for v in (*self._extras(), self[0], self[1]))})"

    def __reduce__(self):
        return (type(self), (*self._extras(), self[0], self[1]))

    def __copy__(self) -> "_StampedEntry":
        return self

    def __deepcopy__(self, memo: dict) -> "_StampedEntry":
        import copy

        return type(self)(*self._extras(), copy.deepcopy(self[0], memo), copy.deepcopy(self[1], memo))


class TimestampedEntry(tuple):
    """An entry ``(key, value)`` stamped with a ``timestamp`` (a window or frame end).

    Index 0 is the key and index 1 the value, so ``entry_key``/``entry_value`` work; ``len()`` is 2 and
    iteration (``key, value = e``, ``tuple(e)``, ``dict([e])``) gives the key and the value; equality and hash
    include the timestamp. The object is the tuple ``(key, value, timestamp)`` underneath (one allocation, no
    instance dict: the windowing processors make one per frame and key and per window and key), so ``e[2]`` and
    slices show the timestamp too.

    >>> e = TimestampedEntry(10, "k", 3)
    >>> e.timestamp, e.key, e.value, e[0], len(e), tuple(e), e == TimestampedEntry(11, "k", 3)
    (10, 'k', 3, 'k', 2, ('k', 3), False)
    """

    __slots__ = ()
    is_early = False  # a final result (the Pipeline API's early ones: pipeline.window_aggregate.EarlyTimestampedEntry)

    def __new__(cls, timestamp: int, key: Any, value: Any) -> "TimestampedEntry":
        return tuple.__new__(cls, (key, value, timestamp))

    timestamp = property(itemgetter(2), doc="The timestamp (a window's or frame's end).")
    key = property(itemgetter(0), doc="The key (index 0).")
    value = property(itemgetter(1), doc="The value (index 1).")

    def __len__(self) -> int:
        return 2

    def __iter__(self) -> Iterator[Any]:
        return iter((self[0], self[1]))

    def __contains__(self, item: object) -> bool:
        return item in (self[0], self[1])

    @staticmethod
    def from_window_result(start: int, end: int, key: Any, value: Any) -> "TimestampedEntry":
        """The entry stamped with the window's ``end`` (the default output of the sliding window processors)."""
        return tuple.__new__(TimestampedEntry, (key, value, end))

    def __eq__(self, other: object) -> bool:
        return other.__class__ is TimestampedEntry and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return tuple.__hash__(self)

    def __repr__(self) -> str:
        return f"TimestampedEntry({self[2]!r}, {self[0]!r}, {self[1]!r})"

    def __reduce__(self):
        return (TimestampedEntry, (self[2], self[0], self[1]))

    def __copy__(self) -> "TimestampedEntry":
        return self

    def __deepcopy__(self, memo: dict) -> "TimestampedEntry":
        import copy

        return TimestampedEntry(self[2], copy.deepcopy(self[0], memo), copy.deepcopy(self[1], memo))


class WindowResult(_StampedEntry):
    """The result of a window: the entry ``(key, value)`` with the window's ``start`` and ``end``.

    >>> r = WindowResult(1, 22, "a", 3)
    >>> r.start, r.end, r.key, r.value, r[1]
    (1, 22, 'a', 3, 3)
    """

    _fields = ("start", "end")
    is_early = False  # a final result (the Pipeline API's early ones: pipeline.window_aggregate.EarlyWindowResult)

    def __new__(cls, start: int, end: int, key: Any, value: Any) -> "WindowResult":
        self = tuple.__new__(cls, (key, value))
        self.start = start
        self.end = end
        return self
