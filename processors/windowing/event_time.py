"""How a source (or ``insert_watermarks_p``) stamps items and emits watermarks: ``wm_gen_params`` /
``no_watermarks`` (Jet 0.7.1's ``WatermarkGenerationParams``) and :class:`EventTimeMapper` (Jet's
``WatermarkSourceUtil`` / ``EventTimeMapper``), the one object every watermark-emitting source uses.

A source reads one or more *partitions* (a journal partition, a socket, ...) and keeps one watermark policy per
partition. Its watermark is the **minimum over its active partitions**: a partition with no event for
``idle_timeout_ms`` (monotonic clock, :mod:`processors.api.clock`) is *idle* and no longer holds the watermark
back. When every partition is idle (or there are none), the source forwards the top watermark it observed and
then the idle message ``Watermark(MAX_TIMESTAMP)`` once; downstream then ignores this source when coalescing
until it emits again. Any event makes its partition active again.

Use (one mapper per processor; drain what a call returned before the next call)::

    mapper = EventTimeMapper(params, partition_count=len(my_partitions))
    out = mapper.handle_event(event, partition_index)   # [Watermark(x)]?, wrapped event
    out = mapper.handle_no_event()                       # [], [W(x)], [IDLE] or [W(x), IDLE]

Snapshots: save ``get_watermark(i)`` per partition (under ``broadcast_key(external partition)`` when partitions
can move between processors) and give it back with ``restore_watermark(i, wm)``: the partition's watermark
then never goes below the restored value and the next watermark emitted is above the lowest restored one
(Jet 4's rule; Jet 0.7.1 ignored restored values).

>>> from processors.windowing.watermark_policies import limiting_lag, no_throttling
>>> mapper = EventTimeMapper(wm_gen_params(lambda t: t, limiting_lag(3), no_throttling(), idle_timeout_ms=0), 1)
>>> mapper.handle_event(10, 0), mapper.handle_event(9, 0), mapper.handle_event(12, 0)
([Watermark(7), 10], [9], [Watermark(9), 12])
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field

from jetspark_base.errors import DagValidationError, ProcessorContractError
from processors.api import clock
from processors.api.watermark import Watermark
from processors.windowing.watermark_policies import WatermarkEmissionPolicy, WatermarkPolicy, never_emit, no_throttling
from processors.windowing.definitions import MAX_TIMESTAMP, MIN_WATERMARK

__all__ = ["WmGenParams", "wm_gen_params", "no_watermarks", "EventTimeMapper", "IDLE_MESSAGE", "check_timestamp",
           "DEFAULT_IDLE_TIMEOUT_MS"]

DEFAULT_IDLE_TIMEOUT_MS = 60_000
IDLE_MESSAGE = Watermark(MAX_TIMESTAMP)


class WmGenParams(BaseModel):
    """How to stamp items and generate watermarks; make it with :func:`wm_gen_params` or :func:`no_watermarks`."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    timestamp_fn: Callable[[Any], int] | None = Field(
        description="event -> int timestamp; None when the source supplies native timestamps itself.")
    new_wm_policy_fn: Callable[[], Any] = Field(
        description="Zero-argument factory of a fresh watermark policy, one per source partition.")
    wm_emit_policy: WatermarkEmissionPolicy = Field(description="Which watermark increases are emitted.")
    idle_timeout_ms: int = Field(
        DEFAULT_IDLE_TIMEOUT_MS, description="A partition without events for this long is idle; <= 0: never idle.")
    wrap_fn: Callable[[Any, int], Any] | None = Field(
        None, description="(event, timestamp) -> the item emitted; None emits the event itself.")

    def with_emit_policy(self, policy: WatermarkEmissionPolicy) -> "WmGenParams":
        """A copy with another emission policy."""
        return self.model_copy(update={"wm_emit_policy": policy})


def wm_gen_params(timestamp_fn: Callable[[Any], int], new_wm_policy_fn: Callable[[], Any],
                  wm_emit_policy: WatermarkEmissionPolicy, idle_timeout_ms: int = DEFAULT_IDLE_TIMEOUT_MS,
                  wrap_fn: Callable[[Any, int], Any] | None = None) -> WmGenParams:
    """Watermark generation parameters for a source or ``insert_watermarks_p``.

    Args:
        timestamp_fn: ``event -> int`` event timestamp.
        new_wm_policy_fn: a zero-argument factory of watermark policies, e.g. ``limiting_lag(1000)``.
        wm_emit_policy: e.g. ``no_throttling()`` or ``emit_by_frame(win_policy)``.
        idle_timeout_ms: after this long without events a partition is idle (``<= 0``: never).
        wrap_fn: ``(event, timestamp) -> item`` to emit instead of the event.

    >>> from processors.windowing.watermark_policies import limiting_lag, no_throttling
    >>> wm_gen_params(lambda e: e[0], limiting_lag(100), no_throttling()).idle_timeout_ms
    60000
    """
    for name, fn in (("timestamp_fn", timestamp_fn), ("new_wm_policy_fn", new_wm_policy_fn)):
        if not callable(fn):
            raise DagValidationError(f"wm_gen_params(): {name} must be callable, got {fn!r}")
    if not isinstance(wm_emit_policy, WatermarkEmissionPolicy):
        raise DagValidationError(
            f"wm_gen_params(): wm_emit_policy must be a WatermarkEmissionPolicy such as no_throttling(), "
            f"got {wm_emit_policy!r}"
        )
    if isinstance(idle_timeout_ms, bool) or not isinstance(idle_timeout_ms, int):
        raise DagValidationError(
            f"wm_gen_params(): idle_timeout_ms must be an int (milliseconds), got {idle_timeout_ms!r}")
    if wrap_fn is not None and not callable(wrap_fn):
        raise DagValidationError(f"wm_gen_params(): wrap_fn must be callable or None, got {wrap_fn!r}")
    return WmGenParams(timestamp_fn=timestamp_fn, new_wm_policy_fn=new_wm_policy_fn, wm_emit_policy=wm_emit_policy,
                       idle_timeout_ms=idle_timeout_ms, wrap_fn=wrap_fn)


class _NoWatermarkPolicy(WatermarkPolicy):
    __slots__ = ()

    def report_event(self, timestamp: int) -> int:
        return MIN_WATERMARK


def _min_timestamp(event: Any) -> int:
    return MIN_WATERMARK


def no_watermarks() -> WmGenParams:
    """Parameters that never produce a watermark (events are stamped ``MIN_WATERMARK``, no idle timeout).

    >>> no_watermarks().idle_timeout_ms
    -1
    """
    return WmGenParams(timestamp_fn=_min_timestamp, new_wm_policy_fn=_NoWatermarkPolicy, wm_emit_policy=never_emit(),
                       idle_timeout_ms=-1)


def check_timestamp(value: Any, owner: str, argument: str, item: Any) -> int:
    """``value`` as an int timestamp, or a ``ProcessorContractError`` naming ``owner``, ``argument`` and ``item``."""
    if value.__class__ is int:
        return value
    if not isinstance(value, bool):
        try:
            return operator.index(value)  # int subclasses, numpy integers
        except TypeError:
            pass
    raise ProcessorContractError(
        f"{owner}: {argument} returned {type(value).__name__} {value!r} for item {item!r}; a timestamp must be an "
        "int (e.g. milliseconds): convert it, e.g. int(seconds * 1000)"
    )


class EventTimeMapper:
    """Per-partition watermark tracking of one source processor (see the module docstring).

    ``owner`` names the processor in error messages.
    """

    def __init__(self, params: WmGenParams, partition_count: int = 0, owner: str = "source"):
        self._params = params
        self._timestamp_fn = params.timestamp_fn
        self._wrap_fn = params.wrap_fn
        self._emit_policy = params.wm_emit_policy
        self._idle_ns = params.idle_timeout_ms * 1_000_000 if params.idle_timeout_ms > 0 else 0
        self._owner = owner
        self._policies: list[Any] = []
        self._watermarks: list[int] = []
        self._mark_idle_at: list[int] = []
        self._last_emitted = MIN_WATERMARK
        self._top_observed = MIN_WATERMARK
        self._all_idle = False
        if partition_count:
            self.add_partitions(partition_count)

    @property
    def partition_count(self) -> int:
        return len(self._policies)

    @property
    def last_emitted_watermark(self) -> int:
        """The last watermark this mapper returned (``MIN_WATERMARK`` if none)."""
        return self._last_emitted

    def add_partitions(self, count: int) -> None:
        """Add ``count`` partitions (active, with fresh policies) after the existing ones."""
        if count < 0:
            raise DagValidationError(f"{self._owner}: add_partitions(count={count}): count must be >= 0")
        now = clock.nanos()
        for _ in range(count):
            self._policies.append(self._params.new_wm_policy_fn())
            self._watermarks.append(MIN_WATERMARK)
            self._mark_idle_at.append(now + self._idle_ns)

    def increase_partition_count(self, new_count: int) -> None:
        """Grow to ``new_count`` partitions (Jet 0.7.1's name); fewer than now is an error."""
        if new_count < self.partition_count:
            raise DagValidationError(
                f"{self._owner}: partition count must increase. Old count={self.partition_count}, new count={new_count}"
            )
        self.add_partitions(new_count - self.partition_count)

    def handle_event(self, event: Any, partition: int, timestamp: int | None = None) -> list:
        """The output for ``event`` of ``partition``: ``[Watermark(x)]?`` then the (wrapped) event.

        ``timestamp``: the event's native timestamp; ``None`` applies the params' ``timestamp_fn``.
        """
        if timestamp is None:
            if self._timestamp_fn is None:
                raise ProcessorContractError(f"{self._owner}: neither timestamp_fn nor a native timestamp given")
            timestamp = check_timestamp(self._timestamp_fn(event), self._owner, "timestamp_fn", event)
        self._policies[partition].report_event(timestamp)
        self._mark_idle_at[partition] = clock.nanos() + self._idle_ns
        self._all_idle = False
        out = self.handle_no_event()
        out.append(event if self._wrap_fn is None else self._wrap_fn(event, timestamp))
        return out

    def handle_no_event(self) -> list:
        """The output when no event came: ``[]``, ``[W(x)]``, ``[IDLE]`` or ``[W(x), IDLE]``."""
        out: list = []
        now = clock.nanos()
        idle_ns = self._idle_ns
        watermarks = self._watermarks
        low = MAX_TIMESTAMP
        for i, policy in enumerate(self._policies):
            if idle_ns and self._mark_idle_at[i] <= now:
                continue
            wm = max(watermarks[i], policy.get_current_watermark())
            watermarks[i] = wm
            if wm > self._top_observed:
                self._top_observed = wm
            if wm < low:
                low = wm
        if low == MAX_TIMESTAMP:
            if self._all_idle:
                return out
            low = self._top_observed  # just became idle: forward the top watermark first
            self._all_idle = True
        else:
            self._all_idle = False
        wm = self._emit_policy.throttle_wm(low, self._last_emitted)
        if wm > self._last_emitted:
            out.append(Watermark(wm))
            self._last_emitted = wm
        if self._all_idle:
            out.append(IDLE_MESSAGE)
        return out

    def get_watermark(self, partition: int) -> int:
        """The partition's current watermark, to save in a snapshot."""
        return self._watermarks[partition]

    def restore_watermark(self, partition: int, wm: int) -> None:
        """Set a partition's watermark from a snapshot; the last emitted watermark becomes the lowest one."""
        self._watermarks[partition] = wm
        self._last_emitted = min(self._watermarks) if self._watermarks else MIN_WATERMARK
