"""The physical plan: :class:`PhysicalPlan`, the planner's output, is its data (:mod:`dag.planner.plan_parts`)
plus the views people read (:meth:`PhysicalPlan.explain`, :meth:`PhysicalPlan.to_dot`, drawn by
:mod:`dag.planner.explain`).

A :class:`PhysicalPlan` is built by :func:`dag.planner.lowering.plan_dag` and read by the runtime
(``dag/runtime/staged/build.py``). The parts (:class:`VertexPlan`, :class:`EdgePlan`, :class:`StagePlan`, the enums)
are importable from here too.
"""

from __future__ import annotations

from dag.planner.explain import explain as explain_plan
from dag.planner.explain import plan_to_dot
from dag.planner.plan_parts import EdgeOp, EdgePlan, PlanData, PreAggregation, Route, StagePlan, VertexKind, VertexPlan

__all__ = ["EdgeOp", "Route", "VertexKind", "PreAggregation", "VertexPlan", "EdgePlan", "StagePlan", "PhysicalPlan"]


class PhysicalPlan(PlanData):
    """The planner's output. ``explain()`` and ``to_dot()`` show it; the runtime executes it."""

    def explain(self) -> str:
        """Every stage with its vertices and parallelism, and the Spark operation each edge became; for a
        PIPELINED job, which processors share a task and which edges are in-memory queues or TCP links."""
        if self.pipelined is not None:
            return self.pipelined.explain()
        return explain_plan(self)

    def to_dot(self) -> str:
        """The plan in graphviz DOT: stages as clusters, edges labelled with their Spark operation."""
        return plan_to_dot(self)

    def _repr_svg_(self) -> str | None:
        """IPython draws the plan inline: the picture of ``to_dot()`` (``jetspark render --plan``)."""
        from dag.graph import repr_svg

        return repr_svg(self.to_dot)

    def __str__(self) -> str:
        return self.explain()
