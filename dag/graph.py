"""The DAG as a networkx graph and as a picture drawn by graphviz.

``to_networkx`` gives a ``networkx.MultiDiGraph``: one node per vertex (in topological order) and one edge per DAG
edge, keyed ``(source_ordinal, dest_ordinal)``. Attributes are the fields of :mod:`dag.describe`'s models plus the
model objects themselves (``vertex``, ``edge``). ``render`` pipes :func:`dag.dot.to_dot` through graphviz's ``dot``;
:func:`to_svg` does the same for any DOT text (a plan's, a measured DAG's), and :func:`repr_svg` is what a DAG,
a physical plan and a pipeline answer to IPython's ``_repr_svg_``, so a notebook draws them inline.
networkx and graphviz are imported only when these functions run.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from dag.describe import describe
from dag.dot import to_dot
from jetspark_base.errors import DagError, DagValidationError

if TYPE_CHECKING:  # pragma: no cover
    import networkx

    from dag.shape import DagShape

__all__ = ["GraphvizNotFoundError", "render", "to_networkx", "to_svg", "repr_svg"]

INSTALL_HINT = (
    "install Graphviz so that `dot` is on PATH: `apt-get install graphviz` (Debian/Ubuntu), "
    "`brew install graphviz` (macOS) or `conda install -c conda-forge graphviz`"
)


class GraphvizNotFoundError(DagError, RuntimeError):
    """Graphviz's ``dot`` program (or the ``graphviz`` package) is missing; the message says how to install it."""


def to_networkx(dag: DagShape) -> networkx.MultiDiGraph:
    """``dag`` (validated first) as a ``networkx.MultiDiGraph`` with vertex and edge settings as attributes.

    >>> from processors import noop_p
    >>> from dag import DAG
    >>> from edges import between
    >>> dag = DAG()
    >>> dag.edge(between(dag.new_vertex("a", noop_p()), dag.new_vertex("b", noop_p())).broadcast()) and None
    >>> to_networkx(dag).edges["a", "b", (0, 0)]["routing"]
    'broadcast'
    """
    import networkx

    description = describe(dag)
    graph = networkx.MultiDiGraph()
    for v in description.vertices:
        graph.add_node(v.name, vertex=dag.get_vertex(v.name), **v.model_dump(mode="json", exclude={"name"}))
    for e, edge in zip(description.edges, dag.edges):
        attributes = e.model_dump(mode="json", exclude={"source", "destination"})
        graph.add_edge(e.source, e.destination, key=(e.source_ordinal, e.dest_ordinal), edge=edge, **attributes)
    return graph


def render(dag: DagShape, path: str | Path, format: str = "svg") -> Path:
    """Draw ``dag`` with graphviz's ``dot`` into ``path`` in ``format`` (``svg``, ``png``, ``pdf``, ...).

    Returns the path written. Raises :class:`GraphvizNotFoundError` when Graphviz is not installed.
    """
    try:
        import graphviz
    except ImportError as exc:  # pragma: no cover - graphviz is a dependency
        raise GraphvizNotFoundError(
            f"render() needs the graphviz Python package (pip install graphviz); also {INSTALL_HINT}"
        ) from exc
    if format not in graphviz.FORMATS:
        raise DagValidationError(
            f"render(): unknown format {format!r}; use one of graphviz's formats such as 'svg', 'png' or 'pdf'"
        )
    try:
        picture = graphviz.pipe("dot", format, to_dot(dag).encode("utf-8"))
    except graphviz.ExecutableNotFound as exc:
        raise GraphvizNotFoundError(f"render(): Graphviz's `dot` program was not found; {INSTALL_HINT}") from exc
    target = Path(path)
    target.write_bytes(picture)
    return target


def to_svg(dot: str) -> str:
    """The SVG picture of the DOT text ``dot``, drawn by graphviz's ``dot`` program.

    Raises :class:`GraphvizNotFoundError` when Graphviz is not installed.
    """
    import graphviz

    try:
        return graphviz.pipe("dot", "svg", dot.encode("utf-8")).decode("utf-8")
    except graphviz.ExecutableNotFound as exc:
        raise GraphvizNotFoundError(f"drawing needs Graphviz's `dot` program; {INSTALL_HINT}") from exc


def repr_svg(dot_of: Callable[[], str]) -> str | None:
    """IPython's ``_repr_svg_`` for an object drawn from ``dot_of()``: the SVG, or None (IPython then shows the
    text repr) when the object cannot be drawn, e.g. an invalid DAG or no Graphviz; the reason is logged at
    debug level (logger ``jetspark.graph``)."""
    try:
        return to_svg(dot_of())
    except (DagError, OSError, ImportError) as exc:
        logging.getLogger("jetspark.graph").debug("no SVG picture: %s", exc)
        return None
