"""The planner: turns a pipeline's transforms into a ``DAG`` by Jet 4's rules (Jet's ``impl.pipeline.Planner``).

The planner visits the transforms in the order they were added (every transform comes after its upstream
ones) and asks each to ``add_to_dag(planner)``. A transform adds its vertices with :meth:`Planner.add_vertex`
(the vertex its downstream stages attach to) or :meth:`Planner.new_vertex` (helpers such as ``-prepare`` and
collector vertices), and its inbound edges with :meth:`Planner.add_edges`. Vertices are collected as
:class:`PlannerVertex` records and become real ``Vertex`` objects only in :meth:`Planner.build`, so a later
transform (``peek``) may still wrap the supplier of an earlier vertex.

Rules kept from Jet's planner:

- vertex names are unique: a name already taken gets ``-2``, ``-3``, ... (``uniqueVertexName``);
- an upstream vertex feeding several stages uses its next free outbound ordinal for each (a fork);
- inbound edges of a multi-input transform go to ordinals 0, 1, ... in the order of its upstream stages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from dag.model import DAG
from edges.edge import Edge

__all__ = ["Planner", "PlannerVertex", "Planned", "EdgeConfigurer"]

EdgeConfigurer = Callable[[Edge, int], Any]


class Planned(Protocol):
    """What the planner needs of a transform: its upstream transforms, in input-ordinal order (the planner sits
    below the transforms, :mod:`pipeline.transform_graph`, and never imports them)."""

    upstream: Sequence[Any]


class PlannerVertex:
    """A vertex being planned: name, supplier (replaceable until :meth:`Planner.build`), local parallelism.

    ``emits_events``: its items are ``JetEvent``; ``timestamp_fn``: its items are plain but have timestamps,
    given by this function (an ``add-timestamps`` vertex read only by windows, which apply it themselves)."""

    def __init__(self, name: str, supplier: Any, local_parallelism: int | None, emits_events: bool = False):
        self.name = name
        self.supplier = supplier
        self.local_parallelism = local_parallelism
        self.emits_events = emits_events
        self.timestamp_fn: Callable[[Any], int] | None = None
        self._next_ordinal = 0

    def next_available_ordinal(self) -> int:
        ordinal = self._next_ordinal
        self._next_ordinal += 1
        return ordinal

    def __repr__(self) -> str:
        return f"PlannerVertex({self.name!r})"


class Planner:
    """Collects vertices and edges for one ``to_dag()`` call; ``build()`` makes the DAG."""

    def __init__(self, preserve_order: bool | None = None) -> None:
        self.preserve_order = preserve_order  # None: not set; False: also lets async results leave unordered
        self.edge_overrides: dict[Planned, EdgeConfigurer] = {}  # rebalance: routing of the edges leaving it
        self.xform2vertex: dict[Planned, PlannerVertex] = {}
        self._vertices: list[PlannerVertex] = []
        self._edges: list[tuple[PlannerVertex, int, PlannerVertex, int, EdgeConfigurer | None]] = []
        self._names: set[str] = set()

    def unique_vertex_name(self, name: str) -> str:
        """``name``, or ``name-2``, ``name-3``, ... when taken (Jet's rule); does not reserve it."""
        if name not in self._names:
            return name
        index = 2
        while f"{name}-{index}" in self._names:
            index += 1
        return f"{name}-{index}"

    def new_vertex(self, name: str, supplier: Any, local_parallelism: int | None = None) -> PlannerVertex:
        """A vertex named exactly ``name`` (callers make it unique) not registered for any transform."""
        self._names.add(name)
        pv = PlannerVertex(name, supplier, local_parallelism)
        self._vertices.append(pv)
        return pv

    def add_vertex(self, transform: Planned, name: str, local_parallelism: int | None, supplier: Any,
                   emits_events: bool = False) -> PlannerVertex:
        """The vertex of ``transform``: downstream transforms attach to it."""
        pv = self.new_vertex(name, supplier, local_parallelism)
        pv.emits_events = emits_events
        self.xform2vertex[transform] = pv
        return pv

    def vertex_of(self, transform: Planned) -> PlannerVertex:
        """The vertex ``transform``'s downstream transforms attach to (added before, in visiting order)."""
        return self.xform2vertex[transform]

    def edge(self, source: PlannerVertex, dest: PlannerVertex, dest_ordinal: int = 0,
             configure: EdgeConfigurer | None = None) -> None:
        """An edge from ``source``'s next free outbound ordinal to ``dest`` at ``dest_ordinal``."""
        self._edges.append((source, source.next_available_ordinal(), dest, dest_ordinal, configure))

    def add_edges(self, transform: Planned, dest: PlannerVertex,
                  configure: EdgeConfigurer | None = None) -> None:
        """Edges from each upstream transform's vertex to ``dest``, at ordinals 0, 1, ...;
        ``configure(edge, ordinal)`` sets routing. An upstream ``rebalance`` sets it first (``configure`` may
        still make the edge partitioned)."""
        for ordinal, upstream in enumerate(transform.upstream):
            override = self.edge_overrides.get(upstream)
            both = configure if override is None else _Both(override, configure)
            self.edge(self.xform2vertex[upstream], dest, ordinal, both)

    def build(self) -> DAG:
        """The DAG of the planned vertices and edges."""
        dag = DAG()
        vertices = {pv: dag.new_vertex(pv.name, pv.supplier, pv.local_parallelism) for pv in self._vertices}
        for source, source_ordinal, dest, dest_ordinal, configure in self._edges:
            edge = Edge.from_(vertices[source], source_ordinal).to(vertices[dest], dest_ordinal)
            if configure is not None:
                configure(edge, dest_ordinal)
            dag.edge(edge)
        return dag


class _Both:
    """Two edge configurers, applied in order."""

    def __init__(self, first: EdgeConfigurer, then: EdgeConfigurer | None):
        self.first = first
        self.then = then

    def __call__(self, edge: Edge, ordinal: int) -> None:
        self.first(edge, ordinal)
        if self.then is not None:
            self.then(edge, ordinal)
