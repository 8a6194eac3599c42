"""Early window results (Jet's ``WindowDefinition.setEarlyResultsPeriod``): a window that is still open emits
its current result every ``period_ms`` of wall time, before the watermark closes it.

A window's final result comes when the watermark passes its end; a long window (an hour's totals) then says
nothing for an hour. With an early-results period, :class:`EarlyResultsSlidingWindowP` (a single-stage
``SlidingWindowP``, as Jet switches to single-stage aggregation for early results: the open frames must all be
in one processor) checks the wall clock whenever it has no input (``try_process``) and, once the period passed,
emits ``early_output_fn(start, end, key, export(acc))`` for every window holding at least one frame that is not
complete yet, computed from the frames without changing them (``export``, not ``finish``: the window goes on).
:class:`EarlyResultsSessionWindowP` does the same for session windows: every session still open, per key.
The final results are unchanged. Early outputs still being offered when a watermark, the end of the input or a
snapshot comes are offered first, so an early result never follows its window's final one.

``early_output_fn`` is what marks a result early (the pipeline's defaults make objects whose ``is_early`` is
True, see ``pipeline.window_aggregate``).

>>> from processors import counting
>>> from processors.windowing.definitions import TimestampKind, tumbling_win_policy
>>> p = EarlyResultsSlidingWindowP((len,), (len,), TimestampKind.EVENT, tumbling_win_policy(10), counting(),
...                                None, True, None, 100, lambda s, e, k, r: (s, e, k, r))
>>> p.frames = {10: {"a": 2}, 20: {"b": 1}}; p._early_results()
[(0, 10, 'a', 2), (10, 20, 'b', 1)]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from processors.windowing.session_window import SessionWindowP
from processors.windowing.sliding_window import SlidingWindowP
from processors.windowing.definitions import MIN_WATERMARK

__all__ = ["EarlyResultsSlidingWindowP", "EarlyResultsSessionWindowP", "early_sliding_window_p",
           "early_session_window_p"]


class _EarlyResults:
    """The early-results behaviour shared by the sliding and the session window processors; the processor class
    implements ``_early_results()`` (the outputs of its open windows)."""

    _outbox: Any

    def _init_early(self, period_ms: int, early_output_fn: Callable[[int, int, Any, Any], Any]) -> None:
        self._period = period_ms / 1000
        self._early_output_fn = early_output_fn
        self._next_early = time.monotonic() + self._period
        self._early: list | None = None  # early outputs being offered, from position _early_pos
        self._early_pos = 0

    def try_process(self) -> bool:
        if not self._offer_early():
            return False
        now = time.monotonic()
        if now >= self._next_early:
            self._next_early = now + self._period
            self._early, self._early_pos = self._early_results(), 0
            return self._offer_early()
        return True

    def try_process_watermark(self, watermark: Any) -> bool:
        return self._offer_early() and super().try_process_watermark(watermark)  # type: ignore[misc]

    def complete(self) -> bool:
        return self._offer_early() and super().complete()  # type: ignore[misc]

    def save_to_snapshot(self) -> bool:
        return self._offer_early() and super().save_to_snapshot()  # type: ignore[misc]

    def _offer_early(self) -> bool:
        """Offer the pending early outputs; True once none is left."""
        if self._early is None:
            return True
        self._early_pos = self._outbox.offer_many(self._early, self._early_pos, no_none=True)
        if self._early_pos < len(self._early):
            return False
        self._early = None
        return True

    def _early_results(self) -> list:
        raise NotImplementedError


class EarlyResultsSlidingWindowP(_EarlyResults, SlidingWindowP):
    """``SlidingWindowP`` (single stage) that also emits early results (see the module docstring)."""

    def __init__(self, key_fns: tuple, timestamp_fns: tuple, timestamp_kind: Any, win_policy: Any, aggr_op: Any,
                 map_to_output_fn: Callable, is_last_stage: bool, fast_path: str | None, period_ms: int,
                 early_output_fn: Callable[[int, int, Any, Any], Any]):
        super().__init__(key_fns, timestamp_fns, timestamp_kind, win_policy, aggr_op, map_to_output_fn,
                         is_last_stage, fast_path)
        self._init_early(period_ms, early_output_fn)

    def _early_results(self) -> list:
        """The outputs of every open window holding a frame, in window order (the frames stay as they are)."""
        frames = self.frames
        if not frames:
            return []
        policy, export = self._policy, self._op.export_fn
        size, window_size = policy.frame_size, policy.window_size
        first = min(frames) if self.next_win_to_emit == MIN_WATERMARK else max(self.next_win_to_emit, min(frames))
        out = []
        for end in range(first, max(frames) + window_size - size + 1, size):
            window = frames.get(end, {}) if policy.is_tumbling() else self._recompute_window(end)
            for key, acc in window.items():
                result = self._early_output_fn(end - window_size, end, key, export(acc))
                if result is not None:
                    out.append(result)
        return out


class EarlyResultsSessionWindowP(_EarlyResults, SessionWindowP):
    """``SessionWindowP`` that also emits the sessions still open as early results."""

    def __init__(self, session_timeout: int, timestamp_fns: tuple, key_fns: tuple, aggr_op: Any,
                 map_to_output_fn: Callable, period_ms: int, early_output_fn: Callable[[int, int, Any, Any], Any]):
        super().__init__(session_timeout, timestamp_fns, key_fns, aggr_op, map_to_output_fn)
        self._init_early(period_ms, early_output_fn)

    def _early_results(self) -> list:
        """Every open session's output, key by key, in start order (the sessions stay as they are)."""
        export, out = self._op.export_fn, []
        for key, sessions in self.windows.items():
            for start, end, acc in sessions:
                result = self._early_output_fn(start, end, key, export(acc))
                if result is not None:
                    out.append(result)
        return out


def _checked_period(factory: str, period_ms: Any) -> int:
    if isinstance(period_ms, bool) or not isinstance(period_ms, int) or period_ms < 1:
        raise DagValidationError(f"{factory}: period_ms must be an int >= 1, got {period_ms!r}")
    return period_ms


def early_session_window_p(session_timeout: int, timestamp_fns: Any, key_fns: Any, aggr_op: Any,
                           map_to_output_fn: Callable[[int, int, Any, Any], Any], period_ms: int,
                           early_output_fn: Callable[[int, int, Any, Any], Any]) -> Any:
    """``aggregate_to_session_window_p`` that also emits ``early_output_fn(start, end, key, result)`` for the
    open sessions every ``period_ms`` ms of wall time."""
    from processors.windowing.session_window import aggregate_to_session_window_p
    from processors.windowing.base import WindowingSupplier

    plain = aggregate_to_session_window_p(session_timeout, timestamp_fns, key_fns, aggr_op, map_to_output_fn)
    period = _checked_period("early_session_window_p", period_ms)
    return WindowingSupplier(EarlyResultsSessionWindowP, *plain.args, period, early_output_fn,
                             name=f"early_session_window_p({session_timeout}, early every {period} ms)",
                             description=f"{plain.description}, early results every {period} ms")


def early_sliding_window_p(key_fns: Any, timestamp_fns: Any, win_policy: Any, aggr_op: Any,
                           map_to_output_fn: Callable[[int, int, Any, Any], Any], period_ms: int,
                           early_output_fn: Callable[[int, int, Any, Any], Any]) -> Any:
    """``aggregate_to_sliding_window_p`` (event timestamps) that also emits ``early_output_fn(start, end, key,
    result)`` for the open windows every ``period_ms`` ms of wall time (see the module docstring)."""
    from processors.windowing.sliding_window import _check_policy, _fast_path, _keyed_args, _names
    from processors.windowing.base import WindowingSupplier
    from processors.windowing.definitions import TimestampKind

    factory = "early_sliding_window_p"
    keys, stamps = _keyed_args(factory, key_fns, timestamp_fns, aggr_op)
    _check_policy(factory, win_policy, aggr_op)
    _checked_period(factory, period_ms)
    if not win_policy.is_tumbling() and aggr_op.combine_fn is None:
        raise DagValidationError(f"{factory}: {aggr_op!r} has no combine_fn, so the early result of a sliding "
                                 "window cannot combine its frames; give the operation a combine_fn")
    return WindowingSupplier(EarlyResultsSlidingWindowP, keys, stamps, TimestampKind.EVENT, win_policy, aggr_op,
                             map_to_output_fn, True, _fast_path(aggr_op, False), period_ms, early_output_fn,
                             name=f"{factory}([{_names(keys)}], {win_policy.describe()}, early every {period_ms} ms)",
                             description=f"{win_policy.describe()}, early results every {period_ms} ms")
