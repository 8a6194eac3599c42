"""Jet 4.5's further stage operations: ``apply``, ``rebalance``, ``inner_hash_join``, ``sort``, stateful
mapping and batch ``add_timestamps``; and ``Pipeline.set_preserve_order``'s rule.

The operations live in mixins the stage classes of :mod:`pipeline.stages` inherit (:class:`MoreStageOps` for
every compute stage, :class:`MoreBatchOps` for batch stages, :class:`MoreKeyedOps` after ``grouping_key``);
the transforms they add are here too. Lowering, as Jet 4.5's planner:

=======================  =================================================================================
operation                vertices and edges
=======================  =================================================================================
``rebalance()``          no vertex: the next stage's inbound edge becomes distributed (round-robin over all
                         processors of the cluster)
``rebalance(key_fn)``    no vertex: the next stage's edge is distributed and partitioned by ``key_fn``
``sort(key_fn=None)``    ``sort`` (each processor sorts its share) -> distributed all-to-one -> ``sort-collect``
                         (local parallelism 1; merges into one total order)
``map_stateful`` ...     ``map-stateful-global`` / ``flatmap-stateful-global`` (local parallelism 1,
                         distributed all-to-one) or ``...-keyed`` (distributed, partitioned by key); see
                         :mod:`pipeline.stateful`
``inner_hash_join``      as ``hash_join``; a left item without a match in every joined stage is dropped
``map_using_service_     ``map-using-service-async`` (``-batched``), local unicast in; keyed: distributed,
async(_batched)``        partitioned by key (see :mod:`pipeline.async_service`)
=======================  =================================================================================

``p.set_preserve_order(True)``: a stateless stage (``map``, ``filter``, ``flat_map``, the ``*_using_*``
forms) takes the local parallelism of the stage before it (the smaller of the two when both are set) and an
isolated edge from it, so each processor's items stay in one processor, in order (Jet's rule).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.async_service import DEFAULT_ASYNC_TIMEOUT_S
from pipeline.planner import Planner
from pipeline.transforms import Transform, _Factory, checked_key
from processors.library.aggregating import sort_p
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["MoreStageOps", "MoreBatchOps", "MoreKeyedOps", "RebalanceTransform", "SortTransform",
           "StatefulTransform", "AsyncServiceTransform", "preserved_order"]


def _check_callable(stage: str, label: str, fn: Any) -> None:
    if not callable(fn):
        raise TypeError(f"stage '{stage}': {label} must be callable, got {fn!r:.80} ({type(fn).__name__})")


def preserved_order(p: Planner, upstream_vertex: Any, local_parallelism: int | None) -> tuple:
    """``(local parallelism, edge configurer)`` of a stateless stage of a pipeline that preserves order: the
    upstream vertex's parallelism (the smaller one when both are set) and an isolated edge."""
    upstream_lp = upstream_vertex.local_parallelism
    if upstream_lp is None:
        preferred = getattr(upstream_vertex.supplier, "preferred_local_parallelism", None)
        upstream_lp = preferred() if callable(preferred) else None
    if upstream_lp is not None:
        local_parallelism = upstream_lp if local_parallelism is None else min(upstream_lp, local_parallelism)
    return local_parallelism, lambda e, _o: e.isolated()


class AsyncServiceTransform(Transform):
    """``map_using_service_async(_batched)``: one vertex of :class:`~pipeline.async_service.AsyncServiceP`;
    keyed, fed on a distributed edge partitioned by key."""

    def __init__(self, pipeline: Any, upstream: Transform, name: str, context_factory: Any, fn: Callable,
                 max_concurrent_ops: int, batch_size: int | None, key_fn: Callable | None, timeout_s: float):
        super().__init__(pipeline, name, (upstream,), upstream.events)
        self.args = (context_factory, fn, max_concurrent_ops, batch_size, key_fn, timeout_s)

    def add_to_dag(self, p: Planner) -> None:
        from pipeline.async_service import AsyncServiceP

        name = p.unique_vertex_name(self.name)
        context_factory, fn, max_ops, batch_size, key_fn, timeout_s = self.args
        ordered = p.preserve_order is not False
        key = None if key_fn is None else checked_key(key_fn, name)
        supplier = ProcessorMetaSupplier.of(_Factory(AsyncServiceP, context_factory, fn, max_ops, ordered,
                                                     self.events, batch_size, key, timeout_s))
        pv = p.add_vertex(self, name, self.local_parallelism, supplier, self.events)
        if key_fn is None:
            p.add_edges(self, pv)
        else:
            route = checked_key(key_fn, name, self.events)
            p.add_edges(self, pv, lambda e, _o: e.distributed().partitioned(route))


class RebalanceTransform(Transform):
    """``rebalance``: no vertex of its own; the edges leaving it towards the next stage are distributed
    (partitioned by ``key_fn`` when given, else round-robin)."""

    def __init__(self, pipeline: Any, upstream: Transform, key_fn: Callable[[Any], Any] | None):
        super().__init__(pipeline, "rebalance", (upstream,), upstream.events)
        self.key_fn = key_fn

    def add_to_dag(self, p: Planner) -> None:
        p.xform2vertex[self] = p.vertex_of(self.upstream[0])
        if self.key_fn is None:
            p.edge_overrides[self] = lambda e, _o: e.distributed()
        else:
            key = checked_key(self.key_fn, "rebalance", self.events)
            p.edge_overrides[self] = lambda e, _o: e.distributed().partitioned(key)


class SortTransform(Transform):
    """``sort``: ``sort`` then ``sort-collect`` (see the module table)."""

    def __init__(self, pipeline: Any, upstream: Transform, key_fn: Callable[[Any], Any] | None):
        super().__init__(pipeline, "sort", (upstream,))
        self.key_fn = key_fn

    def add_to_dag(self, p: Planner) -> None:
        name = p.unique_vertex_name(self.name)
        first = p.new_vertex(name, sort_p(self.key_fn), self.local_parallelism)
        p.add_edges(self, first)
        collect = p.add_vertex(self, name + "-collect", 1, sort_p(self.key_fn))
        p.edge(first, collect, 0, lambda e, _o: e.distributed().all_to_one(name))


class StatefulTransform(Transform):
    """``map_stateful``/``filter_stateful``/``flat_map_stateful``, global or keyed (see :mod:`pipeline.stateful`)."""

    def __init__(self, pipeline: Any, upstream: Transform, kind: str, create_fn: Callable, fn: Callable,
                 key_fn: Callable | None = None, ttl: int | None = None, on_evict_fn: Callable | None = None):
        base = "flatmap" if kind == "flat_map" else "map"
        super().__init__(pipeline, f"{base}-stateful-{'global' if key_fn is None else 'keyed'}", (upstream,),
                         upstream.events)
        self.args = (kind, create_fn, fn, key_fn, ttl, on_evict_fn)

    def add_to_dag(self, p: Planner) -> None:
        from pipeline.stateful import StatefulMapP

        name = p.unique_vertex_name(self.name)
        kind, create_fn, fn, key_fn, ttl, on_evict_fn = self.args
        supplier = ProcessorMetaSupplier.of(_Factory(StatefulMapP, kind, create_fn, fn, key_fn, ttl, on_evict_fn,
                                                     self.events, name))
        if key_fn is None:
            pv = p.add_vertex(self, name, 1, supplier, self.events)
            p.add_edges(self, pv, lambda e, _o: e.distributed().all_to_one(name))
            return
        # the processor checks for a None key; events need the key of their plain item
        route = checked_key(key_fn, name, True) if self.events else key_fn
        pv = p.add_vertex(self, name, self.local_parallelism, supplier, self.events)
        p.add_edges(self, pv, lambda e, _o: e.distributed().partitioned(route))


def _stateful_args(stage: str, operation: str, create_fn: Any, fn: Any) -> None:
    _check_callable(stage, f"{operation} create_fn", create_fn)
    _check_callable(stage, f"{operation} fn", fn)


class MoreStageOps:
    """Jet 4.5's operations of every compute stage (mixed into ``GeneralStage``)."""

    name: str
    pipeline: Any
    _transform: Transform

    def apply(self, transform_fn: Callable[[Any], Any]) -> Any:
        """``transform_fn(self)``: reusable pieces of a pipeline (and the testing API's assertions).

        >>> from pipeline import Pipeline, Sources
        >>> upper = lambda stage: stage.map(str.upper)
        >>> Pipeline.create().read_from(Sources.list("in")).apply(upper).name
        'map'
        """
        _check_callable(self.name, "apply(transform_fn)", transform_fn)
        return transform_fn(self)

    def rebalance(self, key_fn: Callable[[Any], Any] | None = None) -> Any:
        """The same items, spread over all processors of the cluster for the next stage: round-robin, or
        partitioned by ``key_fn(item)`` (Jet's ``rebalance()``/``rebalance(keyFn)``); adds no vertex."""
        if key_fn is not None:
            _check_callable(self.name, "rebalance(key_fn)", key_fn)
        return self._attach(RebalanceTransform(self.pipeline, self._transform, key_fn))

    def inner_hash_join(self, other: Any, join_clause: Any, map_to_output_fn: Callable[[Any, Any], Any]) -> Any:
        """As ``hash_join``, but a left item without a matching item of ``other`` is dropped (Jet 4.1)."""
        joined = self._joined(other, join_clause, "inner_hash_join(other, clause, fn)")
        _check_callable(self.name, "inner_hash_join map_to_output_fn", map_to_output_fn)
        return self._hash_join([joined], [join_clause], map_to_output_fn, "bi", inner=True)

    def _stateful(self, kind: str, create_fn: Any, fn: Any) -> Any:
        _stateful_args(self.name, f"{kind}_stateful(create_fn, fn)", create_fn, fn)
        return self._attach(StatefulTransform(self.pipeline, self._transform, kind, create_fn, fn))

    def map_stateful(self, create_fn: Callable[[], Any], map_fn: Callable[[Any, Any], Any]) -> Any:
        """``map_fn(state, item)`` with one state for the whole job (``create_fn()``; Jet's global form, one
        processor); ``None`` drops the item. The state is saved in snapshots.

        >>> stage.map_stateful(lambda: [0], lambda s, x: s.__setitem__(0, s[0] + x) or s[0])  # doctest: +SKIP
        """
        return self._stateful("map", create_fn, map_fn)

    def filter_stateful(self, create_fn: Callable[[], Any], filter_fn: Callable[[Any, Any], Any]) -> Any:
        """The items for which ``filter_fn(state, item)`` is true (one state for the job)."""
        return self._stateful("filter", create_fn, filter_fn)

    def flat_map_stateful(self, create_fn: Callable[[], Any], flat_map_fn: Callable[[Any, Any], Any]) -> Any:
        """Every item of ``flat_map_fn(state, item)`` (one state for the job)."""
        return self._stateful("flat_map", create_fn, flat_map_fn)


    def _async(self, name: str, factory: Any, fn: Any, batch_size: int | None, max_concurrent_ops: Any,
               timeout_s: Any, key_fn: Callable | None = None) -> Any:
        from pipeline.stages import check_service_factory

        operation = f"{name.replace('-', '_')}(service_factory, {'max_batch_size, ' if batch_size else ''}fn)"
        context_factory = check_service_factory(self.name, operation, factory)
        _check_callable(self.name, operation, fn)
        for label, value in (("max_concurrent_ops", max_concurrent_ops), ("max_batch_size", batch_size)):
            if (value is not None or label == "max_concurrent_ops") and (
                    isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise DagValidationError(f"stage '{self.name}': {operation} needs {label} >= 1 (an int), got "
                                         f"{value!r}")
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
            raise DagValidationError(f"stage '{self.name}': {operation} needs timeout_s > 0, got {timeout_s!r}")
        stage = getattr(self, "_stage", self)
        return stage._attach(AsyncServiceTransform(  # noqa: SLF001
            self.pipeline, self._transform, name, context_factory, fn, max_concurrent_ops, batch_size, key_fn,
            float(timeout_s)))

    def map_using_service_async(self, service_factory: Any, fn: Callable[[Any, Any], Any], *,
                                max_concurrent_ops: int = 4, timeout_s: float = DEFAULT_ASYNC_TIMEOUT_S) -> Any:
        """``fn(service, item)`` returns a ``concurrent.futures.Future`` of the result (``None`` drops the item);
        up to ``max_concurrent_ops`` calls in flight per processor; results in input order unless
        ``set_preserve_order(False)``. A failing future fails the job naming the item; one pending after
        ``timeout_s`` too (see :mod:`pipeline.async_service`).

        >>> pool = ServiceFactories.shared_service(lambda ctx: ThreadPoolExecutor(4),  # doctest: +SKIP
        ...                                        lambda e: e.shutdown())
        >>> stage.map_using_service_async(pool, lambda ex, x: ex.submit(lookup, x))  # doctest: +SKIP
        """
        return self._async("map-using-service-async", service_factory, fn, None, max_concurrent_ops, timeout_s)

    def map_using_service_async_batched(self, service_factory: Any, max_batch_size: int,
                                        fn: Callable[[Any, list], Any], *, max_concurrent_ops: int = 4,
                                        timeout_s: float = DEFAULT_ASYNC_TIMEOUT_S) -> Any:
        """``fn(service, items)`` (at most ``max_batch_size`` items) returns a future of a list with one result
        per item, in order."""
        return self._async("map-using-service-async-batched", service_factory, fn, max_batch_size,
                           max_concurrent_ops, timeout_s)


class MoreBatchOps:
    """Jet 4.5's operations of a batch stage."""

    name: str
    pipeline: Any
    _transform: Transform

    def sort(self, key_fn: Callable[[Any], Any] | None = None) -> Any:
        """All items in one total order (natural, or by ``key_fn(item)``), from one processor at the end."""
        if key_fn is not None:
            _check_callable(self.name, "sort(key_fn)", key_fn)
        return self._attach(SortTransform(self.pipeline, self._transform, key_fn))

    def add_timestamps(self, timestamp_fn: Callable[[Any], int], allowed_lag: int) -> Any:
        """A ``StreamStage`` of these items with timestamps ``timestamp_fn(item)``, so that windows work on
        bounded data (Jet's ``BatchStage.addTimestamps``): an ``add-timestamps`` vertex; when the input ends,
        the windows still open are emitted. The job runs on the pipelined runtime (it carries watermarks)."""
        from pipeline.stages import StreamStage
        from pipeline.stream_stages import add_timestamps

        return StreamStage(add_timestamps(self, timestamp_fn, allowed_lag, bounded=True)._transform)  # noqa: SLF001


class MoreKeyedOps:
    """Jet 4.5's keyed operations (mixed into ``StageWithKey``)."""

    name: str
    pipeline: Any
    key_fn: Callable[[Any], Any]
    _stage: Any
    _transform: Transform

    def _keyed_stateful(self, kind: str, args: tuple, kwargs: dict) -> Any:
        operation = f"{kind}_stateful"
        ttl, create_fn, fn, on_evict_fn = _keyed_stateful_args(self.name, operation, args, kwargs)
        if ttl is not None and not self._stage._events:  # noqa: SLF001
            raise DagValidationError(
                f"stage '{self.name}': {operation}(ttl, ...) evicts state by event time, but this stage has no "
                "timestamps; use it on a stream stage with timestamps, or leave out ttl and on_evict_fn")
        return self._stage._attach(StatefulTransform(  # noqa: SLF001
            self.pipeline, self._transform, kind, create_fn, fn, self.key_fn, ttl, on_evict_fn))

    def map_stateful(self, *args: Any, **kwargs: Any) -> Any:
        """``map_fn(state, key, item)`` with one state per key. Forms: ``map_stateful(create_fn, map_fn)`` and,
        on a stream stage, ``map_stateful(ttl, create_fn, map_fn, on_evict_fn)``: a key's state is dropped
        once the watermark passes its last event time + ``ttl`` ms, and ``on_evict_fn(state, key, watermark)``'s
        non-``None`` result is emitted. States are saved in snapshots.

        >>> stage.grouping_key(user).map_stateful(60_000, list, track, on_evict)  # doctest: +SKIP
        """
        return self._keyed_stateful("map", args, kwargs)

    def filter_stateful(self, *args: Any, **kwargs: Any) -> Any:
        """The items for which ``filter_fn(state, item)`` is true, one state per key (``filter_stateful(
        create_fn, filter_fn)`` or ``filter_stateful(ttl, create_fn, filter_fn)``; Jet's filter function has no
        key argument)."""
        ttl, create_fn, fn, _ = _keyed_stateful_args(self.name, "filter_stateful", args, kwargs)
        return self._keyed_stateful("filter", (ttl, create_fn, _IgnoreKey(fn)), {})

    def flat_map_stateful(self, *args: Any, **kwargs: Any) -> Any:
        """Every item of ``flat_map_fn(state, key, item)``, one state per key (forms as ``map_stateful``)."""
        return self._keyed_stateful("flat_map", args, kwargs)


    def map_using_service_async(self, service_factory: Any, fn: Callable[[Any, Any, Any], Any], *,
                                max_concurrent_ops: int = 4, timeout_s: float = DEFAULT_ASYNC_TIMEOUT_S) -> Any:
        """``fn(service, key, item)`` returns a future of the result; items routed by key (Jet 4's keyed form)."""
        return MoreStageOps._async(self, "map-using-service-async", service_factory, fn, None,  # type: ignore[arg-type]
                                   max_concurrent_ops, timeout_s, self.key_fn)

    def map_using_service_async_batched(self, service_factory: Any, max_batch_size: int,
                                        fn: Callable[[Any, list, list], Any], *, max_concurrent_ops: int = 4,
                                        timeout_s: float = DEFAULT_ASYNC_TIMEOUT_S) -> Any:
        """``fn(service, keys, items)`` (at most ``max_batch_size`` items and their keys, in order) returns a
        future of a list with one result per item; items routed by key (Jet 4's keyed form).

        >>> stage.grouping_key(user).map_using_service_async_batched(  # doctest: +SKIP
        ...     pool, 16, lambda ex, users, items: ex.submit(lookup_all, users, items))
        """
        return MoreStageOps._async(self, "map-using-service-async-batched", service_factory, fn,  # type: ignore[arg-type]
                                   max_batch_size, max_concurrent_ops, timeout_s, self.key_fn)


class _IgnoreKey:
    """``fn(state, item)`` called as ``fn(state, key, item)``."""

    def __init__(self, fn: Callable[[Any, Any], Any]):
        self.fn = fn

    def __call__(self, state: Any, key: Any, item: Any) -> Any:
        return self.fn(state, item)


def _keyed_stateful_args(stage: str, operation: str, args: tuple, kwargs: dict) -> tuple:
    """``(ttl, create_fn, fn, on_evict_fn)`` from either form; errors name the stage and the forms."""
    names = ("ttl", "create_fn", "fn", "on_evict_fn")
    if args and not callable(args[0]) and "ttl" not in kwargs:
        values = dict(zip(names, args))
    else:
        values = dict(zip(names[1:], args))
    values.update(kwargs)
    unknown = set(values) - set(names)
    if unknown or "create_fn" not in values or "fn" not in values:
        raise TypeError(f"stage '{stage}': {operation} takes (create_fn, fn) or (ttl, create_fn, fn[, "
                        f"on_evict_fn]); got {len(args)} positional argument(s) and {sorted(kwargs)}")
    ttl = values.get("ttl")
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0):
        raise DagValidationError(f"stage '{stage}': {operation}(ttl, ...) needs a ttl in milliseconds > 0, got "
                                 f"{ttl!r}; leave it out to keep every key's state")
    _stateful_args(stage, operation, values["create_fn"], values["fn"])
    if values.get("on_evict_fn") is not None:
        _check_callable(stage, f"{operation} on_evict_fn", values["on_evict_fn"])
    return ttl, values["create_fn"], values["fn"], values.get("on_evict_fn")
