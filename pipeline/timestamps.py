"""Timestamps in a pipeline: the stream-source transform, where timestamps are chosen, and ``add-timestamps``.

- :func:`event_time_params`: the watermark parameters of a ``with_timestamps(fn, lag)`` /
  ``with_native_timestamps(lag)`` choice: a limiting-lag policy, no throttling, Jet's idle timeout, and a
  ``wrap_fn`` that turns each item into a ``JetEvent`` (so later stages keep its timestamp).
- :class:`StreamSourceTransform`: a stream source. Without timestamps, or when the source applies them itself
  (native timestamps, ``Sources.map_journal``, ``TestSources.item_stream``), one vertex. Otherwise (Jet 4's
  planner) the source vertex feeds ``NAME-add-timestamps`` (``insert_watermarks_p``) on an isolated edge.
- :class:`TimestampTransform`: ``with_timestamps`` later in a pipeline: an ``add-timestamps`` vertex
  (``insert_watermarks_p``) on an isolated edge.

Sinks never see the internal wrapper either: :class:`~pipeline.transforms.SinkTransform` unwraps the events of
a stage with timestamps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipeline.internal import MappedMetaSupplier, rewrap_event, to_event
from pipeline.planner import Planner
from pipeline.transform_graph import Transform, TransformGraph
from processors.windowing.event_time import DEFAULT_IDLE_TIMEOUT_MS, WmGenParams, wm_gen_params
from processors.windowing.insert_watermarks import insert_watermarks_p
from processors.windowing.watermark_policies import limiting_lag, no_throttling

__all__ = ["event_time_params", "StreamSourceTransform", "TimestampTransform"]

ADD_TIMESTAMPS_SUFFIX = "-add-timestamps"


class _OfItem:
    """``timestamp_fn(event.item)``: the user's timestamp function on a stage that already has timestamps."""

    def __init__(self, fn: Callable[[Any], int]):
        self.fn = fn

    def __call__(self, event: Any) -> int:
        return self.fn(event.item)


def event_time_params(timestamp_fn: Callable[[Any], int] | None, allowed_lag: int,
                      rewrap: bool = False) -> WmGenParams:
    """Watermark parameters emitting ``JetEvent`` items. ``timestamp_fn`` None: native timestamps.
    ``rewrap``: the input items are events already (their plain item gets the new timestamp)."""
    wrap = rewrap_event if rewrap else to_event
    if timestamp_fn is None:
        return WmGenParams(timestamp_fn=None, new_wm_policy_fn=limiting_lag(allowed_lag),
                           wm_emit_policy=no_throttling(), idle_timeout_ms=DEFAULT_IDLE_TIMEOUT_MS, wrap_fn=wrap)
    fn = _OfItem(timestamp_fn) if rewrap else timestamp_fn
    return wm_gen_params(fn, limiting_lag(allowed_lag), no_throttling(), wrap_fn=wrap)


class StreamSourceTransform(Transform):
    """A stream source: ``supplier`` as is, or with watermark ``params`` applied in the source (``in_source``)
    or by an ``-add-timestamps`` vertex after it."""

    def __init__(self, graph: TransformGraph, name: str, supplier: Any, params: WmGenParams | None,
                 in_source: bool):
        super().__init__(graph, name, (), events=params is not None)
        self.supplier = supplier
        self.params = params
        self.in_source = in_source

    def add_to_dag(self, p: Planner) -> None:
        if self.params is None or self.in_source:
            self._add_single_vertex(p, self.supplier)
            return
        name = p.unique_vertex_name(self.name)
        source = p.new_vertex(name, self.supplier, self.local_parallelism)
        stamps = p.add_vertex(self, name + ADD_TIMESTAMPS_SUFFIX, self.local_parallelism,
                              insert_watermarks_p(self.params), True)
        p.edge(source, stamps, 0, lambda e, _o: e.isolated())


class TimestampTransform(Transform):
    """``with_timestamps`` after other stages: ``add-timestamps`` (``insert_watermarks_p``)."""

    def __init__(self, graph: TransformGraph, upstream: Transform, timestamp_fn: Callable[[Any], int],
                 allowed_lag: int, bounded: bool = False):
        super().__init__(graph, "add-timestamps", (upstream,), events=True)
        self.bounded = bounded
        self.params = event_time_params(timestamp_fn, allowed_lag, rewrap=upstream.events)

    def add_to_dag(self, p: Planner) -> None:
        supplier = insert_watermarks_p(self.params)
        if self.bounded:  # the staged runtime does not carry watermarks: run the job pipelined
            supplier = MappedMetaSupplier(supplier, _same)
            supplier.needs_pipelined = True
        self._add_single_vertex(p, supplier, lambda e, _o: e.isolated())


def _same(processor: Any) -> Any:
    return processor
