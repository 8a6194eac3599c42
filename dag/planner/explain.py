"""Text and DOT views of a :class:`~dag.planner.physical_plan.PhysicalPlan`, in the spirit of ``RDD.toDebugString``.

They read the plan's data (:class:`~dag.planner.plan_parts.PlanData`), not the class that offers them as methods.

``explain()`` lists every stage (one ``mapPartitionsWithIndex`` pass per partition, i.e. one Spark task per
partition) with its vertices and their parallelism, then every edge with the Spark operation it became, then
the Spark actions. ``to_dot()`` draws stages as clusters and labels edges with their Spark operation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dag.planner.plan_parts import EdgeOp, Route, VertexKind

if TYPE_CHECKING:
    from dag.planner.plan_parts import EdgePlan, PlanData, VertexPlan

__all__ = ["describe_edge_op", "explain", "plan_to_dot"]

_ROUTE_TEXT = {
    Route.SAME: "processor g -> processor g",
    Route.UNICAST_MEMBER: "round-robin within the sender's member",
    Route.UNICAST_ALL: "round-robin over all processors",
    Route.ISOLATED: "isolated: p -> {{i : i % Ls == p % Ld}} within the member",
    Route.FANOUT: "a copy to every member, round-robin within it",
    Route.PARTITIONED_LOCAL: "processor m*{ld} + partition % {ld} of the sender's member m",
    Route.PARTITIONED_ALL: "processor partition % {pd}",
    Route.PARTITIONED_MEMBER: "processor {member}*{ld} + partition % {ld} (member {member})",
    Route.BROADCAST_MEMBER: "each member's processors get their own member's items",
    Route.BROADCAST_ALL: "every processor gets every item",
}


def _route_text(ep: EdgePlan, members: int) -> str:
    ld = max(1, ep.dest_parallelism // members)
    return _ROUTE_TEXT[ep.route].format(ld=ld, pd=ep.dest_parallelism, member=ep.member)  # type: ignore[index]


def describe_edge_op(ep: EdgePlan, partition_count: int, members: int = 1) -> str:
    """One line: the Spark operation an edge became, e.g. ``partitionBy(4, ...) [pre-aggregated ...]``."""
    op = ep.op
    if op is EdgeOp.FUSED:
        text = "fused (same task, no serialization)"
    elif op is EdgeOp.ACCUMULATE_FUSED:
        text = f"fused accumulate ({ep.reason})"
    elif op is EdgeOp.NARROW:
        text = "narrow (partition g -> g of the upstream output, no shuffle)"
    elif op is EdgeOp.COALESCE:
        text = f"coalesce({ep.source_parallelism} -> {ep.dest_parallelism}, no shuffle)"
    elif op is EdgeOp.REPARTITION:
        text = f"repartition({ep.source_parallelism} -> {ep.dest_parallelism}, items dealt round-robin, one shuffle)"
    elif op is EdgeOp.BROADCAST:
        text = f"broadcast variable (collected once, in one Spark job with the other broadcast edges ready by then; " \
               f"{_route_text(ep, members)})"
    else:
        partitioner = ""
        if ep.route in (Route.PARTITIONED_LOCAL, Route.PARTITIONED_ALL, Route.PARTITIONED_MEMBER):
            chosen = getattr(ep.edge, "partitioner", None)
            if ep.pre_aggregation is not None and ep.pre_aggregation.route_key_fn is not None:
                chosen = ep.pre_aggregation.route_partitioner  # co-partitioned: the next edge's, on the key part
            name = repr(chosen) if chosen is not None else "Partitioner.default()"
            if getattr(ep.edge, "is_all_to_one", False):
                name = "all_to_one"
            partitioner = f"partition = {name} of {partition_count}; "
        text = (f"partitionBy({ep.dest_parallelism}, identity on target processor; {partitioner}"
                f"{_route_text(ep, members)})")
    extras = []
    if ep.aligned:
        extras.append("aligned for union")
    if ep.pre_aggregation is not None:
        extras.append(ep.pre_aggregation.describe())
    if ep.reason and op is not EdgeOp.ACCUMULATE_FUSED and not (ep.pre_aggregation and
                                                              ep.pre_aggregation.absorbed_vertex):
        extras.append(ep.reason)
    return text + "".join(f" [{e}]" for e in extras)


def _vertex_line(vp: VertexPlan, members: int) -> str:
    what = vp.kind.value
    if vp.runtime_arg is not None:
        what += f" {vp.runtime_arg!r}"
    if vp.description is not None:
        what += f" ({vp.description})"
    notes = []
    if vp.widened_from is not None:
        notes.append(f"widened from local parallelism {vp.widened_from} ({vp.widening_reason})")
    if vp.dealt:
        notes.append("entries dealt to its processors on demand in shrinking chunks (EngineConfig.deal_driver_sources)")
    if vp.read_per_edge:
        notes.append(f"read once for each of its {len(vp.outbound)} outbound edges, each dealt on its own")
    if vp.persisted:
        notes.append(f"output tagged by ordinal and persisted once ({len(vp.outbound)} outbound edges)")
    if vp.combine_substitute is not None:
        notes.append("runs as a combine of pre-aggregated accumulators")
    if vp.absorbed_into is not None:
        notes.append(f"accumulates inside the tasks of '{vp.absorbed_into}'")
    broadcasts = [f"'{ep.source}'" for ep in vp.inbound if ep.op is EdgeOp.BROADCAST]
    if broadcasts:
        notes.append("broadcast input from " + ", ".join(broadcasts))
    note = "".join(f"; {n}" for n in notes)
    return (f"    {vp.name}: {what}, parallelism {vp.total_parallelism} "
            f"(local {vp.local_parallelism} x {members} member{'s' if members != 1 else ''}){note}")


def _stage_input(head: VertexPlan) -> str:
    if not head.inbound:
        if head.kind is VertexKind.DRIVER_SOURCE:
            how = "dealt on demand" if head.dealt else "sliced"
            return f"parallelize(driver {head.runtime_arg[0]} {head.runtime_arg[1]!r} {how}, {head.total_parallelism})"
        if head.kind is VertexKind.SPARK_TEXT_SOURCE:
            return f"textFile({head.runtime_arg!r}, {head.total_parallelism} partitions)"
        return f"parallelize(range({head.total_parallelism}), {head.total_parallelism})"
    shuffled = [ep for ep in head.inbound if ep.op is not EdgeOp.BROADCAST]
    if len(shuffled) > 1:
        return "union of " + ", ".join(f"'{ep.source}'" for ep in sorted(shuffled, key=_priority_key)) + \
            " (same partitioner, partition-aligned, ascending priority)"
    if shuffled:
        return f"'{shuffled[0].source}' via {shuffled[0].op.value}"
    return f"parallelize(range({head.total_parallelism}), {head.total_parallelism})"


def _priority_key(ep: EdgePlan) -> tuple[int, int]:
    return (ep.priority, ep.dest_ordinal)


def explain(plan: PlanData) -> str:
    """The plan as text (see the module docstring)."""
    members = plan.members
    lines = [f"PhysicalPlan: {len(plan.vertices)} vertices, {len(plan.stages)} stages, members={members}, "
             f"default local parallelism={plan.default_parallelism}, partition_count={plan.partition_count}",
             "optimisations: " + ", ".join(f"{k}={'on' if v else 'off'}" for k, v in plan.options.items())]
    for stage in plan.stages:
        head = plan.vertices[stage.head]
        if head.read_per_edge:
            lines.append(f"Stage {stage.id}: no tasks of its own; per outbound edge, {stage.partitions} "
                         f"partitions of {_stage_input(head)} run in the consumer's tasks")
        else:
            lines.append(f"Stage {stage.id}: {stage.partitions} tasks, mapPartitionsWithIndex over "
                         f"{_stage_input(head)}")
        for name in stage.vertices + stage.absorbed:
            lines.append(_vertex_line(plan.vertices[name], members))
        if stage.loop:
            into = stage.absorbed[0] if stage.absorbed else f"the sender to '{plan.vertices[stage.tail].outbound[0].dest}'"
            lines.append(f"    tight loop: {' -> '.join(repr(n) for n in stage.loop)} -> accumulate into "
                         f"{repr(into) if stage.absorbed else into}, one generated loop per task, no lists "
                         "between them (EngineConfig.tight_loops)")
        if stage.action:
            lines.append(f"    action: {stage.action}")
    lines.append("Edges:")
    for ep in plan.edges:
        lines.append(f"  {ep.label}  (stage {plan.vertices[ep.source].stage} -> stage "
                     f"{plan.vertices[ep.dest].stage}, priority {ep.priority}): "
                     f"{describe_edge_op(ep, plan.partition_count, members)}")
    return "\n".join(lines)


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def plan_to_dot(plan: PlanData) -> str:
    """The plan in DOT: one cluster per stage, edges labelled with their Spark operation."""
    out = ["digraph PhysicalPlan {", "\tcompound=true;", "\tnode [shape=box];"]
    for stage in plan.stages:
        label = f"Stage {stage.id} ({stage.partitions} tasks)"
        if stage.action:
            label += f"\\naction: {_esc(stage.action)}"
        out.append(f"\tsubgraph cluster_{stage.id} {{")
        out.append(f'\t\tlabel="{label}";')
        for name in stage.vertices + stage.absorbed:
            vp = plan.vertices[name]
            described = "" if vp.description is None else f"\\n{_esc(vp.description)}"
            label = f"{_esc(name)}\\n{vp.kind.value} x{vp.total_parallelism}{described}"
            out.append(f'\t\t"{_esc(name)}" [label="{label}"];')
        out.append("\t}")
    for ep in plan.edges:
        label = _esc(ep.op.value if ep.op is not EdgeOp.PARTITION_BY else f"partitionBy({ep.dest_parallelism})")
        if ep.pre_aggregation is not None:
            label += "\\npre-aggregated"
        if ep.op is EdgeOp.BROADCAST:
            label = "broadcast variable"
        out.append(f'\t"{_esc(ep.source)}" -> "{_esc(ep.dest)}" [label="{label}"];')
    out.append("}")
    return "\n".join(out)
