"""The item-by-item operations: free functions that check their arguments and add one transform.

Each function takes the transform of the stage it is called on (``upstream``) and returns the transform it
added to the same graph; the stage handles (:mod:`pipeline.stages`) wrap it in a handle of the right kind.
Stateless operations on a stage with timestamps adapt the user's function, so it sees plain items and its
outputs keep the timestamp (:mod:`pipeline.internal`). Keyed forms (``key_fn`` given) route the items by key
to the processors (Jet's data locality).

>>> from pipeline import Pipeline, Sources
>>> source = Pipeline.create().read_from(Sources.list("in")).transform
>>> stateless(source, "map", str.upper)
StatelessTransform('map')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline import internal
from pipeline.arg_checks import check_callable, check_context_factory, check_lag, check_service_factory
from pipeline.connectors import as_sink
from pipeline.join import JoinClause
from pipeline.more_transforms import RebalanceTransform
from pipeline.services import KeyedServiceFn
from pipeline.timestamps import TimestampTransform
from pipeline.transform_graph import Transform
from pipeline.transforms import HashJoinTransform, PeekTransform, SinkTransform, StatelessTransform
from processors.api.context_factory import ContextFactory
from processors.api.functions import whole_item
from processors.library.stateless import (
    filter_p,
    filter_using_context_p,
    flat_map_p,
    flat_map_using_context_p,
    map_p,
    map_using_context_p,
)

__all__ = ["stateless", "using_context", "using_service", "using", "merge", "peek", "custom_transform",
           "rebalance", "check_join_clause", "hash_join", "write_to", "add_timestamps"]

_PLAIN = {"map": (map_p, internal.EventMap, "map"), "filter": (filter_p, internal.EventFilter, "filter"),
          "flat_map": (flat_map_p, internal.EventFlatMap, "flat-map")}
_USING_P = {"map": map_using_context_p, "filter": filter_using_context_p, "flat_map": flat_map_using_context_p}


def stateless(upstream: Transform, kind: str, fn: Callable[[Any], Any]) -> Transform:
    """``map``, ``filter`` or ``flat_map`` (``kind``) of ``fn`` on ``upstream``'s items."""
    label = {"map": "map(fn)", "filter": "filter(pred)", "flat_map": "flat_map(fn)"}[kind]
    check_callable(upstream.name, label, fn)
    processor_p, adapter, name = _PLAIN[kind]
    return StatelessTransform(upstream.graph, name, processor_p(adapter(fn) if upstream.events else fn), [upstream],
                              upstream.events)


def using(upstream: Transform, kind: str, factory: ContextFactory, fn: Callable, what: str,
          key_fn: Callable[[Any], Any] | None = None) -> Transform:
    """The ``*-using-WHAT`` vertex of ``kind`` with the checked ``factory`` and ``fn(ctx, item)``; keyed when
    ``key_fn`` is given (``fn`` then already takes the key, see :func:`using_context`)."""
    adapted = internal.EventUsingContext(fn, kind) if upstream.events else fn
    return StatelessTransform(upstream.graph, f"{kind.replace('_', '-')}-using-{what}",
                              _USING_P[kind](factory, adapted), [upstream], upstream.events, partition_key=key_fn)


def using_context(upstream: Transform, kind: str, factory: Any, fn: Callable,
                  key_fn: Callable[[Any], Any] | None = None) -> Transform:
    """``{kind}_using_context(factory, fn)``: ``fn(ctx, item)``, or keyed ``fn(ctx, key, item)``."""
    operation = f"{kind}_using_context(factory, fn)"
    check_context_factory(upstream.name, operation, factory)
    check_callable(upstream.name, operation, fn)
    keyed = fn if key_fn is None else _KeyedContextFn(fn, key_fn)
    return using(upstream, kind, factory, keyed, "context", key_fn)


def using_service(upstream: Transform, kind: str, factory: Any, fn: Callable,
                  key_fn: Callable[[Any], Any] | None = None) -> Transform:
    """``{kind}_using_service(service_factory, fn)``: ``fn(service, item)``, or keyed ``fn(service, key, item)``."""
    operation = f"{kind}_using_service(service_factory, fn)"
    context_factory = check_service_factory(upstream.name, operation, factory)
    check_callable(upstream.name, operation, fn)
    keyed = fn if key_fn is None else KeyedServiceFn(fn, key_fn)
    return using(upstream, kind, context_factory, keyed, "service", key_fn)


class _KeyedContextFn:
    """``fn(ctx, key_fn(item), item)`` as a two-argument context function."""

    def __init__(self, fn: Callable[[Any, Any, Any], Any], key_fn: Callable[[Any], Any]):
        self.fn = fn
        self.key_fn = key_fn

    def __call__(self, ctx: Any, item: Any) -> Any:
        return self.fn(ctx, self.key_fn(item), item)


def merge(upstream: Transform, other: Transform) -> Transform:
    """A ``merge`` vertex fed by ``upstream`` (ordinal 0) and ``other`` (ordinal 1)."""
    return StatelessTransform(upstream.graph, "merge", map_p(whole_item), [upstream, other], upstream.events)


def peek(upstream: Transform, to_string_fn: Callable[[Any], Any],
         should_log_fn: Callable[[Any], Any] | None) -> Transform:
    """``peek``: logs the items of ``upstream``'s vertex (no vertex of its own)."""
    check_callable(upstream.name, "peek(to_string_fn)", to_string_fn)
    if should_log_fn is not None:
        check_callable(upstream.name, "peek(should_log_fn)", should_log_fn)
    return PeekTransform(upstream.graph, upstream, to_string_fn, should_log_fn)


def custom_transform(upstream: Transform, name: str, processor_supplier: Any) -> Transform:
    """A vertex ``name`` running ``processor_supplier`` on plain items; its outputs have no timestamps."""
    if not isinstance(name, str) or not name:
        raise DagValidationError(f"stage '{upstream.name}': custom_transform(name, supplier) needs a name")
    if upstream.events:
        processor_supplier = internal.MappedMetaSupplier(processor_supplier, internal.unwrap_events)
    return StatelessTransform(upstream.graph, name, processor_supplier, [upstream], False)


def rebalance(upstream: Transform, key_fn: Callable[[Any], Any] | None) -> Transform:
    """``rebalance()``/``rebalance(key_fn)``: the next stage's edge becomes distributed (no vertex)."""
    if key_fn is not None:
        check_callable(upstream.name, "rebalance(key_fn)", key_fn)
    return RebalanceTransform(upstream.graph, upstream, key_fn)


def check_join_clause(stage: str, operation: str, clause: Any) -> JoinClause:
    """``clause``, or a ``TypeError`` naming the stage when it is not a ``JoinClause``."""
    if not isinstance(clause, JoinClause):
        raise TypeError(f"stage '{stage}': {operation} needs a JoinClause (JoinClause.join_map_entries("
                        f"key_fn) or JoinClause.on_keys(...)), got {clause!r:.80}")
    return clause


def hash_join(upstream: Transform, joined: Sequence[Transform], clauses: Sequence[JoinClause],
              map_to_output_fn: Callable[..., Any], mode: str, tags: tuple = (), inner: bool = False) -> Transform:
    """A ``hash-join`` of ``upstream``'s items with the ``joined`` batch transforms (clauses checked by the
    caller); ``mode``: ``"bi"``, ``"tri"`` or ``"tags"`` (the builder's ``ItemsByTag``)."""
    return HashJoinTransform(upstream.graph, [upstream, *joined], clauses, map_to_output_fn, mode, tags, inner)


def write_to(upstream: Transform, sink: Any) -> Transform:
    """The sink transform draining ``upstream`` into ``sink`` (a ``Sinks`` sink or a ``SinkBuilder`` product)."""
    descriptor = as_sink(sink)
    return SinkTransform(upstream.graph, descriptor.name, descriptor.supplier, upstream)


def add_timestamps(upstream: Transform, timestamp_fn: Callable[[Any], int], allowed_lag: int,
                   bounded: bool = False) -> Transform:
    """``with_timestamps`` later in a pipeline: an ``add-timestamps`` vertex (``insert_watermarks_p``); from
    there on the items carry the new timestamps. ``bounded``: a batch stage's items (the job runs pipelined)."""
    if not callable(timestamp_fn):
        raise TypeError(f"stage '{upstream.name}': with_timestamps(timestamp_fn, allowed_lag) needs a callable, "
                        f"got {timestamp_fn!r:.80}")
    lag = check_lag(upstream.name, allowed_lag)
    return TimestampTransform(upstream.graph, upstream, timestamp_fn, lag, bounded)
