"""Watermark policies and watermark emission policies (Jet 0.7.1's ``WatermarkPolicies`` and
``WatermarkEmissionPolicy``; manual section 8.5).

A *watermark policy* turns the event timestamps of one substream (a source partition) into a watermark:
``report_event(ts)`` returns the watermark that should be (or have been) emitted before the event (a value
above ``ts`` means the event is late) and ``get_current_watermark()`` is polled when no event comes (time-based
policies advance there). Every factory here returns a zero-argument callable making a fresh policy, so each
partition gets its own:

======================================================  =====================================================
``limiting_lag(lag)``                                    highest timestamp - ``lag``
``limiting_lag_and_delay(lag, max_delay_ms)``            as above, but a timestamp seen ``max_delay_ms`` ago
                                                         (monotonic clock, 16 samples) is reached anyway
``limiting_lag_and_lull(lag, max_lull_ms)``              as ``limiting_lag``; after ``max_lull_ms`` without
                                                         events the watermark advances with the clock
``limiting_timestamp_and_wall_clock_lag(ts_lag, wc_lag)`` max(highest timestamp - ``ts_lag``,
                                                         wall clock - ``wc_lag``)
======================================================  =====================================================

The watermark never decreases and never goes below ``MIN_WATERMARK``; Python ints do not wrap, so the
arithmetic is exact where Java's would overflow. Time comes from :mod:`processors.api.clock` at each call.

An *emission policy* decides which watermark values are worth emitting: ``throttle_wm(current, last_emitted)``
returns the value to emit, and the caller emits only a value above ``last_emitted``.

>>> policy = limiting_lag(10)()
>>> policy.report_event(100), policy.report_event(95), policy.get_current_watermark()
(90, 90, 90)
>>> emit_by_min_step(5).throttle_wm(93, 90)
90
"""

from __future__ import annotations

from typing import Any, Callable

from jetspark_base.errors import DagValidationError
from processors.api import clock
from processors.windowing.definitions import MIN_WATERMARK, SlidingWindowPolicy

__all__ = [
    "WatermarkPolicy", "limiting_lag", "limiting_lag_and_delay", "limiting_lag_and_lull",
    "limiting_timestamp_and_wall_clock_lag", "TimestampHistory", "WatermarkEmissionPolicy", "no_throttling",
    "emit_by_min_step", "emit_by_frame", "never_emit",
]


def _check_non_negative(factory: str, **values: Any) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise DagValidationError(f"{factory}: {name} must be an int (milliseconds), got {value!r}")
        if value < 0:
            raise DagValidationError(f"{factory}: {name} must not be negative, got {value}")


def _millis() -> int:
    return clock.nanos() // 1_000_000


class WatermarkPolicy:
    """Base of the policies: ``wm`` starts at ``MIN_WATERMARK`` and only grows (``_at_least``)."""

    __slots__ = ("wm",)

    def __init__(self) -> None:
        self.wm = MIN_WATERMARK

    def _at_least(self, proposed: int) -> int:
        if proposed > self.wm:
            self.wm = proposed
        return self.wm

    def report_event(self, timestamp: int) -> int:
        """Take an event's timestamp; return the watermark that should precede the event."""
        raise NotImplementedError

    def get_current_watermark(self) -> int:
        """The watermark now, with no new event."""
        return self.wm

    def __repr__(self) -> str:
        return f"{type(self).__name__}(wm={self.wm})"


class _LimitingLag(WatermarkPolicy):
    __slots__ = ("lag",)

    def __init__(self, lag: int):
        super().__init__()
        self.lag = lag

    def report_event(self, timestamp: int) -> int:
        if timestamp < MIN_WATERMARK + self.lag:  # Jet's overflow guard: such an event leaves wm untouched
            return MIN_WATERMARK
        return self._at_least(timestamp - self.lag)


def limiting_lag(lag: int) -> Callable[[], WatermarkPolicy]:
    """The watermark trails the highest timestamp seen by ``lag``.

    >>> p = limiting_lag(3)(); [p.report_event(t) for t in (10, 8, 14)]
    [7, 7, 11]
    """
    _check_non_negative(f"limiting_lag(lag={lag!r})", lag=lag)
    return _Factory(_LimitingLag, (lag,), f"limiting_lag({lag})")


class TimestampHistory:
    """The value some observed quantity had about ``max_delay`` ago, sampled ``num_samples`` times per
    ``max_delay`` (Jet's ``TimestampHistory``); units are the caller's (nanoseconds for the policies).

    >>> h = TimestampHistory(4, 2)
    >>> [h.sample(t, 10 * t) for t in range(7)][3:]
    [-9223372036854775808, 10, 10, 30]
    """

    __slots__ = ("_samples", "_interval", "_tail", "_advance_at")

    def __init__(self, max_delay: int, num_samples: int = 16):
        if num_samples < 1:
            raise DagValidationError(f"TimestampHistory: num_samples must be at least one, got {num_samples}")
        self._interval = max_delay // num_samples
        if self._interval <= 0:
            raise DagValidationError(
                f"TimestampHistory: max_delay ({max_delay}) must be at least as much as num_samples ({num_samples})"
            )
        self._samples = [MIN_WATERMARK] * (num_samples + 1)
        self._tail = 0
        self._advance_at = MIN_WATERMARK

    def sample(self, now: int, value: int) -> int:
        """Record ``value`` as current at ``now``; return the value current about ``max_delay`` before ``now``."""
        samples = self._samples
        slots = len(samples)
        steps = 0
        while self._advance_at <= now and steps < slots:
            new_tail = (self._tail + 1) % slots
            samples[new_tail] = samples[self._tail]
            self._tail = new_tail
            self._advance_at += self._interval
            steps += 1
        if steps == slots:
            self._advance_at = now + self._interval
        samples[self._tail] = value
        return samples[(self._tail + 1) % slots]


class _LimitingLagAndDelay(WatermarkPolicy):
    __slots__ = ("lag", "top", "history")

    def __init__(self, lag: int, max_delay_ns: int, num_samples: int = 16):
        super().__init__()
        self.lag = lag
        self.top = MIN_WATERMARK
        self.history = TimestampHistory(max_delay_ns, num_samples)

    def _apply(self, proposed: int) -> int:
        return self._at_least(max(proposed, self.history.sample(clock.nanos(), self.top)))

    def report_event(self, timestamp: int) -> int:
        if timestamp > self.top:
            self.top = timestamp
        return self._apply(timestamp - self.lag)

    def get_current_watermark(self) -> int:
        return self._apply(self.wm)


def limiting_lag_and_delay(lag: int, max_delay_ms: int) -> Callable[[], WatermarkPolicy]:
    """As :func:`limiting_lag`, and the watermark reaches any timestamp at most about ``max_delay_ms`` (monotonic
    clock) after it was observed, even if nothing newer arrives.

    >>> limiting_lag_and_delay(2, 1000)().report_event(10)
    8
    """
    _check_non_negative(f"limiting_lag_and_delay(lag={lag!r}, max_delay_ms={max_delay_ms!r})", lag=lag,
                        max_delay_ms=max_delay_ms)
    if max_delay_ms == 0:
        raise DagValidationError(
            f"limiting_lag_and_delay(lag={lag}, max_delay_ms=0): max_delay_ms must be >= 1 "
            "(use limiting_lag(lag) for no delay bound)"
        )
    return _Factory(_LimitingLagAndDelay, (lag, max_delay_ms * 1_000_000),
                    f"limiting_lag_and_delay({lag}, {max_delay_ms})")


class _LimitingLagAndLull(WatermarkPolicy):
    __slots__ = ("lag", "max_lull_ms", "max_lull_at")

    def __init__(self, lag: int, max_lull_ms: int):
        super().__init__()
        self.lag = lag
        self.max_lull_ms = max_lull_ms
        self.max_lull_at = MIN_WATERMARK

    def report_event(self, timestamp: int) -> int:
        self.max_lull_at = _millis() + self.max_lull_ms
        return self._at_least(timestamp - self.lag)

    def get_current_watermark(self) -> int:
        now = _millis()
        if self.max_lull_at == MIN_WATERMARK:
            self.max_lull_at = now + self.max_lull_ms
        past = max(0, now - self.max_lull_at)
        self.max_lull_at += past
        if self.wm == MIN_WATERMARK:  # never saw an event: stays at MIN forever (manual 8.5.1)
            return MIN_WATERMARK
        self.wm += past
        return self.wm


def limiting_lag_and_lull(lag: int, max_lull_ms: int) -> Callable[[], WatermarkPolicy]:
    """As :func:`limiting_lag`; after ``max_lull_ms`` without events the watermark advances with the monotonic
    clock (1 ms per ms), so windows close even when the stream pauses.

    >>> limiting_lag_and_lull(2, 3)().report_event(10)
    8
    """
    _check_non_negative(f"limiting_lag_and_lull(lag={lag!r}, max_lull_ms={max_lull_ms!r})", lag=lag,
                        max_lull_ms=max_lull_ms)
    return _Factory(_LimitingLagAndLull, (lag, max_lull_ms), f"limiting_lag_and_lull({lag}, {max_lull_ms})")


class _LimitingTimestampAndWallClockLag(WatermarkPolicy):
    __slots__ = ("timestamp_lag", "wall_clock_lag")

    def __init__(self, timestamp_lag: int, wall_clock_lag: int):
        super().__init__()
        self.timestamp_lag = timestamp_lag
        self.wall_clock_lag = wall_clock_lag

    def report_event(self, timestamp: int) -> int:
        wm = self._at_least(clock.wall_millis() - self.wall_clock_lag)
        if timestamp > MIN_WATERMARK + self.timestamp_lag:
            wm = self._at_least(timestamp - self.timestamp_lag)
        return wm

    def get_current_watermark(self) -> int:
        return self._at_least(clock.wall_millis() - self.wall_clock_lag)


def limiting_timestamp_and_wall_clock_lag(timestamp_lag: int, wall_clock_lag: int) -> Callable[[], WatermarkPolicy]:
    """The higher of "highest timestamp - ``timestamp_lag``" and "wall clock (ms) - ``wall_clock_lag``": for
    timestamps that are wall-clock times of the events.

    >>> limiting_timestamp_and_wall_clock_lag(3, 10**15)().report_event(10)
    7
    """
    _check_non_negative(
        f"limiting_timestamp_and_wall_clock_lag(timestamp_lag={timestamp_lag!r}, wall_clock_lag={wall_clock_lag!r})",
        timestamp_lag=timestamp_lag, wall_clock_lag=wall_clock_lag,
    )
    return _Factory(_LimitingTimestampAndWallClockLag, (timestamp_lag, wall_clock_lag),
                    f"limiting_timestamp_and_wall_clock_lag({timestamp_lag}, {wall_clock_lag})")


class _Factory:
    """A picklable zero-argument factory of fresh policies, with a readable ``repr``."""

    __slots__ = ("_cls", "_args", "_text")

    def __init__(self, cls: type, args: tuple, text: str):
        self._cls, self._args, self._text = cls, args, text

    def __call__(self) -> WatermarkPolicy:
        return self._cls(*self._args)

    def __repr__(self) -> str:
        return self._text

    def __reduce__(self):
        return (_Factory, (self._cls, self._args, self._text))


# ---------------------------------------------------------------------------------------------------------------
# Emission policies
# ---------------------------------------------------------------------------------------------------------------


class WatermarkEmissionPolicy:
    """Which watermark to emit: ``throttle_wm(current_wm, last_emitted_wm)`` (emit only if above the last)."""

    __slots__ = ("_kind", "_arg")

    def __init__(self, kind: str, arg: Any = None):
        self._kind, self._arg = kind, arg

    def throttle_wm(self, current_wm: int, last_emitted_wm: int) -> int:
        """The watermark to emit given the current one; the caller emits it only if ``> last_emitted_wm``."""
        kind = self._kind
        if kind == "no_throttling":
            return current_wm
        if kind == "min_step":
            return current_wm if last_emitted_wm + self._arg <= current_wm else last_emitted_wm
        if kind == "frame":
            return max(self._arg.floor_frame_ts(current_wm), last_emitted_wm)
        return last_emitted_wm  # never

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WatermarkEmissionPolicy) and (self._kind, self._arg) == (other._kind, other._arg)

    def __hash__(self) -> int:
        return hash((self._kind, self._arg))

    def __repr__(self) -> str:
        if self._kind == "min_step":
            return f"emit_by_min_step({self._arg})"
        if self._kind == "frame":
            return f"emit_by_frame({self._arg!r})"
        return f"{self._kind}()"

    def __reduce__(self):
        return (WatermarkEmissionPolicy, (self._kind, self._arg))


def no_throttling() -> WatermarkEmissionPolicy:
    """Emit every watermark increase.

    >>> no_throttling().throttle_wm(7, 5)
    7
    """
    return WatermarkEmissionPolicy("no_throttling")


def never_emit() -> WatermarkEmissionPolicy:
    """Never emit (the emission half of ``no_watermarks()``)."""
    return WatermarkEmissionPolicy("never")


def emit_by_min_step(min_step: int) -> WatermarkEmissionPolicy:
    """Emit a watermark only when it is at least ``min_step`` above the last one emitted.

    >>> emit_by_min_step(2).throttle_wm(3, 2), emit_by_min_step(2).throttle_wm(4, 2)
    (2, 4)
    """
    if isinstance(min_step, bool) or not isinstance(min_step, int) or min_step <= 0:
        raise DagValidationError(f"emit_by_min_step(min_step={min_step!r}): min_step must be an int > 0")
    return WatermarkEmissionPolicy("min_step", min_step)


def emit_by_frame(win_policy: SlidingWindowPolicy) -> WatermarkEmissionPolicy:
    """Emit one watermark per frame of ``win_policy``, at the frame boundary (what a sliding window needs).

    >>> from processors.windowing.definitions import tumbling_win_policy
    >>> emit_by_frame(tumbling_win_policy(3)).throttle_wm(5, -10)
    3
    """
    if not isinstance(win_policy, SlidingWindowPolicy):
        raise DagValidationError(
            f"emit_by_frame(win_policy={win_policy!r}): win_policy must be a SlidingWindowPolicy, "
            "e.g. sliding_win_policy(1000, 100)"
        )
    return WatermarkEmissionPolicy("frame", win_policy)
