"""Graphviz DOT text of a DAG, byte for byte Jet 4.5's ``DAG.toDotString(defaultLocalParallelism, defaultQueueSize)``.

Format (``esc`` turns ``"`` into ``\\"``, nothing else is escaped; there is no newline after the final ``}``)::

    digraph DAG {
    \t"<esc name>" [localParallelism=<lp>];                   one line per vertex, topological order
    \t"<esc src>" -> "<esc dst>" [<attributes>];              per vertex in that order, its outbound edges
    \tsubgraph cluster_<k> {                                  wraps an edge when src == dst + "-prepare"
    \t\t"<src>-prepare" -> "<src>" [<attributes>];            (k = 0, 1, ... in emission order)
    \t}
    }

``lp`` is ``vertex.determine_local_parallelism(default_local_parallelism)`` or ``default`` when that is unknown.
A vertex with a ``description`` (windowing processors: their window, e.g. ``sliding window 1000 by 100``) gets
``, label="<esc name>\\n<esc description>"`` after ``localParallelism`` (a jetspark addition; Jet draws no
label, and every other vertex line stays byte for byte Jet's).
Edge attributes, in this order: ``label="<parts joined by ->"`` when there are parts (``distributed`` for
``distributed()``, ``distributed to member <index>`` for ``distribute_to``, then the routing policy's lower-case
name unless unicast; ``all_to_one`` shows as ``partitioned``); ``headlabel=<dest ordinal>`` when the destination
has more than one inbound edge; ``taillabel=<source ordinal>`` when the source has more than one outbound edge;
``queueSize=<q>`` (the edge's ``EdgeConfig`` or ``default_queue_size``). Priorities and keys are not drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dag import validation
from jetspark_base.errors import DagValidationError
from dag.vertex import check_default_local_parallelism
from edges.edge_config import DEFAULT_QUEUE_SIZE
from edges.edge import Edge
from edges.routing import RoutingPolicy

if TYPE_CHECKING:  # pragma: no cover
    from dag.shape import DagShape

__all__ = ["to_dot"]

PREPARE_SUFFIX = "-prepare"


def _esc(name: str) -> str:
    return name.replace('"', '\\"')


def to_dot(dag: DagShape, default_local_parallelism: int | None = -1, default_queue_size: int = DEFAULT_QUEUE_SIZE) -> str:
    """The DOT text of ``dag`` (validated first); see the module docstring for the format."""
    if type(default_queue_size) is not int or default_queue_size <= 0:
        raise DagValidationError(f"to_dot(): default_queue_size must be a positive int, got {default_queue_size!r}")
    check_default_local_parallelism(default_local_parallelism, "to_dot()")
    order = validation.validate(dag)
    out = ["digraph DAG {\n"]
    for vertex in order:
        lp = vertex.determine_local_parallelism(default_local_parallelism)
        label = "" if vertex.description is None else f', label="{_esc(vertex.name)}\\n{_esc(vertex.description)}"'
        out.append(f'\t"{_esc(vertex.name)}" [localParallelism={"default" if lp is None else lp}{label}];\n')
    in_count = {v.name: len(dag.get_inbound_edges(v.name)) for v in order}
    out_count = {v.name: len(dag.get_outbound_edges(v.name)) for v in order}
    cluster = 0
    for vertex in order:
        for edge in dag.get_outbound_edges(vertex.name):
            src, dst = edge.source_name, edge.dest_name
            attributes = ", ".join(_edge_attributes(edge, in_count[dst] > 1, out_count[src] > 1, default_queue_size))
            line = f'\t"{_esc(src)}" -> "{_esc(dst)}" [{attributes}];\n'
            if src == f"{dst}{PREPARE_SUFFIX}":
                line = f"\tsubgraph cluster_{cluster} {{\n\t{line}\t}}\n"
                cluster += 1
            out.append(line)
    out.append("}")
    return "".join(out)


def _edge_attributes(edge: Edge, head: bool, tail: bool, default_queue_size: int) -> list[str]:
    label = []
    if edge.is_distributed:
        label.append("distributed")
    elif edge.distributed_to is not None:
        label.append(f"distributed to member {edge.distributed_to}")
    if edge.routing_policy is not RoutingPolicy.UNICAST:
        label.append(edge.routing_policy.value)
    attributes = [f'label="{"-".join(label)}"'] if label else []
    if head:
        attributes.append(f"headlabel={edge.dest_ordinal}")
    if tail:
        attributes.append(f"taillabel={edge.source_ordinal}")
    attributes.append(f"queueSize={edge.queue_size(default_queue_size)}")
    return attributes
