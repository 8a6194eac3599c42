"""Transforms: what each stage of a pipeline is, and how it lowers to vertices and edges (Jet 4's planner).

==========================  ========================================================================================
transform                   vertices and edges
==========================  ========================================================================================
source                      one vertex named by the source (``listSource(NAME)``, builder sources by their name)
sink                        one vertex named by the sink; local unicast edge from the stage it drains
map, filter, flat-map,      one vertex (``map``, ``filter``, ``flat-map``, ``map-using-context``, ...), local unicast
*-using-context, custom     edge; after ``grouping_key`` the ``*-using-context`` edge is distributed partitioned
merge                       one ``merge`` vertex, an edge from each merged stage at ordinals 0, 1
peek                        no vertex: wraps the supplier of the previous stage's vertex with ``peek_output_p``
aggregate (un-keyed)        ``NAME-prepare`` (accumulate_p, local unicast in) -> distributed all-to-one ->
                            ``NAME`` (combine_p, local parallelism 1)
(no ``combine_fn``: one      ``NAME`` alone, distributed all-to-one (un-keyed) or partitioned by key: Jet's rule for an
vertex)                     operation that cannot combine accumulators)
group / co-group            ``NAME-prepare`` (accumulate_by_key_p, local partitioned by key in, ``HASH_CODE``
                            partitioner) -> distributed partitioned by entry key -> ``NAME`` (combine_by_key_p)
distinct                    ``distinct-prepare`` (local partitioned) -> distributed partitioned -> ``distinct``
rolling-aggregate           one vertex; keyed: distributed partitioned edge; un-keyed: local parallelism 1,
                            distributed all-to-one edge
hash-join                   ``hash-join`` (left stage at ordinal 0, local unicast); joined stage N feeds
                            ``hash-join-collector-N`` (local parallelism 1) on a distributed broadcast edge, which
                            feeds ``hash-join`` at ordinal N on a local broadcast edge with priority -1
==========================  ========================================================================================

A repeated name gets ``-2``, ``-3``, ...; the ``-prepare`` and collector vertices take the name of their main
vertex. Keys are checked for ``None`` at run time (Jet's null-key error naming the stage), except the identity
key ``whole_item`` (items are never ``None``), which keeps the engine's counting fast path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from edges.partitioner import Partitioner
from pipeline.internal import (
    CheckedKey,
    DistinctP,
    EventPredicate,
    EventToString,
    HashJoinCollectP,
    HashJoinP,
    MappedMetaSupplier,
    RollingAggregateP,
    event_item,
    unwrap_events,
)
from pipeline.planner import EdgeConfigurer, Planner, PlannerVertex
from pipeline.transform_graph import Transform, TransformGraph
from processors.aggregate.operation import AggregateOperation
from processors.library.aggregating import (
    accumulate_by_key_p,
    accumulate_p,
    aggregate_by_key_p,
    aggregate_p,
    combine_by_key_p,
    combine_p,
)
from processors.library.diagnostic import peek_output_p
from processors.api.functions import entry, entry_key, whole_item
from processors.library.stateless import map_p, noop_p
from processors.api.suppliers import ProcessorMetaSupplier, RuntimeBound

__all__ = [
    "SourceTransform", "SinkTransform", "StatelessTransform", "PeekTransform", "AggregateTransform",
    "DistinctTransform", "RollingAggregateTransform", "HashJoinTransform", "PREPARE_SUFFIX",
    "checked_key", "preserved_order", "ProcessorFactory",
]

PREPARE_SUFFIX = "-prepare"


class SourceTransform(Transform):
    """A batch source: ``supplier`` is what its vertex runs (stream sources: ``timestamps.StreamSourceTransform``)."""

    def __init__(self, graph: TransformGraph, name: str, supplier: Any, post_fn: Callable[[Any], Any] | None = None):
        super().__init__(graph, name, ())
        self.supplier = supplier
        self.post_fn = post_fn

    def add_to_dag(self, p: Planner) -> None:
        if self.post_fn is None:
            self._add_single_vertex(p, self.supplier)
            return
        # a driver-side source is a Spark operation, not processors: the selection runs in a vertex after it
        name = p.unique_vertex_name(self.name)
        source = p.new_vertex(name, self.supplier, self.local_parallelism)
        select = p.add_vertex(self, name + "-select", self.local_parallelism, map_p(self.post_fn))
        p.edge(source, select)


class SinkTransform(Transform):
    """A sink draining ``upstream``. Fed by a stage with timestamps, it still gets plain items: its processors
    are wrapped with ``UnwrapEventsP``; a driver-side sink (a Spark operation, no processors) gets a
    ``NAME-unwrap`` vertex in front of it."""

    is_sink = True

    def __init__(self, graph: TransformGraph, name: str, supplier: Any, upstream: Transform):
        super().__init__(graph, name, (upstream,))
        self.supplier = supplier

    def add_to_dag(self, p: Planner) -> None:
        upstream = p.vertex_of(self.upstream[0])
        if not upstream.emits_events:
            self._add_single_vertex(p, self.supplier)
            return
        name = p.unique_vertex_name(self.name)
        if isinstance(self.supplier, RuntimeBound):
            unwrap = p.new_vertex(name + "-unwrap", map_p(event_item), self.local_parallelism)
            p.edge(upstream, unwrap)
            sink = p.add_vertex(self, name, self.local_parallelism, self.supplier)
            p.edge(unwrap, sink)
            return
        sink = p.add_vertex(self, name, self.local_parallelism, MappedMetaSupplier(self.supplier, unwrap_events))
        p.add_edges(self, sink)


class StatelessTransform(Transform):
    """One vertex running ``supplier`` (map, filter, flat-map, merge, the ``*-using-context`` ones, custom).

    ``partition_key``: route items to the vertex on a distributed edge partitioned by this key (the keyed
    ``*_using_context`` forms)."""

    def __init__(self, graph: TransformGraph, name: str, supplier: Any, upstream: Sequence[Transform],
                 events: bool = False, partition_key: Callable[[Any], Any] | None = None):
        super().__init__(graph, name, upstream, events)
        self.supplier = supplier
        self.partition_key = partition_key

    def add_to_dag(self, p: Planner) -> None:
        if self.partition_key is None:
            if p.preserve_order and len(self.upstream) == 1:
                lp, isolated = preserved_order(p.vertex_of(self.upstream[0]), self.local_parallelism)
                self._add_single_vertex(p, self.supplier, isolated, lp)
                return
            self._add_single_vertex(p, self.supplier)
            return
        name = p.unique_vertex_name(self.name)
        key = checked_key(self.partition_key, name, self.upstream[0].events)
        pv = p.add_vertex(self, name, self.local_parallelism, self.supplier, self.events)
        p.add_edges(self, pv, lambda e, _o: e.distributed().partitioned(key))


def preserved_order(upstream_vertex: PlannerVertex,
                    local_parallelism: int | None) -> tuple[int | None, EdgeConfigurer]:
    """``(local parallelism, edge configurer)`` of a stateless stage of a pipeline that preserves order (Jet
    4.5's rule): the upstream vertex's parallelism (the smaller one when both are set) and an isolated edge."""
    upstream_lp = upstream_vertex.local_parallelism
    if upstream_lp is None:
        preferred = getattr(upstream_vertex.supplier, "preferred_local_parallelism", None)
        upstream_lp = preferred() if callable(preferred) else None
    if upstream_lp is not None:
        local_parallelism = upstream_lp if local_parallelism is None else min(upstream_lp, local_parallelism)
    return local_parallelism, _isolated


def _isolated(edge: Any, _ordinal: int) -> None:
    edge.isolated()


class PeekTransform(Transform):
    """``peek``: no vertex of its own; it wraps the vertex of the stage before it."""

    def __init__(self, graph: TransformGraph, upstream: Transform, to_string_fn: Callable[[Any], Any],
                 should_log_fn: Callable[[Any], Any] | None):
        super().__init__(graph, "peek", (upstream,), upstream.events)
        self.to_string_fn = to_string_fn
        self.should_log_fn = should_log_fn

    def add_to_dag(self, p: Planner) -> None:
        peeked = p.vertex_of(self.upstream[0])
        to_string, should_log = self.to_string_fn, self.should_log_fn
        if self.events:  # Jet's adapted peek: "item (eventTime=HH:MM:SS.mmm)"
            to_string = EventToString(to_string)
            should_log = None if should_log is None else EventPredicate(should_log)
        if isinstance(peeked.supplier, RuntimeBound):
            # a driver-side source or sink is a Spark operation, not processors: peek in a vertex of its own
            self._add_single_vertex(p, peek_output_p(noop_p(), to_string, should_log))
            return
        peeked.supplier = peek_output_p(peeked.supplier, to_string, should_log)  # a stream source stays one
        p.xform2vertex[self] = peeked


def checked_key(key_fn: Callable[[Any], Any], stage: str, events: bool = False) -> Callable[[Any], Any]:
    """``key_fn`` with Jet's null-key check naming ``stage`` (``whole_item`` stays itself: items are never None)."""
    if key_fn is whole_item and not events:
        return whole_item
    return CheckedKey(key_fn, stage, unwrap=events)


class AggregateTransform(Transform):
    """Two-stage aggregation of one or more inputs (``aggregate``, ``aggregate2/3``, group and co-group).

    ``op``: an operation with one accumulate function per input; ``key_fns``: one key function per input,
    or ``None`` for the un-keyed form; ``map_to_output_fn(key, result)`` for the keyed form."""

    def __init__(self, graph: TransformGraph, name: str, upstream: Sequence[Transform], op: AggregateOperation,
                 key_fns: Sequence[Callable[[Any], Any]] | None = None,
                 map_to_output_fn: Callable[[Any, Any], Any] = entry):
        super().__init__(graph, name, upstream)
        self.op = op
        self.key_fns = None if key_fns is None else list(key_fns)
        self.map_to_output_fn = map_to_output_fn

    def add_to_dag(self, p: Planner) -> None:
        name = p.unique_vertex_name(self.name)
        lp = self.local_parallelism
        if self.op.combine_fn is None:
            self._single_stage(p, name)
            return
        if self.key_fns is None:
            prepare = p.new_vertex(name + PREPARE_SUFFIX, accumulate_p(self.op), lp)
            main = p.add_vertex(self, name, 1, combine_p(self.op))
            p.add_edges(self, prepare)
            p.edge(prepare, main, 0, lambda e, _o: e.distributed().all_to_one(name))
            return
        keys = [checked_key(fn, name) for fn in self.key_fns]
        prepare = p.new_vertex(name + PREPARE_SUFFIX, accumulate_by_key_p(keys, self.op), lp)
        main = p.add_vertex(self, name, lp, combine_by_key_p(self.op, self.map_to_output_fn))
        p.add_edges(self, prepare, lambda e, o: e.partitioned(keys[o], Partitioner.HASH_CODE))
        p.edge(prepare, main, 0, lambda e, _o: e.distributed().partitioned(entry_key))


    def _single_stage(self, p: Planner, name: str) -> None:
        """Jet's rule for an operation without ``combine_fn``: one vertex fed on distributed edges (all-to-one
        un-keyed, partitioned by key keyed)."""
        if self.key_fns is None:
            main = p.add_vertex(self, name, 1, aggregate_p(self.op))
            p.add_edges(self, main, lambda e, _o: e.distributed().all_to_one(name))
            return
        keys = [checked_key(fn, name) for fn in self.key_fns]
        main = p.add_vertex(self, name, self.local_parallelism,
                            aggregate_by_key_p(keys, self.op, self.map_to_output_fn))
        p.add_edges(self, main, lambda e, o: e.distributed().partitioned(keys[o]))


class DistinctTransform(Transform):
    """``distinct``: the first item of each key, in two stages (per member, then across members)."""

    def __init__(self, graph: TransformGraph, upstream: Transform, key_fn: Callable[[Any], Any]):
        super().__init__(graph, "distinct", (upstream,))
        self.key_fn = key_fn

    def add_to_dag(self, p: Planner) -> None:
        name = p.unique_vertex_name(self.name)
        key = checked_key(self.key_fn, name)
        supplier = ProcessorMetaSupplier.of(ProcessorFactory(DistinctP, key))
        prepare = p.new_vertex(name + PREPARE_SUFFIX, supplier, self.local_parallelism)
        main = p.add_vertex(self, name, self.local_parallelism, supplier)
        p.add_edges(self, prepare, lambda e, _o: e.partitioned(key, Partitioner.HASH_CODE))
        p.edge(prepare, main, 0, lambda e, _o: e.distributed().partitioned(key))


class RollingAggregateTransform(Transform):
    """``rolling_aggregate``: the current result after every item; keyed or global."""

    def __init__(self, graph: TransformGraph, upstream: Transform, op: AggregateOperation,
                 key_fn: Callable[[Any], Any] | None):
        super().__init__(graph, "rolling-aggregate", (upstream,), upstream.events)
        self.op = op
        self.key_fn = key_fn

    def add_to_dag(self, p: Planner) -> None:
        name = p.unique_vertex_name(self.name)
        events = self.upstream[0].events
        if self.key_fn is None:
            supplier = ProcessorMetaSupplier.of(ProcessorFactory(RollingAggregateP, None, self.op, events))
            pv = p.add_vertex(self, name, 1, supplier, self.events)
            p.add_edges(self, pv, lambda e, _o: e.distributed().all_to_one(name))
            return
        key = checked_key(self.key_fn, name)
        route = checked_key(self.key_fn, name, events)
        supplier = ProcessorMetaSupplier.of(ProcessorFactory(RollingAggregateP, key, self.op, events))
        pv = p.add_vertex(self, name, self.local_parallelism, supplier, self.events)
        p.add_edges(self, pv, lambda e, _o: e.distributed().partitioned(route))


class HashJoinTransform(Transform):
    """``hash_join``/``hash_join2``/builder: ``upstream[0]`` is the left stage, the others are joined."""

    def __init__(self, graph: TransformGraph, upstream: Sequence[Transform], clauses: Sequence[Any],
                 map_to_output_fn: Callable[..., Any], mode: str, tags: Sequence[Any] = (), inner: bool = False):
        super().__init__(graph, "hash-join", upstream, upstream[0].events)
        self.inner = inner
        self.clauses = list(clauses)
        self.map_to_output_fn = map_to_output_fn
        self.mode = mode
        self.tags = list(tags)

    def add_to_dag(self, p: Planner) -> None:
        name = p.unique_vertex_name(self.name)
        key_fns = [c.left_key_fn for c in self.clauses]
        joiner = p.add_vertex(self, name, self.local_parallelism, ProcessorMetaSupplier.of(ProcessorFactory(
            HashJoinP, key_fns, self.map_to_output_fn, self.mode, self.tags, self.events, self.inner)), self.events)
        p.edge(p.vertex_of(self.upstream[0]), joiner, 0)
        for ordinal, (joined, clause) in enumerate(zip(self.upstream[1:], self.clauses), start=1):
            collector = p.new_vertex(f"{name}-collector-{ordinal}", ProcessorMetaSupplier.of(ProcessorFactory(
                HashJoinCollectP, clause.right_key_fn, clause.right_projection_fn)), 1)
            p.edge(p.vertex_of(joined), collector, 0, lambda e, _o: e.distributed().broadcast())
            p.edge(collector, joiner, ordinal, lambda e, _o: e.broadcast().priority(-1))


class ProcessorFactory:
    """A picklable zero-argument processor factory: ``cls(*args)``."""

    def __init__(self, cls: type, *args: Any):
        self.cls = cls
        self.args = args

    def __call__(self) -> Any:
        return self.cls(*self.args)

    def __repr__(self) -> str:
        return f"{self.cls.__name__}()"
