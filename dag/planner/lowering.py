"""Lowering a DAG to Spark: every vertex an RDD of P = L*M partitions, every edge the cheapest Spark operation
that keeps Jet's routing promise. Pure: no SparkSession is needed to plan.

=====================================  =======================================================================
DAG construct                          Spark lowering (``EdgeOp`` / ``Route``)
=====================================  =======================================================================
vertex, local parallelism L, M members  P = L*M partitions; processor g in partition g, member g // L
stateless built-in between unicast      widened to its consumer's L (``widen_stateless``, see
  edges, or a driver sink               ``dag/planner/widening.py``): results cannot change
source vertex                          ``parallelize(range(P), P)`` then ``mapPartitionsWithIndex``;
                                       ``read_map_p``/``read_list_p``: the driver data sliced into P partitions;
                                       ``read_text_p``: Spark's text input with P partitions
unicast/isolated, equal L, one-to-one   FUSED: same task, drivers chained in-process, no serialization
  (source's only edge, dest's only      (``fuse_narrow_edges=False``: partitionBy with route ``same``; a chain
  non-broadcast input)                  is cut by such a partitionBy every ``MAX_FUSED_CHAIN`` vertices)
unicast/isolated, equal L, otherwise    NARROW: partition g of the upstream (persisted) output, no shuffle
unicast, Ld < Ls (M = 1 or distributed) COALESCE (narrow, any candidate will do)
unicast, Ld > Ls (M = 1 or distributed) REPARTITION (items dealt round-robin, one shuffle)
unicast local on M > 1, unequal L       PARTITION_BY, route ``unicast-member`` (stays within the member)
isolated, unequal L                     PARTITION_BY, route ``isolated``: Jet's {i : i % Ls == p % Ld}
partitioned (incl. all_to_one)          PARTITION_BY: ``partition % Ld`` on the sender's member (local),
                                       ``partition % (Ld*M)`` (distributed), ``k*Ld + partition % Ld``
                                       (distribute_to(k)); identity partitioner over target indices
fanout, distributed, M > 1              PARTITION_BY, route ``fanout``: a copy per member, round-robin within it
fanout, local (or M = 1)                as unicast
broadcast                              BROADCAST: collect once, ``SparkContext.broadcast``; a local edge on
                                       M > 1 gives each member only its own member's upstream items; the
                                       broadcast edges ready at that point are collected in one Spark job
broadcast into a vertex of one          as unicast into that processor (COALESCE, or NARROW when the sender
  processor in total                    has one too): it gets every item either way; no broadcast variable
                                       and no Spark job of its own (the manual's ``doc-count``)
several non-broadcast inbound edges     each keyed to its target processor and ``partitionBy`` with the SAME
                                       partitioner function, then ``union`` (partition-aligned), parents in
                                       ascending priority; broadcast inputs merged in by priority
several outbound edges                  one pass tags items with the outbound ordinal, persisted once,
                                       each consumer reads its ordinal (never recomputed); a dealt driver
                                       source is read once per edge instead, each edge dealt on demand in its
                                       consumer's tasks (``read_per_edge``, see ``widening.py``)
partitioned edge into accumulate/       pre-aggregated on the sending side (``pre_aggregate``): the sender
  aggregate/combine_by_key_p            accumulates (or combines) per key, the receiver combines accumulators
by-key aggregator -> partitioned by a   FUSED (``co_partition``, one member, equal parallelism): the
  function of the entry's key only      aggregator's pre-aggregated input is routed by that key part, so each
                                       entry is already in its consumer's task; one shuffle fewer
X -> local partitioned -> accumulate_   ACCUMULATE_FUSED (``fuse_accumulate``): the accumulate vertex runs in
  by_key -> partitioned -> combine_by_key X's task, one map-side-combining shuffle into combine_by_key
map_p/filter_p/flat_map_p chain ending   one generated loop accumulating into the sender's dict (``tight_loops``,
  a stage that pre-aggregates           see ``dag/planner/loops.py``)
leaf vertex                            one Spark action: ``count()`` (processor sinks), ``runJob`` per group of
                                       partitions (driver sinks), ``saveAsTextFile`` (text sinks)
=====================================  =======================================================================

Validation done here (Jet does it at job execution): an isolated edge must be local when M > 1;
``distribute_to(k)`` needs a partitioned edge and an existing member k; runtime-bound sources take no input and
runtime-bound sinks give no output.
"""

from __future__ import annotations

from typing import Any

from jetspark_base.errors import DagValidationError
from dag.planner.aggregation import plan_pre_aggregation
from dag.planner.loops import plan_tight_loops
from dag.planner.widening import plan_dealing, widen_stateless
from dag.planner.physical_plan import EdgeOp, EdgePlan, PhysicalPlan, Route, StagePlan, VertexKind, VertexPlan
from edges.routing import RoutingPolicy

__all__ = ["plan_dag"]


def plan_dag(dag: Any, config: Any, members: int, default_parallelism: int) -> PhysicalPlan:
    """Plan ``dag`` for ``members`` logical members and the given default local parallelism.

    >>> from dag import DAG, EngineConfig
    >>> from processors import noop_p
    >>> d = DAG(); _ = d.new_vertex("v", noop_p())
    >>> plan_dag(d, EngineConfig(), members=1, default_parallelism=2).vertices["v"].total_parallelism
    2
    """
    if type(members) is not int or members <= 0:
        raise DagValidationError(f"members must be an int > 0, got {members!r}")
    if type(default_parallelism) is not int or default_parallelism <= 0:
        raise DagValidationError(f"default_parallelism must be an int > 0, got {default_parallelism!r}")
    ordered = list(dag)  # validates (non-empty, ordinals 0..n-1, no cycle) and sorts topologically
    vertices = {v.name: _plan_vertex(v, members, default_parallelism) for v in ordered}
    if config.widen_stateless:
        widen_stateless(dag, ordered, vertices, members)
    if config.deal_driver_sources:
        plan_dealing(dag, vertices)
    edges: list[EdgePlan] = []
    for v in ordered:
        for edge in sorted(dag.get_outbound_edges(v.name), key=lambda e: e.source_ordinal):
            plan = _lower_edge(edge, vertices[edge.source_name], vertices[edge.dest_name], members)
            edges.append(plan)
            vertices[plan.source].outbound.append(plan)
            vertices[plan.dest].inbound.append(plan)
    for vp in vertices.values():
        vp.inbound.sort(key=lambda ep: ep.dest_ordinal)
        vp.read_per_edge = vp.dealt and len(vp.outbound) > 1
        vp.persisted = len(vp.outbound) > 1 and not vp.read_per_edge
    _fuse(vertices, config)
    _align_unions(vertices)
    plan_pre_aggregation(dag, vertices, members, config)
    stages = _stages(vertices)
    if config.tight_loops:
        plan_tight_loops(dag, vertices, stages)
    options = {name: getattr(config, name)
               for name in ("fuse_narrow_edges", "pre_aggregate", "fuse_accumulate", "widen_stateless",
                            "deal_driver_sources", "tight_loops", "co_partition")}
    return PhysicalPlan(members, default_parallelism, config.partition_count, vertices, edges, stages, options)


def _plan_vertex(vertex: Any, members: int, default_parallelism: int) -> VertexPlan:
    meta = vertex.meta_supplier
    kind_name = getattr(meta, "runtime_kind", None)
    kind = VertexKind(kind_name) if kind_name else VertexKind.PROCESSOR
    arg = None
    if kind in (VertexKind.DRIVER_SOURCE, VertexKind.DRIVER_SINK):
        arg = meta.collection
    elif kind in (VertexKind.SPARK_TEXT_SOURCE, VertexKind.SPARK_TEXT_SINK):
        arg = meta.path
    lp = vertex.determine_local_parallelism(default_parallelism)
    return VertexPlan(vertex.name, kind, lp, lp * members, runtime_arg=arg, description=vertex.description)


def _lower_edge(edge: Any, src: VertexPlan, dst: VertexPlan, members: int) -> EdgePlan:
    _check_edge(edge, src, dst, members)
    policy = edge.routing_policy
    local = edge.is_local or members == 1
    ls, ld = src.local_parallelism, dst.local_parallelism
    member = None
    reason = ""
    if policy is RoutingPolicy.BROADCAST and dst.total_parallelism == 1:
        op, route = (EdgeOp.NARROW if src.total_parallelism == 1 else EdgeOp.COALESCE), Route.UNICAST_ALL
        reason = f"broadcast into the only processor of '{dst.name}': every item reaches it as on a unicast edge"
    elif policy is RoutingPolicy.BROADCAST:
        op, route = EdgeOp.BROADCAST, (Route.BROADCAST_MEMBER if local and members > 1 else Route.BROADCAST_ALL)
    elif policy is RoutingPolicy.PARTITIONED:
        op = EdgeOp.PARTITION_BY
        if isinstance(edge.distributed_to, int) and not isinstance(edge.distributed_to, bool) and members > 1:
            route, member = Route.PARTITIONED_MEMBER, edge.distributed_to
        else:  # on one member both routes give partition % Ld; keep the one the edge asked for
            route = Route.PARTITIONED_LOCAL if edge.is_local else Route.PARTITIONED_ALL
    elif policy is RoutingPolicy.FANOUT and not local:
        op, route = EdgeOp.PARTITION_BY, Route.FANOUT
    elif ls == ld:
        op, route = EdgeOp.NARROW, Route.SAME
    elif policy is RoutingPolicy.ISOLATED:
        op, route = EdgeOp.PARTITION_BY, Route.ISOLATED
    elif local and members > 1:
        op, route = EdgeOp.PARTITION_BY, Route.UNICAST_MEMBER
    else:
        op, route = (EdgeOp.COALESCE if ld < ls else EdgeOp.REPARTITION), Route.UNICAST_ALL
    return EdgePlan(
        edge=edge, source=src.name, dest=dst.name, source_ordinal=edge.source_ordinal,
        dest_ordinal=edge.dest_ordinal, priority=edge.get_priority(), queue_size=edge.queue_size(),
        op=op, route=route, source_parallelism=src.total_parallelism, dest_parallelism=dst.total_parallelism,
        member=member, reason=reason,
    )


def _check_edge(edge: Any, src: VertexPlan, dst: VertexPlan, members: int) -> None:
    if edge.routing_policy is RoutingPolicy.ISOLATED and not edge.is_local and members > 1:
        raise DagValidationError(
            f"Isolated edges must be local: {edge}; with {members} members an isolated edge cannot cross "
            "members. Remove .distributed()/.distribute_to() or use another routing policy."
        )
    target = edge.distributed_to
    if isinstance(target, int) and not isinstance(target, bool):
        if edge.routing_policy is not RoutingPolicy.PARTITIONED:
            raise DagValidationError(
                f"An edge distributing to a specific member must be partitioned: {edge}; add .partitioned(key_fn) "
                "or .all_to_one()"
            )
        if not 0 <= target < members:
            raise DagValidationError(
                f"The target member of an edge is not present in the cluster: {edge} distributes to member {target}, "
                f"but the engine has {members} member(s) (indices 0..{members - 1})"
            )
    if src.kind.is_sink_only:
        raise DagValidationError(
            f"{edge}: vertex '{src.name}' is a {src.kind.value} sink and emits nothing; it cannot have outbound edges"
        )
    if dst.kind.is_source_only:
        raise DagValidationError(
            f"{edge}: vertex '{dst.name}' is a {dst.kind.value} source and takes no input; it cannot have inbound edges"
        )


def _non_broadcast_inputs(vp: VertexPlan) -> list[EdgePlan]:
    return [ep for ep in vp.inbound if ep.op is not EdgeOp.BROADCAST]


MAX_FUSED_CHAIN = 64
"""The most vertices fused into one stage. A task runs its chain as nested generators (a few Python frames per
vertex), so a longer chain is cut into stages joined by ``partitionBy`` (route ``same``): chains of any length
run, far below Python's recursion limit."""


def _fuse(vertices: dict[str, VertexPlan], config: Any) -> None:
    chain_length: dict[str, int] = {}  # vertices (this one included) fused into this vertex's stage so far
    for vp in vertices.values():
        chain_length[vp.name] = 1
        for ep in vp.inbound:
            if ep.op is not EdgeOp.NARROW:
                continue
            src = vertices[ep.source]
            if not config.fuse_narrow_edges:
                ep.op, ep.reason = EdgeOp.PARTITION_BY, "fusion switched off (EngineConfig.fuse_narrow_edges)"
            elif len(src.outbound) == 1 and len(_non_broadcast_inputs(vp)) == 1:
                if chain_length[src.name] >= MAX_FUSED_CHAIN:
                    ep.op = EdgeOp.PARTITION_BY
                    ep.reason = f"chain cut: at most {MAX_FUSED_CHAIN} vertices are fused into one stage"
                else:
                    ep.op = EdgeOp.FUSED
                    chain_length[vp.name] = chain_length[src.name] + 1


def _align_unions(vertices: dict[str, VertexPlan]) -> None:
    for vp in vertices.values():
        inputs = _non_broadcast_inputs(vp)
        if len(inputs) < 2:
            continue
        for ep in inputs:
            ep.aligned = True
            if ep.op in (EdgeOp.NARROW, EdgeOp.COALESCE, EdgeOp.REPARTITION):
                ep.reason = f"was {ep.op.value}; keyed so it can be unioned partition-aligned with the other inputs"
                ep.op = EdgeOp.PARTITION_BY


def _stages(vertices: dict[str, VertexPlan]) -> list[StagePlan]:
    stages: list[StagePlan] = []
    for vp in vertices.values():
        if vp.absorbed_into is not None:
            vp.stage = vertices[vp.absorbed_into].stage
            stages[vp.stage].absorbed.append(vp.name)
            continue
        fused = [ep for ep in vp.inbound if ep.op is EdgeOp.FUSED]
        if fused:
            vp.stage = vertices[fused[0].source].stage
            stages[vp.stage].vertices.append(vp.name)
        else:
            vp.stage = len(stages)
            stages.append(StagePlan(vp.stage, [vp.name], vp.total_parallelism))
    stages = _topological_stages(stages, vertices)
    for stage in stages:
        tail = vertices[stage.tail]
        if tail.is_leaf:
            stage.action = _action_of(tail)
    return stages


def _topological_stages(stages: list[StagePlan], vertices: dict[str, VertexPlan]) -> list[StagePlan]:
    """Renumber stages so every stage comes after the stages it reads (a vertex fused into an early stage may
    take a broadcast input from a later one). The stage graph is acyclic: only a chain's tail has edges out."""
    deps: list[set[int]] = [set() for _ in stages]
    for vp in vertices.values():
        for ep in vp.inbound:
            src_stage = vertices[ep.source].stage
            if src_stage != vp.stage:
                deps[vp.stage].add(src_stage)
    order: list[int] = []
    state = [0] * len(stages)  # 0 new, 1 visiting, 2 done
    for root in range(len(stages)):
        if state[root]:
            continue
        stack = [(root, iter(sorted(deps[root])))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next((c for c in children if state[c] == 0), None)
            if child is None:
                stack.pop()
                state[node] = 2
                order.append(node)
            else:
                state[child] = 1
                stack.append((child, iter(sorted(deps[child]))))
    renumber = {old: new for new, old in enumerate(order)}
    for vp in vertices.values():
        vp.stage = renumber[vp.stage]
    result = [stages[old] for old in order]
    for stage in result:
        stage.id = renumber[stage.id]
    return result


def _action_of(vp: VertexPlan) -> str:
    if vp.kind is VertexKind.DRIVER_SINK:
        kind, name = vp.runtime_arg
        return f"runJob(per group of partitions) into engine.get_{kind}({name!r})"
    if vp.kind is VertexKind.SPARK_TEXT_SINK:
        return f"saveAsTextFile({vp.runtime_arg!r})"
    return "count() (runs the sink processors)"
