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

Timestamps out of band (:func:`add_timestamps_vertex`): when every reader of an ``add-timestamps`` vertex is a
window (``Transform.takes_timestamp_fn``), it emits the plain items and the windows apply the user's timestamp
function themselves, as in the same DAG written by hand (``insert_watermarks_p`` -> ``accumulate_by_frame_p``
with the same function): no ``JetEvent`` is made per item and none is unwrapped. The function then runs twice
per item (once for the watermarks, once for the frame), so it must be a pure function of the item (as Jet
asks of a timestamp function; wall-clock stamps are ``with_ingestion_timestamps``, whose items always travel
wrapped). Native timestamps and a ``with_timestamps`` on a stage that had them keep the wrapper.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipeline.internal import MappedMetaSupplier, rewrap_event, to_event
from pipeline.planner import Planner, PlannerVertex
from pipeline.transform_graph import Transform, TransformGraph
from processors.windowing.event_time import DEFAULT_IDLE_TIMEOUT_MS, WmGenParams, wm_gen_params
from processors.windowing.insert_watermarks import insert_watermarks_p
from processors.windowing.watermark_policies import limiting_lag, no_throttling

__all__ = ["event_time_params", "StreamSourceTransform", "TimestampTransform", "add_timestamps_vertex"]

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


def add_timestamps_vertex(p: Planner, transform: Transform, name: str, params: WmGenParams,
                          local_parallelism: int | None, wrap_supplier: Callable[[Any], Any] | None = None
                          ) -> PlannerVertex:
    """The ``insert_watermarks_p(params)`` vertex of ``transform`` (a stage with timestamps), its timestamps
    out of band when only windows read it (see the module docstring); ``wrap_supplier`` adapts the supplier."""
    readers = transform.graph.downstream_of(transform)
    out_of_band = (params.wrap_fn is to_event and params.timestamp_fn is not None and bool(readers)
                   and all(r.takes_timestamp_fn for r in readers))
    if out_of_band:
        params = params.model_copy(update={"wrap_fn": None})
    supplier = insert_watermarks_p(params)
    if wrap_supplier is not None:
        supplier = wrap_supplier(supplier)
    pv = p.add_vertex(transform, name, local_parallelism, supplier, not out_of_band)
    if out_of_band:
        pv.timestamp_fn = params.timestamp_fn
    return pv


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
        stamps = add_timestamps_vertex(p, self, name + ADD_TIMESTAMPS_SUFFIX, self.params, self.local_parallelism)
        p.edge(source, stamps, 0, lambda e, _o: e.isolated())


class TimestampTransform(Transform):
    """``with_timestamps`` after other stages: ``add-timestamps`` (``insert_watermarks_p``)."""

    def __init__(self, graph: TransformGraph, upstream: Transform, timestamp_fn: Callable[[Any], int],
                 allowed_lag: int, bounded: bool = False):
        super().__init__(graph, "add-timestamps", (upstream,), events=True)
        self.bounded = bounded
        self.params = event_time_params(timestamp_fn, allowed_lag, rewrap=upstream.events)

    def add_to_dag(self, p: Planner) -> None:
        wrap = _needing_pipelined if self.bounded else None
        pv = add_timestamps_vertex(p, self, p.unique_vertex_name(self.name), self.params, self.local_parallelism,
                                   wrap)
        p.add_edges(self, pv, lambda e, _o: e.isolated())


def _needing_pipelined(supplier: Any) -> MappedMetaSupplier:
    """``supplier`` marked to run pipelined (the staged runtime does not carry watermarks)."""
    marked = MappedMetaSupplier(supplier, _same)
    marked.needs_pipelined = True
    return marked


def _same(processor: Any) -> Any:
    return processor
