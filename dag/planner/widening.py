"""Widening: giving a vertex more processors than its local parallelism asks for, where results cannot change.

Users port Jet DAGs with ``local_parallelism=1`` on cheap vertices (the manual's ``doc-lines``), and on Jet a
unicast edge from one processor to many is an in-memory queue. On Spark it is a shuffle of every item the
vertex emits (2.4 M lines for the manual's TF-IDF). Three rewrites, switched by
``EngineConfig.widen_stateless`` and shown in ``explain()`` (``widened from local parallelism 1``):

1. A *stateless built-in* vertex (a ``BatchTransform``: ``map_p``, ``filter_p``, ``flat_map_p``, ``noop_p``
   and the ``*_using_context_p`` variants) whose inbound and outbound edges are all unicast takes the largest
   local parallelism of its consumers. Its output for an item does not depend on which processor handles it,
   and a unicast edge lets any processor take any item, so every run of the widened DAG is a run the original
   DAG allows: the same multiset of items reaches every consumer, per-edge order between a sending and a
   receiving processor is kept, and metrics count the same items (spread over more processors). What changes
   is observable only through processor identity: more processors are created (``init``/``close`` and a
   ``ContextFactory``'s create/destroy run once per processor, as always). Vertices are visited from the
   sinks up, so a chain of such vertices widens together; the shuffle moves to the vertex's input, usually
   far fewer items (documents instead of lines).
2. A *driver sink* (``write_map_p``/``write_list_p``) with one unicast inbound edge takes its upstream's
   parallelism: its items go to one driver-side collection anyway, and reading the upstream's partitions in
   index order delivers them in the same order as the ``coalesce`` it replaces, without running the
   upstream's partitions one after another in a single task.
3. A *driver source* (``read_map_p``/``read_list_p``) whose outbound edges all let any of its processors send
   any item (unicast, or broadcast into a vertex of one processor in total: lowered as unicast into that
   processor, see ``lowering.py``) takes the largest local parallelism of its consumers (after they were
   widened): the collection is spread over more processors, each emitting its share in collection order,
   instead of one processor dealing every entry round-robin; the consumers get the same multiset of items,
   and the source no longer needs a stage and a shuffle of its own (the manual's word count reads ``docs`` at
   local parallelism 1; the manual's TF-IDF also broadcasts ``doc-source`` into the one ``doc-count``).

Under the same condition :func:`plan_dealing` marks a driver source with more than one processor, widened or
not, to hand out its entries on demand (``EngineConfig.deal_driver_sources``, ``dag/runtime/staged/dealer.py``)
rather than in equal-count slices, so entries of unequal cost even out over the processors; ``explain()`` shows
``dealt on demand``. A dealt source with several outbound edges is read once per edge
(``VertexPlan.read_per_edge``): each edge has its own dealing, done in the consumer's tasks as they ask, instead
of one pass tagged and persisted (that pass would deal the entries by count before any consumer runs). Every
edge still gets every entry once; which processor of the source emitted an entry may differ between the edges,
which no consumer of these edges can observe.
"""

from __future__ import annotations

from typing import Any

from dag.planner.physical_plan import VertexKind, VertexPlan
from edges.routing import RoutingPolicy

__all__ = ["widen_stateless", "is_stateless_builtin", "plan_dealing"]


def is_stateless_builtin(vertex: Any) -> bool:
    """True for a vertex made by one of the library's stateless factories (a ``BatchTransform`` supplier)."""
    from processors.api.processor import BatchTransform

    cls = getattr(vertex.supplier, "processor_class", None)
    return isinstance(cls, type) and issubclass(cls, BatchTransform)


def _all_unicast(edges: list[Any]) -> bool:
    return all(e.routing_policy is RoutingPolicy.UNICAST for e in edges)


def _any_processor(edge: Any, vertices: dict[str, VertexPlan]) -> bool:
    """True when any processor of the edge's source may send any item: a unicast edge, or a broadcast edge into
    a vertex of one processor in total (lowered as unicast into it, see ``lowering.py``)."""
    return edge.routing_policy is RoutingPolicy.UNICAST or (
        edge.routing_policy is RoutingPolicy.BROADCAST and vertices[edge.dest_name].total_parallelism == 1)


def widen_stateless(dag: Any, ordered: list[Any], vertices: dict[str, VertexPlan], members: int) -> None:
    """Apply the rewrites of the module docstring to the planned ``vertices`` (in place)."""
    for v in ordered:
        vp = vertices[v.name]
        inbound = dag.get_inbound_edges(v.name)
        if vp.kind is VertexKind.DRIVER_SINK and len(inbound) == 1 and _all_unicast(inbound):
            _widen(vp, vertices[inbound[0].source_name].local_parallelism, members,
                   "driver sink: reads its upstream's partitions, same items in the same order")
    for v in reversed(ordered):
        vp = vertices[v.name]
        inbound, outbound = dag.get_inbound_edges(v.name), dag.get_outbound_edges(v.name)
        if vp.kind is VertexKind.DRIVER_SOURCE and outbound and all(_any_processor(e, vertices) for e in outbound):
            target = max(vertices[e.dest_name].local_parallelism for e in outbound)
            _widen(vp, target, members, "driver source: its entries spread over more processors, each share in "
                                        "order, into edges that let any processor take any item")
            continue
        if vp.kind is not VertexKind.PROCESSOR or not is_stateless_builtin(v):
            continue
        if inbound and outbound and _all_unicast(inbound) and _all_unicast(outbound):
            target = max(vertices[e.dest_name].local_parallelism for e in outbound)
            _widen(vp, target, members, "stateless built-in between unicast edges: results cannot change")


def _widen(vp: VertexPlan, local_parallelism: int, members: int, reason: str) -> None:
    if local_parallelism <= vp.local_parallelism:
        return
    vp.widened_from = vp.widened_from or vp.local_parallelism
    vp.widening_reason = reason + "; EngineConfig.widen_stateless"
    vp.local_parallelism, vp.total_parallelism = local_parallelism, local_parallelism * members


def plan_dealing(dag: Any, vertices: dict[str, VertexPlan]) -> None:
    """Mark the driver sources that deal their entries on demand (``EngineConfig.deal_driver_sources``,
    ``dag/runtime/staged/dealer.py``): those with more than one processor whose outbound edges all let any processor
    take any item: unicast, or broadcast into a vertex of one processor (see the module docstring)."""
    for vp in vertices.values():
        outbound = dag.get_outbound_edges(vp.name)
        if vp.kind is VertexKind.DRIVER_SOURCE and vp.total_parallelism > 1 and outbound and \
                all(_any_processor(e, vertices) for e in outbound):
            vp.dealt = True
