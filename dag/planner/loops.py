"""Tight loops: which fused chains the runtime runs as one generated loop (``EngineConfig.tight_loops``).

A stage whose tail sends on a pre-aggregating edge (the sender accumulates by key: the edge into
``accumulate_by_key_p`` / ``aggregate_by_key_p``, or the fused ``accumulate`` vertex of word count) and whose
last vertices are built-in stateless processors (exactly ``map_p``, ``filter_p``, ``flat_map_p`` or a
``*_using_context_p`` variant), each with one non-broadcast inbound edge and one outbound edge, runs those
vertices as one generated function of nested loops that accumulates straight into the sender's per-key dict
(``processors/library/stateless_loops.py``): no list of the chain's output is built, no processor is driven batch by
batch. Results, per-edge order, metrics and lifecycle calls stay as without the rewrite (see that module);
``explain()`` names the loop's vertices on the stage (``StagePlan.loop``).
"""

from __future__ import annotations

from typing import Any

from dag.planner.physical_plan import EdgeOp, EdgePlan, StagePlan, VertexKind, VertexPlan

__all__ = ["plan_tight_loops"]


def _sending_edge(tail: VertexPlan, vertices: dict[str, VertexPlan]) -> EdgePlan | None:
    """The edge the stage's tasks send on (an absorbed accumulate vertex's outbound edge), or None."""
    if len(tail.outbound) != 1:
        return None
    ep = tail.outbound[0]
    if ep.op is EdgeOp.ACCUMULATE_FUSED:
        ep = vertices[ep.dest].outbound[0]
    return ep


def _loopable(vp: VertexPlan, dag: Any) -> bool:
    from processors.library.stateless_loops import loop_kind

    if vp.kind is not VertexKind.PROCESSOR or vp.combine_substitute is not None or len(vp.outbound) != 1:
        return False
    if len(vp.inbound) != 1 or vp.inbound[0].op is EdgeOp.BROADCAST:
        return False
    return loop_kind(getattr(dag.get_vertex(vp.name).supplier, "processor_class", None)) is not None


def plan_tight_loops(dag: Any, vertices: dict[str, VertexPlan], stages: list[StagePlan]) -> None:
    """Set ``StagePlan.loop`` (the vertices run as one generated loop) on every stage that qualifies."""
    for stage in stages:
        tail = vertices[stage.tail]
        ep = _sending_edge(tail, vertices)
        pre = ep.pre_aggregation if ep is not None and ep.op is EdgeOp.PARTITION_BY else None
        if pre is None or pre.mode != "accumulate" or tail.persisted:
            continue
        loop: list[str] = []
        for name in reversed(stage.vertices):
            if not _loopable(vertices[name], dag):
                break
            loop.insert(0, name)
        stage.loop = loop
