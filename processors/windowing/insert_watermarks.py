"""``insert_watermarks_p(wm_gen_params)``: stamps a stream that has no watermarks (Jet's ``InsertWatermarksP``).

One :class:`~processors.windowing.event_time.EventTimeMapper` with one partition: each item is reported to the watermark
policy and emitted after the watermark it raises (``Watermark(x)`` *before* the item). Late items pass through
(Jet's implementation and tests; the windowing processors drop them). The nullary ``try_process()`` lets
time-based policies advance and emits the idle message after ``idle_timeout_ms`` without items, so the engine
calls it regularly. Watermarks arriving from upstream are forwarded (``AbstractProcessor``'s default); the
manual advises one watermark generator per pipeline.

Snapshot: one entry ``broadcast_key("LAST_EMITTED_WM") -> last watermark emitted``; a restored processor takes
the lowest value of all restored entries, so every instance restarts at the most-behind one and never emits a
watermark at or below it again. (Jet saves the policy's watermark, which can be above the last one emitted
under throttling; saving the emitted one keeps a restored run's output identical to an uninterrupted run.)

>>> from processors.windowing.event_time import wm_gen_params
>>> from processors.windowing.watermark_policies import limiting_lag, no_throttling
>>> from processors.testing import verify_processor
>>> from processors.api.watermark import Watermark
>>> params = wm_gen_params(lambda t: t, limiting_lag(3), no_throttling(), idle_timeout_ms=-1)
>>> verify_processor(insert_watermarks_p(params)).input([11, 7]).expect_output([Watermark(8), 11, 7])
"""

from __future__ import annotations

from typing import Any

from jetspark_base.errors import DagValidationError, ProcessorContractError
from processors.execution.lifecycle import describe_processor
from processors.windowing.event_time import EventTimeMapper, WmGenParams
from processors.api.processor import AbstractProcessor
from processors.library.stateless import BuiltinSupplier
from processors.windowing.definitions import MAX_TIMESTAMP, broadcast_key

__all__ = ["insert_watermarks_p", "InsertWatermarksP"]

_LAST_EMITTED_WM = broadcast_key("LAST_EMITTED_WM")


class InsertWatermarksP(AbstractProcessor):
    """The processor of :func:`insert_watermarks_p`."""

    def __init__(self, params: WmGenParams):
        super().__init__()
        self._params = params
        self._mapper: EventTimeMapper | None = None
        self._pending: list = []
        self._position = 0
        self._min_restored = MAX_TIMESTAMP

    def init_processor(self, context: Any) -> None:
        owner = describe_processor(self, getattr(context, "vertex_name", None),
                                   getattr(context, "global_processor_index", None))
        self._mapper = EventTimeMapper(self._params, 1, owner=owner)

    def _emit_pending(self) -> bool:
        pending = self._pending
        self._position = self._outbox.offer_many(pending, self._position)
        if self._position < len(pending):
            return False
        self._pending, self._position = [], 0
        return True

    def try_process0(self, item: Any) -> bool:
        if not self._pending:
            self._pending = self._mapper.handle_event(item, 0)
        return self._emit_pending()

    def try_process_any(self, ordinal: int, item: Any) -> bool:
        return self.try_process0(item)

    def try_process(self) -> bool:
        if not self._pending:
            self._pending = self._mapper.handle_no_event()
            if not self._pending:
                return True
        return self._emit_pending()

    def save_to_snapshot(self) -> bool:
        if self._pending and not self._emit_pending():
            return False
        return self.try_emit_to_snapshot(_LAST_EMITTED_WM, self._mapper.last_emitted_watermark)

    def restore_from_snapshot_entry(self, key: Any, value: Any) -> None:
        if key != _LAST_EMITTED_WM:
            raise ProcessorContractError(
                f"{describe_processor(self)}: unexpected snapshot key {key!r}, expected {_LAST_EMITTED_WM!r}")
        self._min_restored = min(self._min_restored, value)

    def finish_snapshot_restore(self) -> bool:
        if self._min_restored != MAX_TIMESTAMP:
            self._mapper.restore_watermark(0, self._min_restored)
        return True


def insert_watermarks_p(wm_gen_params: WmGenParams) -> BuiltinSupplier:
    """A processor inserting watermarks into the stream per ``wm_gen_params`` (see the module docstring).

    >>> from processors.windowing.event_time import wm_gen_params
    >>> from processors.windowing.watermark_policies import limiting_lag, no_throttling
    >>> insert_watermarks_p(wm_gen_params(lambda t: t, limiting_lag(3), no_throttling()))
    insert_watermarks_p(limiting_lag(3), no_throttling())
    """
    if not isinstance(wm_gen_params, WmGenParams):
        raise DagValidationError(
            f"insert_watermarks_p(wm_gen_params): expected the result of wm_gen_params(...) or no_watermarks(), "
            f"got {wm_gen_params!r:.80}"
        )
    if wm_gen_params.timestamp_fn is None:
        raise DagValidationError("insert_watermarks_p(wm_gen_params): wm_gen_params needs a timestamp_fn")
    name = f"insert_watermarks_p({wm_gen_params.new_wm_policy_fn!r}, {wm_gen_params.wm_emit_policy!r})"
    return BuiltinSupplier(InsertWatermarksP, wm_gen_params, name=name)

