"""The processor meta suppliers of a job, on the driver: opened once per vertex, closed when the job ends.

Both runtimes create a vertex's processor suppliers on the driver the same way (Jet's ``ProcessorMetaSupplier``
lifecycle): ``meta.init(ctx)``, ``fn = meta.get(list(range(M)))``, ``ps = fn(m)`` per member; the suppliers
travel to the tasks, which call ``ps.init``/``ps.get(L)``/``ps.close``. When the job ends every meta supplier
that was initialised gets ``close(error)``, also after a failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jetspark_base.errors import JobFailedError

if TYPE_CHECKING:  # pragma: no cover
    from dag.planner.physical_plan import VertexPlan

__all__ = ["MetaSuppliers"]


class MetaSuppliers:
    """The meta suppliers one job opened (see the module docstring)."""

    def __init__(self, *, job_id: int, job_name: str, members: int, guarantee: Any, unbounded: bool = False):
        self.job_id, self.job_name, self.members = job_id, job_name, members
        self.guarantee, self.unbounded = guarantee, unbounded  # Context.unbounded: a pipelined stream job
        self.opened: list[tuple[str, Any]] = []

    def open(self, vp: VertexPlan, meta: Any) -> list[Any]:
        """Each member's ``ProcessorSupplier`` of vertex ``vp``'s meta supplier ``meta``; a failure of the meta
        supplier is the job's ``JobFailedError`` naming the vertex."""
        from processors.api.context import Context

        ctx = Context(vertex_name=vp.name, job_id=self.job_id, total_parallelism=vp.total_parallelism,
                      local_parallelism=vp.local_parallelism, member_count=self.members,
                      processing_guarantee=self.guarantee, unbounded=self.unbounded)
        try:
            meta.init(ctx)
            self.opened.append((vp.name, meta))
            fn = meta.get(list(range(self.members)))
            return [fn(m) for m in range(self.members)]
        except Exception as exc:
            raise JobFailedError(
                f"Job '{self.job_name}': the ProcessorMetaSupplier of vertex '{vp.name}' failed on the driver: "
                f"{type(exc).__qualname__}: {exc}", job_name=self.job_name, vertex=vp.name,
                exc_type=type(exc).__qualname__, exc_message=str(exc)) from exc

    def close(self, error: BaseException | None) -> JobFailedError | None:
        """``close(error)`` every opened meta supplier; returns the first failure of a close (not raised, so
        the caller finishes its own cleanup first), None when all closed."""
        first: JobFailedError | None = None
        for name, meta in self.opened:
            try:
                meta.close(error)
            except Exception as exc:  # noqa: BLE001
                first = first or JobFailedError(
                    f"Job '{self.job_name}': ProcessorMetaSupplier.close() of vertex '{name}' failed: {exc!r}",
                    job_name=self.job_name, vertex=name, exc_type=type(exc).__qualname__, exc_message=str(exc))
        return first
