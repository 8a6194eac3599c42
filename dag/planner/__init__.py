"""The planner: DAG -> physical plan (stages, the Spark operation of every edge, fusion, persistence,
pre-aggregation). Pure Python: planning needs no SparkSession.

The lowering table, the core of the design, opens ``dag/planner/lowering.py``; in short:

===============================  ==========================================================================
DAG construct                    Spark lowering
===============================  ==========================================================================
vertex, parallelism L*M          RDD with L*M partitions; processor g in partition g, member g // L
narrow edge (equal L, 1:1)       fused: the drivers chained in one task
unicast, unequal L               coalesce (shrink) / repartition (grow); keyed partitionBy when M > 1
isolated, unequal L              keyed partitionBy with Jet's isolated mapping
partitioned / all_to_one         key to the target processor, partitionBy (one shuffle)
broadcast                        collect once, SparkContext.broadcast
fanout (distributed)             keyed partitionBy, one copy per member
several inbound edges            partition-aligned union by priority (+ broadcast inputs)
several outbound edges           one tagged pass, persisted once
by-key aggregation               pre-aggregated on the sending side; accumulate fused into the sender
leaf                             one Spark action
===============================  ==========================================================================

>>> from dag.planner import plan_dag, PhysicalPlan
"""

from __future__ import annotations

from dag.planner.lowering import plan_dag
from dag.planner.physical_plan import EdgeOp, EdgePlan, PhysicalPlan, PreAggregation, Route, StagePlan, VertexKind, VertexPlan

__all__ = ["plan_dag", "PhysicalPlan", "EdgeOp", "EdgePlan", "PreAggregation", "Route", "StagePlan",
           "VertexKind", "VertexPlan"]
