"""The parts of a physical plan: what the planner decided for every vertex, edge and stage (plain data, no Spark).

:class:`PlanData` holds them; :class:`~dag.planner.physical_plan.PhysicalPlan` is that data plus its views
(``explain()``, ``to_dot()``, drawn by :mod:`dag.planner.explain`). The data sits in this module, below both the
plan class and its views, so that the views read the data without importing the class that calls them.

Vocabulary:

- a *stage* is one ``mapPartitionsWithIndex`` pass: a chain of vertices fused by narrow edges, run in one Spark
  task per partition, processor g of every vertex of the chain in partition g;
- an edge's *op* (:class:`EdgeOp`) is the Spark operation the edge became;
- an edge's *route* (:class:`Route`) says which destination processor(s) each item goes to; the runtime's
  senders implement it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["EdgeOp", "Route", "VertexKind", "PreAggregation", "VertexPlan", "EdgePlan", "StagePlan", "PlanData"]


class VertexKind(str, Enum):
    """How the runtime implements a vertex."""

    PROCESSOR = "processors"                       # processors from the meta supplier, run by processors.execution.staged
    DRIVER_SOURCE = "driver_source"                # read_map_p / read_list_p: parallelize driver data
    DRIVER_SINK = "driver_sink"                    # write_map_p / write_list_p: runJob results into a collection
    SPARK_TEXT_SOURCE = "spark_text_source"        # read_text_p: Spark's own text input (native_io.source_rdd)
    SPARK_TEXT_SINK = "spark_text_sink"            # write_text_p: Spark's own text output (native_io.run_sink)

    @property
    def is_source_only(self) -> bool:
        return self in (VertexKind.DRIVER_SOURCE, VertexKind.SPARK_TEXT_SOURCE)

    @property
    def is_sink_only(self) -> bool:
        return self in (VertexKind.DRIVER_SINK, VertexKind.SPARK_TEXT_SINK)


class EdgeOp(str, Enum):
    """The Spark operation an edge became."""

    FUSED = "fused"                  # same task, the drivers chained in-process, no serialization
    NARROW = "narrow"                # partition g of the (persisted) upstream output -> partition g, no shuffle
    COALESCE = "coalesce"            # shrink without shuffle (unicast: any candidate will do)
    REPARTITION = "repartition"      # grow: items dealt round-robin over the processors, one shuffle
    PARTITION_BY = "partitionBy"     # key each item to its target processor, one shuffle, identity partitioner
    BROADCAST = "broadcast"          # collect once, SparkContext.broadcast, read by every consumer task
    ACCUMULATE_FUSED = "accumulate-fused"  # the accumulate vertex runs inside the sender's task (map-side combine)


class Route(str, Enum):
    """Where a sender puts each item (``g``: sender index, ``m = g // Ls``, ``p = g % Ls``)."""

    SAME = "same"                    # processor g (equal parallelism)
    UNICAST_MEMBER = "unicast-member"    # round-robin over member m's processors
    UNICAST_ALL = "unicast-all"      # round-robin over all processors
    ISOLATED = "isolated"            # round-robin over m*Ld + {i : i % Ls == p % Ld}
    FANOUT = "fanout"                # to every member k, round-robin within k
    PARTITIONED_LOCAL = "partitioned-local"      # m*Ld + partition % Ld
    PARTITIONED_ALL = "partitioned-distributed"  # partition % (Ld*M)
    PARTITIONED_MEMBER = "partitioned-to-member"  # k*Ld + partition % Ld (distribute_to(k))
    BROADCAST_MEMBER = "broadcast-member"        # every processor of member m
    BROADCAST_ALL = "broadcast-all"              # every processor


@dataclass
class PreAggregation:
    """Combining by key on the sending side of a partitioned edge.

    ``mode`` ``"accumulate"``: the sender folds raw items into per-key accumulators with ``operation``'s
    accumulate function and sends ``(key, acc)`` entries; the destination (an accumulate/aggregate_by_key
    processor) is replaced by a combine of those entries (``receiver_output``: ``"entry"`` emits ``(key, acc)``
    as accumulate_by_key_p does, ``"finish"`` emits ``map_to_output_fn(key, finish(acc))`` as aggregate_by_key_p).
    ``mode`` ``"combine"``: items already are ``(key, acc)`` entries; the sender merges equal keys with the
    operation's combine function and the destination (combine_by_key_p) runs unchanged.
    """

    mode: str
    operation: Any
    key_fn: Any
    receiver_output: str | None = None
    map_to_output_fn: Any = None
    absorbed_vertex: str | None = None   # the accumulate vertex run inside the sender's task, if any
    route_key_fn: Any = None             # co-partitioned: accumulators routed by route_key_fn(key) ...
    route_partitioner: Any = None        # ... with the next edge's partitioner (aggregation.py, co_partition)
    route_edge: str = ""                 # that next edge, for messages

    def describe(self) -> str:
        op = getattr(self.operation, "name", None) or "aggregate operation"
        routed = f"; routed by the key part of {self.route_edge}" if self.route_key_fn is not None else ""
        if self.absorbed_vertex:
            return f"map-side combine: '{self.absorbed_vertex}' accumulates {op} in the sender's task{routed}"
        if self.mode == "accumulate":
            return f"pre-aggregated: sender accumulates {op} per key, receiver combines{routed}"
        return f"pre-aggregated: sender combines {op} accumulators per key"


@dataclass
class EdgePlan:
    """One DAG edge and what it became."""

    edge: Any
    source: str
    dest: str
    source_ordinal: int
    dest_ordinal: int
    priority: int
    queue_size: int
    op: EdgeOp
    route: Route | None
    source_parallelism: int
    dest_parallelism: int
    member: int | None = None            # PARTITIONED_MEMBER target
    aligned: bool = False                # keyed to the target processor for a union with other inputs
    pre_aggregation: PreAggregation | None = None
    reason: str = ""

    @property
    def label(self) -> str:
        """The edge as the user wrote it (``between("a", "b").partitioned(?)``)."""
        return str(self.edge)


@dataclass
class VertexPlan:
    """One vertex: how it runs and with how many processors."""

    name: str
    kind: VertexKind
    local_parallelism: int
    total_parallelism: int
    stage: int = -1
    inbound: list[EdgePlan] = field(default_factory=list)     # by destination ordinal
    outbound: list[EdgePlan] = field(default_factory=list)    # by source ordinal
    persisted: bool = False       # several outbound edges: one pass tags items by ordinal, persisted once
    absorbed_into: str | None = None   # accumulate vertex fused into this sender vertex's task
    combine_substitute: PreAggregation | None = None   # receiver of pre-aggregated input: combines entries
    runtime_arg: Any = None       # collection (kind, name) or path for runtime-bound vertices
    widened_from: int | None = None    # the local parallelism the DAG asked for, when the planner widened it
    widening_reason: str = ""
    dealt: bool = False           # a driver source dealing its entries on demand (EngineConfig.deal_driver_sources)
    read_per_edge: bool = False   # a dealt driver source with several outbound edges: read and dealt once per
                                  # edge, in the consumer's tasks, instead of tagged and persisted
    description: str | None = None  # Vertex.description (e.g. a windowing processor's window), for explain

    @property
    def is_leaf(self) -> bool:
        return not self.outbound


@dataclass
class StagePlan:
    """A chain of vertices run in one ``mapPartitionsWithIndex`` pass, ``partitions`` tasks."""

    id: int
    vertices: list[str]
    partitions: int
    action: str | None = None     # the Spark action for a leaf stage
    absorbed: list[str] = field(default_factory=list)   # accumulate vertices run inside this stage's tasks
    loop: list[str] = field(default_factory=list)   # the tail vertices run as one generated loop (planner/loops.py)

    @property
    def head(self) -> str:
        return self.vertices[0]

    @property
    def tail(self) -> str:
        return self.vertices[-1]


@dataclass
class PlanData:
    """The planner's output as data (:class:`~dag.planner.physical_plan.PhysicalPlan` adds its views)."""

    members: int
    default_parallelism: int
    partition_count: int
    vertices: dict[str, VertexPlan]      # topological order
    edges: list[EdgePlan]
    stages: list[StagePlan]
    options: dict[str, bool]
    pipelined: Any = None   # the runtime's pipelined layout (has .explain()) when the job runs PIPELINED

    def stage_of(self, vertex: str) -> StagePlan:
        return self.stages[self.vertices[vertex].stage]
