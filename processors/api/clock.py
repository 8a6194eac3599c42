"""The one place event-time code reads the time from, so tests can drive it.

Watermark policies, idle timeouts and time-based watermark emission call :func:`nanos` (a monotonic clock in
nanoseconds, Java's ``System.nanoTime``) and :func:`wall_millis` (wall-clock milliseconds, Java's
``System.currentTimeMillis``) at the moment they need the time, never caching the clock object. Tests install a
:class:`ManualClock` with :func:`use_clock` and move it forward by hand.

>>> clock = ManualClock()
>>> with use_clock(clock):
...     clock.advance_ms(5)
...     nanos(), wall_millis()
(5000000, 5)
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Iterator

__all__ = ["SystemClock", "ManualClock", "use_clock", "current_clock", "nanos", "wall_millis"]


class SystemClock:
    """The real clocks: ``time.monotonic_ns()`` and ``time.time_ns() // 10**6``."""

    def nanos(self) -> int:
        return time.monotonic_ns()

    def wall_millis(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A clock that moves only when told to; the monotonic and the wall clock move together.

    >>> c = ManualClock(nanos=10, wall_millis=100)
    >>> c.advance_ns(2_000_000); c.nanos(), c.wall_millis()
    (2000010, 102)
    """

    def __init__(self, nanos: int = 0, wall_millis: int = 0):
        self._nanos = nanos
        self._wall_nanos = wall_millis * 1_000_000

    def nanos(self) -> int:
        return self._nanos

    def wall_millis(self) -> int:
        return self._wall_nanos // 1_000_000

    def advance_ns(self, ns: int) -> None:
        """Move both clocks forward by ``ns`` nanoseconds."""
        self._nanos += ns
        self._wall_nanos += ns

    def advance_ms(self, ms: int) -> None:
        """Move both clocks forward by ``ms`` milliseconds."""
        self.advance_ns(ms * 1_000_000)

    def set_nanos(self, value: int) -> None:
        """Set the monotonic clock (the wall clock moves by the same amount)."""
        self.advance_ns(value - self._nanos)

    def set_wall_millis(self, value: int) -> None:
        """Set the wall clock only."""
        self._wall_nanos = value * 1_000_000


_clock: Any = SystemClock()


def current_clock() -> Any:
    """The clock in use (a :class:`SystemClock` unless a test installed another)."""
    return _clock


@contextlib.contextmanager
def use_clock(clock: Any) -> Iterator[Any]:
    """Use ``clock`` (anything with ``nanos()`` and ``wall_millis()``) inside the ``with`` block."""
    global _clock
    previous, _clock = _clock, clock
    try:
        yield clock
    finally:
        _clock = previous


def nanos() -> int:
    """Monotonic time in nanoseconds from the clock in use."""
    return _clock.nanos()


def wall_millis() -> int:
    """Wall-clock time in milliseconds from the clock in use."""
    return _clock.wall_millis()
