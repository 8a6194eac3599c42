"""The rules a DAG must follow, checked in Jet's order with Jet's messages (adapted to Python names).

``dag.edge(edge)`` checks eagerly, in this order, and a rejected edge leaves the DAG unchanged:

1. the argument is an ``Edge``;
2. the edge has a destination (``from_(a)`` needs ``.to(b)``);
3. its source vertex is in this DAG (the same object, not just the same name);
4. its destination vertex is in this DAG (likewise);
5. the destination has no other inbound edge at the same destination ordinal;
6. the source has no other outbound edge at the same source ordinal (when the new edge uses ordinals 0 and 0,
   rules 5 and 6 suggest the first free ordinal, e.g. ``from_(a).to(b, 1)`` or ``from_(a, 1).to(b)``);
7. the edge is not a self loop.

Several edges between the same two vertices are allowed when their ordinals differ.

``dag.validate()`` (also run by ``iter(dag)``, ``to_dot``, ``describe``, ``to_networkx``, ``render`` and the planner)
checks, in this order:

a. the DAG has at least one vertex;
b. the input ordinals of every vertex are exactly ``0..n-1`` (vertices in insertion order);
c. the output ordinals of every vertex are exactly ``0..n-1``;
d. there is no cycle (:class:`CycleError`, ``DAG contains a cycle: a -> b -> a``);
e. every ``isolated()`` edge is local (Jet checks this when a job starts);
f. every ``distribute_to(member)`` edge is partitioned (Jet checks this when a job starts).

Checked elsewhere: edge settings when they are made (``edges.edge``: ordinals, priority, member index), local
parallelism when it is set or determined (``dag.vertex``), and that ``distribute_to``'s member exists, at plan time.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import TYPE_CHECKING

from jetspark_base.errors import CycleError, DagValidationError
from edges.edge import Edge
from edges.routing import RoutingPolicy

if TYPE_CHECKING:  # pragma: no cover
    from dag.shape import DagShape
    from dag.vertex import Vertex

__all__ = ["check_new_edge", "topological_order", "validate"]


def check_new_edge(dag: DagShape, edge: Edge, taken_ordinals: Callable[[str, bool], set[int]]) -> None:
    """Rules 1-7 above for ``edge`` about to be added to ``dag``; raises :class:`DagValidationError`.

    ``taken_ordinals(name, inbound)``: the inbound (or outbound) ordinals of vertex ``name`` that have an edge
    (the DAG keeps them indexed, so that the check is O(1) and not a scan of the vertex's edges)."""
    if not isinstance(edge, Edge):
        raise DagValidationError(
            f"dag.edge() expects an Edge such as between(a, b) or from_(a, 1).to(b), got {edge!r}"
        )
    if edge.destination is None:
        raise DagValidationError(f"Edge {edge} has no destination; finish it with .to(vertex)")
    _check_end_in_dag(dag, edge.source, "source", "Source")
    _check_end_in_dag(dag, edge.destination, "destination", "Destination")
    src, dst = edge.source_name, edge.dest_name
    suggest = edge.source_ordinal == 0 and edge.dest_ordinal == 0  # as Jet, which then suggests Edge.from().to()
    taken = taken_ordinals(dst, True)
    if edge.dest_ordinal in taken:
        fix = f", use from_({src}).to({dst}, {_first_free(taken)}) to specify another ordinal" if suggest else ""
        raise DagValidationError(f"Vertex '{dst}' already has an inbound edge at ordinal {edge.dest_ordinal}{fix}")
    taken = taken_ordinals(src, False)
    if edge.source_ordinal in taken:
        fix = f", use from_({src}, {_first_free(taken)}).to({dst}) to specify another ordinal" if suggest else ""
        raise DagValidationError(f"Vertex '{src}' already has an outbound edge at ordinal {edge.source_ordinal}{fix}")
    if edge.source is edge.destination:
        raise DagValidationError(f"Attempted to add an edge from {src} to itself; a DAG has no loops")


def _first_free(taken: set[int]) -> int:
    return next(i for i in range(len(taken) + 1) if i not in taken)


def _check_end_in_dag(dag: DagShape, vertex: Vertex, role: str, title: str) -> None:
    present = dag.get_vertex(vertex.name)
    if present is vertex:
        return
    if present is not None:
        raise DagValidationError(
            f"This DAG has a vertex called '{vertex.name}', but the supplied edge's {role} is a different vertex "
            f"with the same name"
        )
    raise DagValidationError(
        f"{title} vertex '{vertex.name}' is not in this DAG; create it with dag.new_vertex(...) "
        f"or add it with dag.vertex(v)"
    )


def validate(dag: DagShape) -> list[Vertex]:
    """Rules a-f above; returns the vertices in a topological order (ties broken by insertion order)."""
    vertices = dag.vertices
    if not vertices:
        raise DagValidationError("DAG must contain at least one vertex; add one with dag.new_vertex(name, supplier)")
    for v in vertices:
        _check_ordinals(v.name, [e.dest_ordinal for e in dag.get_inbound_edges(v.name)], "Input", "properly numbered")
    for v in vertices:
        _check_ordinals(v.name, [e.source_ordinal for e in dag.get_outbound_edges(v.name)], "Output", "ordered")
    order = topological_order(dag)
    for edge in dag.edges:
        if edge.routing_policy is RoutingPolicy.ISOLATED and not edge.is_local:
            raise DagValidationError(f"Isolated edges must be local: {edge}; remove .distributed()/.distribute_to()")
        if not (edge.is_local or edge.is_distributed) and edge.routing_policy is not RoutingPolicy.PARTITIONED:
            raise DagValidationError(
                f"An edge distributing to a specific member must be partitioned: {edge}; "
                f"add .partitioned(key_fn) or .all_to_one()"
            )
    return order


def _check_ordinals(name: str, ordinals: list[int], kind: str, wording: str) -> None:
    actual = sorted(ordinals)
    expected = list(range(len(actual)))
    if actual != expected:
        raise DagValidationError(
            f"{kind} ordinals for vertex {name} are not {wording}. Actual: {actual} Expected: {expected}"
        )


def topological_order(dag: DagShape) -> list[Vertex]:
    """The vertices so that every edge goes forward; among ready vertices the earliest added comes first.

    Raises :class:`CycleError` naming one cycle when there is none.
    """
    vertices = dag.vertices
    index = {v.name: i for i, v in enumerate(vertices)}
    in_degree = [len(dag.get_inbound_edges(v.name)) for v in vertices]
    ready = [i for i, d in enumerate(in_degree) if d == 0]
    heapq.heapify(ready)
    order: list[Vertex] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(vertices[i])
        for edge in dag.get_outbound_edges(vertices[i].name):
            j = index[edge.dest_name]
            in_degree[j] -= 1
            if in_degree[j] == 0:
                heapq.heappush(ready, j)
    if len(order) < len(vertices):
        raise CycleError(_find_cycle(dag, {i for i, d in enumerate(in_degree) if d > 0}, index))
    return order


def _find_cycle(dag: DagShape, remaining: set[int], index: dict[str, int]) -> list[str]:
    """One cycle among ``remaining`` (vertices never ready), as names, starting at its earliest-added vertex.

    Every remaining vertex has a remaining predecessor, so walking backwards must revisit a vertex.
    """
    vertices = dag.vertices
    walk = [min(remaining)]
    seen = {walk[0]: 0}
    while True:
        current = vertices[walk[-1]].name
        pred = min(index[e.source_name] for e in dag.get_inbound_edges(current) if index[e.source_name] in remaining)
        if pred in seen:
            cycle = walk[seen[pred]:][::-1]  # forward direction, ends with pred's successor
            start = cycle.index(min(cycle))
            cycle = cycle[start:] + cycle[:start]
            return [vertices[i].name for i in cycle] + [vertices[cycle[0]].name]
        seen[pred] = len(walk)
        walk.append(pred)
