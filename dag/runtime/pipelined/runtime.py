"""The pipelined runtime: every processor at once in one barrier stage (the
:class:`~dag.runtime.runtime.Runtime` of ``ExecutionMode.PIPELINED``).

:class:`PipelinedRuntime` is the job's side of :class:`~dag.runtime.pipelined.coordinator.PipelinedRun` (the
driver's coordinator): it plans with the coordinator's layout, refuses a job whose gang of tasks cannot get
its Spark slots (``admit``), creates the coordinator when the job starts, and turns the job's requests into
the coordinator's: a cancel sets the stop flag the tasks poll (the coordinator's watchdog cancels the Spark
job group if they do not stop in time), a task's failure stops or restarts the execution, suspend/resume/
restart go to the coordinator's :class:`~dag.runtime.pipelined.suspension.Suspension`, and the metrics are the
tasks' live counts plus the snapshot figures.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jetspark_base.errors import DagError
from dag.runtime.common.metrics import JobMetrics
from dag.runtime.pipelined.coordinator import PipelinedRun, wait_for_slots

if TYPE_CHECKING:  # pragma: no cover
    from dag.planner.physical_plan import PhysicalPlan
    from dag.runtime.runtime import EngineServices, RunningJob, Suspendable

__all__ = ["PipelinedRuntime"]


class PipelinedRuntime:
    """Runs a job as one gang-scheduled Spark stage (see the module docstring)."""

    def __init__(self, engine: EngineServices):
        self._engine = engine
        self._job: RunningJob | None = None
        self._run: PipelinedRun | None = None
        self._stop = threading.Event()  # set by a cancel or a failure, possibly before the coordinator exists

    def plan(self, dag: Any) -> PhysicalPlan:
        """The plan of ``dag`` with its task layout (``plan.pipelined``; ``explain()`` shows the layout)."""
        return PipelinedRun.layout_for(self._engine, dag)[0]

    def admit(self, plan: PhysicalPlan, job_name: str) -> None:
        """Wait (bounded) until the stage's tasks have free Spark slots, all at once; else refuse the job."""
        wait_for_slots(self._engine.spark.sparkContext, plan.pipelined.tasks, job_name)

    def attach(self, job: RunningJob) -> None:
        """The job this runtime runs."""
        self._job = job

    def _attached(self) -> RunningJob:
        if self._job is None:
            raise DagError("internal error: the pipelined runtime was used before a job was attached to it")
        return self._job

    def start(self) -> None:
        """The job group and the coordinator (its suppliers are created when an execution starts)."""
        job = self._attached()
        sc = self._engine.spark.sparkContext
        sc.setJobGroup(job.group_id, f"jetspark job '{job.name}' (pipelined)", interruptOnCancel=True)
        self._run = PipelinedRun(self._engine, job.dag, job, job.plan, job.channel, self._stop)

    def run(self) -> None:
        """Run executions until the job completes, fails or is cancelled (see ``coordinator.py``)."""
        if self._run is None:
            raise DagError("internal error: PipelinedRuntime.run() before start()")
        self._run.run()

    def cancel(self) -> None:
        """Set the stop flag: the tasks stop at their next status poll, the coordinator then ends the job."""
        self._stop.set()

    def on_task_failure(self, record: dict) -> None:
        """Stop the execution; the coordinator restarts it from a snapshot when the failure allows."""
        if self._run is None:
            self._stop.set()
            return
        self._run.task_failed(record)

    def metrics(self) -> JobMetrics:
        """The tasks' live counts; with snapshots also the restarts, the last snapshot and the restart log."""
        run = self._run
        if run is None:
            return JobMetrics({})
        snapshots = run.snapshotting
        if snapshots is None:
            return JobMetrics(run.metrics())
        return JobMetrics(run.metrics(), restarts=snapshots.restarts,
                          last_snapshot=snapshots.coordinator.last_complete,
                          snapshot_stats=snapshots.coordinator.last_stats, restart_log=snapshots.restart_log)

    def suspension(self, what: str) -> Suspendable:
        """The coordinator's suspension, once the job runs; else ``DagError`` naming the job's status."""
        job = self._attached()
        if self._run is None:
            raise DagError(f"Job '{job.name}': {what}() needs a running PIPELINED job; this one is {job.status.value}")
        return self._run.suspension

    def progress_lines(self) -> Callable[[], list[str]] | None:
        """Items per second of every vertex (the stage's Spark progress says nothing while it streams)."""
        return None if self._run is None else self._run.progress_lines

    def close(self, error: BaseException | None) -> None:
        """Close the meta suppliers and delete the job's snapshots."""
        if self._run is not None:
            self._run.close(error)
