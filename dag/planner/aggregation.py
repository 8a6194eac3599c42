"""Pre-aggregation: combining by key on the sending side of a partitioned edge, as Spark's ``reduceByKey`` does.

Three rewrites, each only where the result is provably the same and each switchable off in ``EngineConfig``:

1. ``pre_aggregate``: a partitioned edge whose destination is the library's ``accumulate_by_key_p``,
   ``aggregate_by_key_p`` (``accumulate`` mode) or ``combine_by_key_p`` (``combine`` mode), when

   - the destination has exactly this one inbound edge and a single-input operation (arity 1),
   - the operation has a ``combine_fn`` (accumulators can be merged),
   - the edge's key function is the aggregator's own (the same function object, e.g. the library's
     ``whole_item``/``entry_key``; for ``combine_by_key_p`` the edge must key by ``entry_key``),
   - the edge is not ``all_to_one`` (there is no key function).

   ``combine`` mode is skipped when the sender is itself a by-key aggregator (one entry per key already).
   The sender keeps one accumulator per key for its whole partition and sends ``(key, acc)`` entries; in
   ``accumulate`` mode the destination's processors are replaced by a combine of those entries that emits what
   the original processor would (``(key, acc)`` or ``map_to_output_fn(key, finish(acc))``).

2. ``fuse_accumulate``: ``X -> local partitioned -> accumulate_by_key_p -> partitioned(entry_key) ->
   combine_by_key_p``, where the accumulate vertex has only those two edges and its operation a ``combine_fn``:
   the accumulate vertex runs inside X's task (one accumulator per key per X processor instead of per member),
   and its edge to combine_by_key becomes the one map-side-combining shuffle. combine_by_key then sees the same
   keys with accumulators that combine to the same totals.

3. ``co_partition``: ``X -> pre-aggregated partitioned -> A -> partitioned -> D``, where the by-key aggregator
   ``A`` emits ``(key, result)`` entries (``accumulate_by_key_p``, or ``entry`` as its output function), the edge
   into ``D`` keys them with a function that provably reads only the key (``entry_key``, ``lambda e: e[0][1]``:
   ``dag/planner/entry_keys.py``), and ``A`` and ``D`` have the same parallelism on one member: X's sender routes
   each accumulator by that key part with the second edge's partitioner, so key ``k`` reaches the processor of
   ``A`` whose index is the processor of ``D`` that ``k``'s entry goes to. The edge ``A -> D`` becomes ``FUSED``
   (``A`` and ``D`` share a stage): the manual's TF-IDF (``tf`` counts by ``(document, word)``, ``tf-idf`` groups
   by word) shuffles once instead of twice. ``A`` still sees every accumulator of a key in one processor, and
   ``D`` every entry of a word, as partitioning promises; only which processor gets which key changes, and
   Jet promises nothing about that. On several members the first edge may be local (per-member aggregation), so
   the rewrite is left out there.

The library's processors are recognised by class (``AccumulateByKeyP``, ``AggregateByKeyP``, ``CombineByKeyP`` in
``processors.library.aggregating``) through their ``aggregate_operation``, ``key_fns`` and ``map_to_output_fn``
attributes. Only the library's own suppliers (``BuiltinSupplier`` of one of those classes, possibly wrapped in
a (meta) supplier) are instantiated to look; user code is never called at plan time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dag.planner.physical_plan import EdgeOp, PreAggregation, Route, VertexKind, VertexPlan
from edges.partitioner import Partitioner
from edges.routing import RoutingPolicy

__all__ = ["AggregatorInfo", "aggregator_of", "plan_pre_aggregation"]



@dataclass
class AggregatorInfo:
    """What the planner needs to know about a by-key aggregating vertex."""

    kind: str            # "accumulate" | "aggregate" | "combine"
    operation: Any
    key_fn: Any
    map_to_output_fn: Any = None


def _library_classes() -> dict[type, str]:
    try:
        from processors.library import aggregating
    except ImportError:  # the library is not there: nothing to recognise
        return {}
    names = {"AccumulateByKeyP": "accumulate", "AggregateByKeyP": "aggregate", "CombineByKeyP": "combine"}
    return {getattr(aggregating, n): kind for n, kind in names.items() if hasattr(aggregating, n)}


def _sample_processor(supplier: Any, classes: dict[type, str]) -> Any:
    """A processor from a library supplier of one of ``classes``, or None (user suppliers are never called)."""
    target = supplier
    for _ in range(3):  # a meta supplier wrapping a supplier wrapping the library's factory
        if getattr(target, "processor_class", None) in classes:
            return target()
        target = getattr(target, "supplier", None) or getattr(target, "factory", None)
        if target is None:
            return None
    return None


def aggregator_of(vertex: Any) -> AggregatorInfo | None:
    """Recognise the library's by-key aggregating processors (see the module docstring)."""
    classes = _library_classes()
    if not classes:
        return None
    proc = _sample_processor(vertex.supplier, classes)
    kind = classes.get(type(proc))
    if kind is None:
        return None
    op = getattr(proc, "aggregate_operation", None)
    key_fns = tuple(getattr(proc, "key_fns", None) or ())
    if op is None or op.arity != 1:
        return None
    if kind == "combine":
        from processors.api.functions import entry_key

        key_fn = key_fns[0] if key_fns else entry_key
    elif len(key_fns) == 1:
        key_fn = key_fns[0]
    else:
        return None
    return AggregatorInfo(kind, op, key_fn, getattr(proc, "map_to_output_fn", None))


def plan_pre_aggregation(dag: Any, vertices: dict[str, VertexPlan], members: int, config: Any) -> None:
    """Apply the rewrites of the module docstring to the planned vertices and edges, in place."""
    if not (config.pre_aggregate or config.fuse_accumulate):
        return
    infos: dict[str, AggregatorInfo | None] = {}

    def info_of(name: str) -> AggregatorInfo | None:
        if name not in infos:
            vp = vertices[name]
            infos[name] = aggregator_of(dag.get_vertex(name)) if vp.kind is VertexKind.PROCESSOR else None
        return infos[name]

    for vp in vertices.values():
        if len(vp.inbound) != 1 or vp.inbound[0].op is not EdgeOp.PARTITION_BY or vp.inbound[0].pre_aggregation:
            continue
        info = info_of(vp.name)
        if info is None or info.operation.combine_fn is None or not _keys_match(vp.inbound[0].edge, info):
            continue
        if config.fuse_accumulate and info.kind == "accumulate" and _try_fuse_accumulate(vp, info, vertices,
                                                                                           members, info_of):
            continue
        source = vertices[vp.inbound[0].source]
        if info.kind == "combine" and (info_of(source.name) is not None or source.combine_substitute is not None):
            continue  # the sender's output already has one accumulator per key
        if config.pre_aggregate:
            _pre_aggregate(vp, info)
    if config.co_partition and members == 1:
        for vp in vertices.values():
            info = info_of(vp.name)
            if info is not None:
                _try_co_partition(vp, info, vertices)


def _keys_match(edge: Any, info: AggregatorInfo) -> bool:
    return (edge.routing_policy is RoutingPolicy.PARTITIONED and not edge.is_all_to_one
            and edge.key_fn is info.key_fn)


def _pre_aggregate(vp: VertexPlan, info: AggregatorInfo) -> None:
    ep = vp.inbound[0]
    if info.kind == "combine":
        ep.pre_aggregation = PreAggregation("combine", info.operation, info.key_fn)
        return
    output = "entry" if info.kind == "accumulate" else "finish"
    pre = PreAggregation("accumulate", info.operation, info.key_fn, receiver_output=output,
                         map_to_output_fn=info.map_to_output_fn)
    ep.pre_aggregation = pre
    vp.combine_substitute = pre


def _try_fuse_accumulate(acc: VertexPlan, info: AggregatorInfo, vertices: dict[str, VertexPlan], members: int,
                         info_of: Any) -> bool:
    into = acc.inbound[0]
    src = vertices[into.source]
    if len(acc.outbound) != 1 or src.kind.is_sink_only:
        return False
    if not (into.edge.is_local or members == 1):
        return False
    out = acc.outbound[0]
    combiner = info_of(out.dest)
    if (out.op is not EdgeOp.PARTITION_BY or len(vertices[out.dest].inbound) != 1 or combiner is None
            or combiner.kind != "combine" or not _keys_match(out.edge, combiner)):
        return False
    into.op = EdgeOp.ACCUMULATE_FUSED
    into.reason = f"'{acc.name}' runs inside the tasks of '{src.name}'"
    acc.absorbed_into = src.name
    out.pre_aggregation = PreAggregation("accumulate", info.operation, info.key_fn, absorbed_vertex=acc.name)
    out.source_parallelism = src.total_parallelism
    out.reason = f"sent from the tasks of '{src.name}' (map-side combine)"
    return True


_ONE_MEMBER_ROUTES = (Route.PARTITIONED_LOCAL, Route.PARTITIONED_ALL)


def _try_co_partition(agg: VertexPlan, info: AggregatorInfo, vertices: dict[str, VertexPlan]) -> None:
    """Rewrite 3 of the module docstring, on one member, where it applies."""
    from dag.planner.entry_keys import key_part
    from processors.api.functions import entry

    if len(agg.inbound) != 1 or len(agg.outbound) != 1 or agg.persisted:
        return
    into, out = agg.inbound[0], agg.outbound[0]
    pre = into.pre_aggregation
    if pre is None or into.route not in _ONE_MEMBER_ROUTES:
        return
    if not (info.kind == "accumulate" or info.map_to_output_fn is entry):
        return  # the entries' key is the aggregation key only for entry outputs
    consumer = vertices[out.dest]
    if (out.op is not EdgeOp.PARTITION_BY or out.route not in _ONE_MEMBER_ROUTES or out.aligned
            or out.pre_aggregation is not None or out.edge.is_all_to_one
            or consumer.total_parallelism != agg.total_parallelism):
        return
    part = key_part(out.edge.key_fn)
    if part is None:
        return
    pre.route_key_fn, pre.route_edge = part, out.label
    pre.route_partitioner = out.edge.partitioner or Partitioner.default()
    out.op = EdgeOp.FUSED
    out.reason = (f"co-partitioned: {into.label} already routes each key to the processor its entry goes to "
                  "(EngineConfig.co_partition)")
