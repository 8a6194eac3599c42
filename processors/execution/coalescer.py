"""``WatermarkCoalescer``: Jet's rule for merging the watermarks of several inputs into one (engine-free).

The pipelined runtime keeps one coalescer per inbound edge of a processor over the edge's queues (one queue per
upstream sender) and the :class:`~processors.execution.tasklet.ProcessorTasklet` one over the processor's inbound edges
(``jet-streaming.md`` section 7). Inputs are numbered ``0..n-1``.

- ``observe_wm(i, ts)``: input ``i`` reached ``ts`` (``IDLE`` = ``2**63 - 1`` marks it idle). A value not
  strictly above the input's previous one is an error (a repeated or decreasing watermark, any watermark after
  the input is done); a repeated ``IDLE`` is legal.
- ``observe_event(i)``: an item arrived on ``i``: an idle input counts again.
- ``queue_done(i)``: input ``i`` ended (twice is an error); ``is_done(i)`` tells whether it did.
- ``check_history(now_ns)``: with ``max_watermark_retain_ms``, a top watermark seen at least that long ago is
  forwarded even while other inputs lag; also releases an ``IDLE`` that waited behind a forwarded top watermark.

Each returns the watermark to forward or ``None``. The forwarded value is the minimum over non-idle, not-done
inputs, strictly increasing; when every input is idle or done the top watermark is forwarded, then ``IDLE``
once (if some input is not done).

>>> c = WatermarkCoalescer(2)
>>> c.observe_wm(0, 100), c.observe_wm(1, 101), c.observe_wm(0, 101)
(None, 100, 101)
"""

from __future__ import annotations

import time
from collections import deque

__all__ = ["WatermarkCoalescer", "IDLE", "MIN_WM"]

IDLE = 2**63 - 1
"""The idle message's timestamp (Java's ``Long.MAX_VALUE``)."""
MIN_WM = -(2**63)
"""No watermark yet (Java's ``Long.MIN_VALUE``)."""
_HISTORY_SAMPLES = 16


class _TimestampHistory:
    """The top watermark sampled over time: ``sample(now, top)`` returns the top of at least ``retain_ns`` ago."""

    def __init__(self, retain_ns: int):
        self.step = max(1, retain_ns // _HISTORY_SAMPLES)
        self.retain_ns = retain_ns
        self.samples: deque[tuple[int, int]] = deque()

    def sample(self, now: int, top: int) -> int:
        if not self.samples or now - self.samples[-1][0] >= self.step:
            self.samples.append((now, top))
        else:
            self.samples[-1] = (self.samples[-1][0], top)
        result = MIN_WM
        while self.samples and now - self.samples[0][0] >= self.retain_ns:
            result = self.samples.popleft()[1]
        return result


class WatermarkCoalescer:
    """Coalesces the watermarks of ``n`` inputs (see the module docstring)."""

    __slots__ = ("_q", "_idle", "_last", "_top", "_all_idle", "_idle_pending", "_history", "_done")

    def __init__(self, n: int, max_watermark_retain_ms: int | None = None):
        self._q = [MIN_WM] * n
        self._idle = [False] * n
        self._done = [False] * n
        self._last = MIN_WM
        self._top = MIN_WM
        self._all_idle = False
        self._idle_pending = False
        retain = max_watermark_retain_ms
        self._history = _TimestampHistory(retain * 10**6) if retain is not None and retain >= 0 and n > 1 else None

    def observe_event(self, i: int) -> None:
        if self._idle[i]:
            self._idle[i] = False
            self._all_idle = False

    def observe_wm(self, i: int, ts: int, now_ns: int | None = None) -> int | None:
        if ts == IDLE and self._idle[i]:
            return None  # duplicate idle messages are legal
        if self._q[i] >= ts:
            raise ValueError(
                f"Watermarks not monotonically increasing on input {i}: last one={self._q[i]}, new one={ts}"
                + (" (the input is already done)" if self._done[i] else "")
            )
        if ts == IDLE:
            self._idle[i] = True
            return self._check()
        self._idle[i] = False
        self._all_idle = False
        self._q[i] = ts
        if ts > self._top:
            self._top = ts
            if self._history is not None:
                self._history.sample(time.monotonic_ns() if now_ns is None else now_ns, ts)
        return self._check()

    def queue_done(self, i: int) -> int | None:
        if self._done[i]:
            raise ValueError(f"Duplicate DONE call for input {i}")
        self._done[i] = True
        self._q[i] = IDLE
        self._idle[i] = False
        return self._check()

    def is_done(self, i: int) -> bool:
        """True once ``queue_done(i)`` was called."""
        return self._done[i]

    def check_history(self, now_ns: int | None = None) -> int | None:
        if self._idle_pending:
            self._idle_pending = False
            return IDLE
        if self._history is None:
            return None
        h = self._history.sample(time.monotonic_ns() if now_ns is None else now_ns, self._top)
        if h > self._last:
            self._last = h
            return h
        return None

    def _check(self) -> int | None:
        if self._all_idle:
            return None
        m = IDLE
        not_done = 0
        for v, idle in zip(self._q, self._idle):
            if v < IDLE:
                not_done += 1
            if not idle and v < m:
                m = v
        if m == IDLE:
            self._all_idle = True
            if self._top > self._last:
                self._idle_pending = not_done > 0
                self._last = self._top
                return self._top
            return IDLE if not_done else None
        if m > self._last:
            self._last = m
            return m
        return None
