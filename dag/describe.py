"""A plain-data description of a DAG's structure: a pydantic model that round-trips through JSON.

>>> from processors import noop_p
>>> from dag import DAG
>>> from edges import between
>>> dag = DAG()
>>> dag.edge(between(dag.new_vertex("a", noop_p()), dag.new_vertex("b", noop_p(), 2)).broadcast()) and None
>>> d = dag.describe()
>>> [(v.name, v.local_parallelism) for v in d.vertices], d.edges[0].routing.value
([('a', None), ('b', 2)], 'broadcast')
>>> DagDescription.model_validate_json(d.model_dump_json()) == d
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from dag import validation
from dag.vertex import check_default_local_parallelism
from edges.routing import RoutingPolicy

if TYPE_CHECKING:  # pragma: no cover
    from dag.shape import DagShape

__all__ = ["DagDescription", "EdgeDescription", "VertexDescription", "describe"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class VertexDescription(BaseModel):
    """One vertex."""

    model_config = _FROZEN

    name: str
    local_parallelism: int | None = Field(description="As set on the vertex; None means the default.")
    preferred_local_parallelism: int | None = Field(description="The supplier's preference; None means none.")
    parallelism: int | None = Field(
        description="determine_local_parallelism(default) for the default given to describe(); None if unknown."
    )
    description: str | None = Field(
        None, description="What the supplier computes, e.g. a window 'sliding window 1000 by 100'; None for most."
    )


class EdgeDescription(BaseModel):
    """One edge."""

    model_config = _FROZEN

    source: str
    source_ordinal: int
    destination: str
    dest_ordinal: int
    routing: RoutingPolicy
    all_to_one: bool = Field(description="A partitioned edge sending every item to one processor.")
    distributed: bool = Field(description="True for distributed() (all members).")
    distributed_to: int | None = Field(description="Member index of distribute_to(...); None otherwise.")
    priority: int
    queue_size: int | None = Field(description="From the edge's EdgeConfig; None means the engine's default.")


class DagDescription(BaseModel):
    """The structure of a DAG: vertices in topological order, edges in the order they were added."""

    model_config = _FROZEN

    vertices: tuple[VertexDescription, ...]
    edges: tuple[EdgeDescription, ...]


def describe(dag: DagShape, default_local_parallelism: int | None = None) -> DagDescription:
    """Describe ``dag`` (validated first); ``parallelism`` is determined with ``default_local_parallelism``."""
    check_default_local_parallelism(default_local_parallelism, "describe()")
    vertices = tuple(
        VertexDescription(
            name=v.name,
            local_parallelism=v.local_parallelism,
            preferred_local_parallelism=v.preferred_local_parallelism(),
            parallelism=v.determine_local_parallelism(default_local_parallelism),
            description=v.description,
        )
        for v in validation.validate(dag)
    )
    edges = tuple(
        EdgeDescription(
            source=e.source_name,
            source_ordinal=e.source_ordinal,
            destination=e.dest_name,
            dest_ordinal=e.dest_ordinal,
            routing=e.routing_policy,
            all_to_one=e.is_all_to_one,
            distributed=e.is_distributed,
            distributed_to=None if e.is_local or e.is_distributed else e.distributed_to,
            priority=e.get_priority(),
            queue_size=None if e.config is None else e.config.queue_size,
        )
        for e in dag.edges
    )
    return DagDescription(vertices=vertices, edges=edges)
