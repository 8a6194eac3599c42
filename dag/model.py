"""The DAG: vertices (named processor suppliers) and the edges between them, as Jet's Core API declares them.

>>> from processors import noop_p
>>> from edges import between
>>> dag = DAG()
>>> source = dag.new_vertex("source", noop_p())
>>> sink = dag.new_vertex("sink", noop_p(), local_parallelism=1)
>>> dag.edge(between(source, sink).distributed()) is dag
True
>>> [v.name for v in dag]
['source', 'sink']

Rules and messages: :mod:`dag.validation`. Pictures and descriptions: :mod:`dag.dot`, :mod:`dag.graph`,
:mod:`dag.describe`. The model imports no engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dag import validation
from jetspark_base.errors import DagValidationError
from dag.vertex import Vertex
from edges.edge_config import DEFAULT_QUEUE_SIZE
from edges.edge import Edge

if TYPE_CHECKING:  # pragma: no cover
    import networkx

    from dag.describe import DagDescription

__all__ = ["DAG"]


class DAG:
    """A directed acyclic graph of :class:`Vertex` objects linked by :class:`edges.Edge` objects."""

    def __init__(self) -> None:
        self._vertices: dict[str, Vertex] = {}
        self._edges: list[Edge] = []
        self._inbound: dict[str, list[Edge]] = {}
        self._outbound: dict[str, list[Edge]] = {}
        # ordinals in use per vertex, so that dag.edge() checks a new edge in O(1), not by scanning the
        # vertex's edges (a 5,000-edge fan-out would be quadratic)
        self._in_ordinals: dict[str, set[int]] = {}
        self._out_ordinals: dict[str, set[int]] = {}

    # ---- vertices --------------------------------------------------------------------------------------------

    def new_vertex(self, name: str, supplier: Any, local_parallelism: int | None = None) -> Vertex:
        """Create a vertex named ``name`` backed by ``supplier``, add it and return it.

        ``supplier``: a zero-argument callable returning a new ``Processor``, a ``ProcessorSupplier``, a
        ``ProcessorMetaSupplier`` or a ``SourceBuilder``/``SinkBuilder`` product.
        """
        self._check_name_free(name)
        vertex = Vertex(name, supplier, local_parallelism)
        self._add(vertex)
        return vertex

    def new_unique_vertex(self, prefix: str, supplier: Any, local_parallelism: int | None = None) -> Vertex:
        """Like :meth:`new_vertex`, named ``prefix`` or, if taken, the first free of ``prefix-2``, ``prefix-3``...

        >>> from processors import noop_p
        >>> dag = DAG()
        >>> [dag.new_unique_vertex("map", noop_p()).name for _ in range(3)]
        ['map', 'map-2', 'map-3']
        """
        name, i = prefix, 2
        while name in self._vertices:
            name, i = f"{prefix}-{i}", i + 1
        return self.new_vertex(name, supplier, local_parallelism)

    def vertex(self, v: Vertex) -> DAG:
        """Add the :class:`Vertex` ``v`` created outside the DAG; returns the DAG so calls chain."""
        if not isinstance(v, Vertex):
            raise DagValidationError(f"dag.vertex() expects a Vertex, got {v!r}; use dag.new_vertex(name, supplier)")
        self._check_name_free(v.name)
        self._add(v)
        return self

    def _check_name_free(self, name: Any) -> None:
        if isinstance(name, str) and name in self._vertices:
            raise DagValidationError(
                f"Vertex {name} is already defined; choose another name or use dag.new_unique_vertex('{name}', ...)"
            )

    def _add(self, vertex: Vertex) -> None:
        self._vertices[vertex.name] = vertex
        self._inbound[vertex.name] = []
        self._outbound[vertex.name] = []
        self._in_ordinals[vertex.name] = set()
        self._out_ordinals[vertex.name] = set()

    def get_vertex(self, name: str) -> Vertex | None:
        """The vertex named ``name``, or ``None``."""
        return self._vertices.get(name)

    def get_inbound_edges(self, name: str) -> list[Edge]:
        """The edges into vertex ``name``, in the order they were added."""
        return list(self._edges_of(self._inbound, name))

    def get_outbound_edges(self, name: str) -> list[Edge]:
        """The edges out of vertex ``name``, in the order they were added."""
        return list(self._edges_of(self._outbound, name))

    @staticmethod
    def _edges_of(index: dict[str, list[Edge]], name: str) -> list[Edge]:
        edges = index.get(name)
        if edges is None:
            raise DagValidationError(f"No vertex with name '{name}' found in this DAG")
        return edges

    @property
    def vertices(self) -> list[Vertex]:
        """All vertices in the order they were added."""
        return list(self._vertices.values())

    @property
    def edges(self) -> list[Edge]:
        """All edges in the order they were added."""
        return list(self._edges)

    # ---- edges -----------------------------------------------------------------------------------------------

    def edge(self, edge: Edge) -> DAG:
        """Add ``edge`` after Jet's eager checks (see :mod:`dag.validation`); returns the DAG so calls chain.

        A rejected edge leaves the DAG unchanged.
        """
        validation.check_new_edge(self, edge, self._taken_ordinals)
        self._edges.append(edge)
        self._outbound[edge.source_name].append(edge)
        self._inbound[edge.dest_name].append(edge)  # type: ignore[index]
        self._out_ordinals[edge.source_name].add(edge.source_ordinal)
        self._in_ordinals[edge.dest_name].add(edge.dest_ordinal)  # type: ignore[index]
        return self

    def _taken_ordinals(self, name: str, inbound: bool) -> set[int]:
        """The inbound (or outbound) ordinals of vertex ``name`` that have an edge (for
        ``validation.check_new_edge``; do not mutate)."""
        return self._edges_of(self._in_ordinals if inbound else self._out_ordinals, name)  # type: ignore[arg-type]

    # ---- whole-DAG views -------------------------------------------------------------------------------------

    def validate(self) -> None:
        """Check the rules of :mod:`dag.validation`; raises :class:`DagValidationError` (or :class:`CycleError`)."""
        validation.validate(self)

    def __iter__(self) -> Iterator[Vertex]:
        """The vertices in a topological order (validates first); among ready vertices the earliest added first."""
        return iter(validation.validate(self))

    def to_dot(self, default_local_parallelism: int | None = -1, default_queue_size: int = DEFAULT_QUEUE_SIZE) -> str:
        """Graphviz DOT text in Jet 4.5's ``toDotString`` format (see :mod:`dag.dot`)."""
        from dag.dot import to_dot

        return to_dot(self, default_local_parallelism, default_queue_size)

    def render(self, path: str | Path, format: str = "svg") -> Path:
        """Draw the DAG with graphviz into ``path``; returns the path written (see :mod:`dag.graph`)."""
        from dag.graph import render

        return render(self, path, format)

    def to_networkx(self) -> networkx.MultiDiGraph:
        """The DAG as a ``networkx.MultiDiGraph`` with vertex and edge settings as attributes."""
        from dag.graph import to_networkx

        return to_networkx(self)

    def describe(self, default_local_parallelism: int | None = None) -> DagDescription:
        """A pydantic description of the structure that round-trips through JSON (see :mod:`dag.describe`)."""
        from dag.describe import describe

        return describe(self, default_local_parallelism)

    def _repr_svg_(self) -> str | None:
        """IPython draws the DAG inline: the picture ``render()`` writes (None for a DAG that is not valid)."""
        from dag.graph import repr_svg

        return repr_svg(self.to_dot)

    def __repr__(self) -> str:
        return f"DAG(vertices={list(self._vertices)}, edges={[str(e) for e in self._edges]})"
