"""The transforms of Jet 4.5's further stage operations: ``rebalance``, ``sort``, stateful mapping and the
async services; and ``Pipeline.set_preserve_order``'s rule.

The operations that add them are free functions (:mod:`pipeline.stateless_ops`, :mod:`pipeline.aggregate_ops`,
:mod:`pipeline.stateful_ops`); ``inner_hash_join`` and batch ``add_timestamps`` reuse the hash-join and
timestamp transforms. Lowering, as Jet 4.5's planner:

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
isolated edge from it, so each processor's items stay in one processor, in order (Jet's rule; see
:func:`pipeline.transforms.preserved_order`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipeline.async_service import AsyncServiceP
from pipeline.planner import Planner
from pipeline.stateful import StatefulMapP
from pipeline.transform_graph import Transform, TransformGraph
from pipeline.transforms import ProcessorFactory, checked_key
from processors.library.aggregating import sort_p
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["RebalanceTransform", "SortTransform", "StatefulTransform", "AsyncServiceTransform"]


class AsyncServiceTransform(Transform):
    """``map_using_service_async(_batched)``: one vertex of :class:`~pipeline.async_service.AsyncServiceP`;
    keyed, fed on a distributed edge partitioned by key."""

    def __init__(self, graph: TransformGraph, upstream: Transform, name: str, context_factory: Any, fn: Callable,
                 max_concurrent_ops: int, batch_size: int | None, key_fn: Callable | None, timeout_s: float):
        super().__init__(graph, name, (upstream,), upstream.events)
        self.args = (context_factory, fn, max_concurrent_ops, batch_size, key_fn, timeout_s)

    def add_to_dag(self, p: Planner) -> None:
        name = p.unique_vertex_name(self.name)
        context_factory, fn, max_ops, batch_size, key_fn, timeout_s = self.args
        ordered = p.preserve_order is not False
        key = None if key_fn is None else checked_key(key_fn, name)
        supplier = ProcessorMetaSupplier.of(ProcessorFactory(AsyncServiceP, context_factory, fn, max_ops, ordered,
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

    def __init__(self, graph: TransformGraph, upstream: Transform, key_fn: Callable[[Any], Any] | None):
        super().__init__(graph, "rebalance", (upstream,), upstream.events)
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

    def __init__(self, graph: TransformGraph, upstream: Transform, key_fn: Callable[[Any], Any] | None):
        super().__init__(graph, "sort", (upstream,))
        self.key_fn = key_fn

    def add_to_dag(self, p: Planner) -> None:
        name = p.unique_vertex_name(self.name)
        first = p.new_vertex(name, sort_p(self.key_fn), self.local_parallelism)
        p.add_edges(self, first)
        collect = p.add_vertex(self, name + "-collect", 1, sort_p(self.key_fn))
        p.edge(first, collect, 0, lambda e, _o: e.distributed().all_to_one(name))


class StatefulTransform(Transform):
    """``map_stateful``/``filter_stateful``/``flat_map_stateful``, global or keyed (see :mod:`pipeline.stateful`)."""

    def __init__(self, graph: TransformGraph, upstream: Transform, kind: str, create_fn: Callable, fn: Callable,
                 key_fn: Callable | None = None, ttl: int | None = None, on_evict_fn: Callable | None = None):
        base = "flatmap" if kind == "flat_map" else "map"
        super().__init__(graph, f"{base}-stateful-{'global' if key_fn is None else 'keyed'}", (upstream,),
                         upstream.events)
        self.args = (kind, create_fn, fn, key_fn, ttl, on_evict_fn)

    def add_to_dag(self, p: Planner) -> None:
        name = p.unique_vertex_name(self.name)
        kind, create_fn, fn, key_fn, ttl, on_evict_fn = self.args
        supplier = ProcessorMetaSupplier.of(ProcessorFactory(StatefulMapP, kind, create_fn, fn, key_fn, ttl,
                                                             on_evict_fn, self.events, name))
        if key_fn is None:
            pv = p.add_vertex(self, name, 1, supplier, self.events)
            p.add_edges(self, pv, lambda e, _o: e.distributed().all_to_one(name))
            return
        # the processor checks for a None key; events need the key of their plain item
        route = checked_key(key_fn, name, True) if self.events else key_fn
        pv = p.add_vertex(self, name, self.local_parallelism, supplier, self.events)
        p.add_edges(self, pv, lambda e, _o: e.distributed().partitioned(route))
