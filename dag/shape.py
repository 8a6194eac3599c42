"""What the views of a DAG read from it: the bottom of the ``dag`` model's modules.

:class:`~dag.model.DAG` owns its vertices and edges and offers views of itself (``dag.validate()``,
``dag.to_dot()``, ``dag.describe()``, ``dag.render()``). The views live in modules of their own
(:mod:`dag.validation`, :mod:`dag.dot`, :mod:`dag.describe`, :mod:`dag.graph`) and take the DAG as an argument.
They type that argument with :class:`DagShape`, the read-only surface they use, instead of importing the
``DAG`` class: so the imports run one way only, ``model`` -> views -> ``shape``, and a view never imports the
module that imports it. ``DAG`` satisfies :class:`DagShape` structurally (it does not import this module).

>>> from dag import DAG
>>> isinstance(DAG(), DagShape)
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from dag.vertex import Vertex
    from edges.edge import Edge

__all__ = ["DagShape"]


@runtime_checkable
class DagShape(Protocol):
    """The read-only structure of a DAG that validation, DOT, descriptions and pictures read."""

    @property
    def vertices(self) -> list[Vertex]:
        """All vertices in the order they were added."""
        ...

    @property
    def edges(self) -> list[Edge]:
        """All edges in the order they were added."""
        ...

    def get_vertex(self, name: str) -> Vertex | None:
        """The vertex named ``name``, or ``None``."""
        ...

    def get_inbound_edges(self, name: str) -> list[Edge]:
        """The edges into vertex ``name``, in the order they were added."""
        ...

    def get_outbound_edges(self, name: str) -> list[Edge]:
        """The edges out of vertex ``name``, in the order they were added."""
        ...
