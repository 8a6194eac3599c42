"""The pipelined layout: which task runs which processor, and what each task needs (plain data, no Spark).

A pipelined job is one barrier stage of ``T`` tasks, ``T // M`` per member (``M`` members). Processor ``g`` of a
vertex with local parallelism ``L`` belongs to member ``m = g // L`` (as in the staged runtime) and runs in task
``m * (T // M) + (g % L) % (T // M)``, so a member's processors never leave that member's tasks and a local edge
never leaves its member. Routing is the staged runtime's (:class:`dag.runtime.common.senders.Router` over the planner's
``EdgePlan.route``): the plan is made with pre-aggregation and accumulate fusion switched off, since every
processor runs as written. An edge between two processors of one task is an in-memory queue; otherwise it goes
over the TCP link between the two tasks.

>>> task_of(g=3, local_parallelism=2, tasks_per_member=2)
3
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jetspark_base.errors import DagValidationError
from dag.planner.physical_plan import EdgeOp, PhysicalPlan, VertexKind
from dag.runtime.common.senders import SenderSpec, candidates, sender_spec

__all__ = ["task_of", "EdgeLayout", "VertexLayout", "Layout", "make_layout", "explain_layout"]


def task_of(g: int, local_parallelism: int, tasks_per_member: int) -> int:
    """The task that runs processor ``g`` (see the module docstring)."""
    m, local = divmod(g, local_parallelism)
    return m * tasks_per_member + local % tasks_per_member


@dataclass
class EdgeLayout:
    """One edge: its sender spec (the route) and the parallelism on both sides."""

    source: str
    dest: str
    source_ordinal: int
    dest_ordinal: int
    priority: int
    spec: SenderSpec
    label: str

    def senders_to(self, gd: int, source_parallelism: int) -> list[int]:
        """The source processors that send to destination processor ``gd`` (one input queue each)."""
        return [gs for gs in range(source_parallelism) if gd in candidates(self.spec, gs)]


@dataclass
class VertexLayout:
    """One vertex as the tasks run it."""

    name: str
    kind: VertexKind
    local_parallelism: int
    total_parallelism: int
    priorities: dict[int, int]
    capacities: list[int]
    inbound: list[EdgeLayout] = field(default_factory=list)    # by dest ordinal
    outbound: list[EdgeLayout] = field(default_factory=list)   # by source ordinal
    runtime_arg: Any = None


@dataclass
class Layout:
    """The whole pipelined plan."""

    tasks: int
    members: int
    vertices: dict[str, VertexLayout]      # topological order

    @property
    def tasks_per_member(self) -> int:
        return self.tasks // self.members

    def task_of(self, vertex: str, g: int) -> int:
        return task_of(g, self.vertices[vertex].local_parallelism, self.tasks_per_member)

    def explain(self) -> str:
        """See :func:`explain_layout`."""
        return explain_layout(self)

    def processors_of(self, t: int) -> list[tuple[str, int]]:
        """``(vertex, g)`` of every processor task ``t`` runs."""
        return [(v.name, g) for v in self.vertices.values() for g in range(v.total_parallelism)
                if self.task_of(v.name, g) == t]


def make_layout(plan: PhysicalPlan, tasks: int) -> Layout:
    """The layout of ``plan`` (planned without pre-aggregation) over ``tasks`` tasks (a multiple of members)."""
    members = plan.members
    if tasks % members or tasks < members:
        raise DagValidationError(f"a pipelined job needs a multiple of members ({members}) tasks, got {tasks}")
    vertices: dict[str, VertexLayout] = {}
    for vp in plan.vertices.values():
        if vp.kind in (VertexKind.SPARK_TEXT_SOURCE, VertexKind.SPARK_TEXT_SINK):
            raise DagValidationError(
                f"vertex '{vp.name}' uses {'read_text_p' if vp.kind.is_source_only else 'write_text_p'}, which runs "
                "as Spark's own text I/O and cannot run in a PIPELINED job; use read_files_p/write_file_p, or "
                "run the job with JobConfig(execution_mode=ExecutionMode.STAGED)")
        vertices[vp.name] = VertexLayout(  # driver-side collections run as processors (their live_supplier())
            vp.name, vp.kind, vp.local_parallelism, vp.total_parallelism,
            priorities={ep.dest_ordinal: ep.priority for ep in vp.inbound},
            capacities=[ep.queue_size for ep in vp.outbound], runtime_arg=vp.runtime_arg)
    for ep in plan.edges:
        spec = sender_spec(ep, members, plan.partition_count)
        spec.op = EdgeOp.BROADCAST if ep.op is EdgeOp.BROADCAST else EdgeOp.PARTITION_BY
        el = EdgeLayout(ep.source, ep.dest, ep.source_ordinal, ep.dest_ordinal, ep.priority, spec, ep.label)
        vertices[ep.source].outbound.append(el)
        vertices[ep.dest].inbound.append(el)
    for vl in vertices.values():
        vl.outbound.sort(key=lambda e: e.source_ordinal)
        vl.inbound.sort(key=lambda e: e.dest_ordinal)
    return Layout(tasks, members, vertices)


def explain_layout(layout: Layout) -> str:
    """Which processors share a task, and which edges are in-memory queues and which cross tasks over TCP."""
    lines = [f"PIPELINED: one barrier stage of {layout.tasks} task(s) ({layout.tasks_per_member} per member, "
             f"{layout.members} member(s)); every processor runs at once, items flow as produced"]
    for t in range(layout.tasks):
        procs = layout.processors_of(t)
        names = ", ".join(f"{v}#{g}" for v, g in procs) or "(nothing)"
        lines.append(f"  task {t}: {names}")
    lines.append("  edges:")
    for vl in layout.vertices.values():
        for el in vl.outbound:
            src_p = vl.total_parallelism
            dst_p = layout.vertices[el.dest].total_parallelism
            local = remote = 0
            for gs in range(src_p):
                for gd in candidates(el.spec, gs):
                    if gd < dst_p and layout.task_of(el.source, gs) == layout.task_of(el.dest, gd):
                        local += 1
                    else:
                        remote += 1
            kind = "in-memory" if not remote else ("TCP" if not local else "in-memory + TCP")
            lines.append(f"    {el.label}: route {el.spec.route.value if el.spec.route else '-'}, {kind} "
                         f"({local} in-memory queue(s), {remote} across tasks)")
    return "\n".join(lines)
