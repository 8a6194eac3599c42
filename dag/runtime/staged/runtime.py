"""The staged runtime: a batch DAG as a sequence of Spark jobs (the :class:`~dag.runtime.runtime.Runtime` of
``ExecutionMode.STAGED``).

The planner cuts the DAG into stages (``dag/planner``); :class:`~dag.runtime.staged.build.PlanRun` turns them into RDDs
and runs each leaf stage's Spark action in turn, in the job's Spark job group. What this module adds around it
is the job's side: the accumulator the tasks add their counts to (``job.metrics()``), a cancel that cancels the
job group until the job ended (a Spark job submitted just after one cancel must not escape it), and a task
failure that cancels the group at once (Spark would retry the task). A staged job cannot be suspended.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jetspark_base.errors import DagError
from dag.planner import plan_dag
from dag.runtime.staged.build import PlanRun
from dag.runtime.common.job_group import cancel_in_background
from dag.runtime.common.metrics import JobMetrics, MetricsParam

if TYPE_CHECKING:  # pragma: no cover
    from dag.planner.physical_plan import PhysicalPlan
    from dag.runtime.runtime import EngineServices, RunningJob, Suspendable

__all__ = ["StagedRuntime"]

CANCEL_REPEAT_SECONDS = 0.5
"""How often a cancelled staged job cancels its Spark job group again, until it ended."""


class StagedRuntime:
    """Runs a job's plan stage by stage (see the module docstring)."""

    def __init__(self, engine: EngineServices):
        self._engine = engine
        self._job: RunningJob | None = None
        self._run: PlanRun | None = None
        self._accumulator: Any = None
        self._failed = False

    def plan(self, dag: Any) -> PhysicalPlan:
        """The staged plan of ``dag`` under the engine's configuration."""
        engine = self._engine
        return plan_dag(dag, engine.config, engine.members, engine.default_local_parallelism)

    def admit(self, plan: PhysicalPlan, job_name: str) -> None:
        """Always admitted: the stages take Spark's slots as they free up."""

    def attach(self, job: RunningJob) -> None:
        """The job this runtime runs."""
        self._job = job

    def _attached(self) -> RunningJob:
        if self._job is None:
            raise DagError("internal error: the staged runtime was used before a job was attached to it")
        return self._job

    def start(self) -> None:
        """The job group, the metrics accumulator and the :class:`PlanRun` (it opens the suppliers stage by stage)."""
        job = self._attached()
        sc = self._engine.spark.sparkContext
        sc.setJobGroup(job.group_id, f"jetspark job '{job.name}'", interruptOnCancel=True)
        self._accumulator = sc.accumulator({}, MetricsParam())
        self._run = PlanRun(sc, job.dag, job.plan, job_id=job.id, job_name=job.name,
                            guarantee=job.config.processing_guarantee, accumulator=self._accumulator,
                            collections=self._engine.driver_collections, describe=job.describe,
                            channel=job.channel.ref, serve=job.channel.register)

    def run(self) -> None:
        """Build the stages and run their actions, in order."""
        if self._run is None:
            raise DagError("internal error: StagedRuntime.run() before start()")
        self._run.run()

    def cancel(self) -> None:
        """Cancel the job group now and every :data:`CANCEL_REPEAT_SECONDS` until the job ended."""
        job = self._attached()
        sc = self._engine.spark.sparkContext

        def keep_cancelling() -> None:  # a Spark job submitted just after a cancel must not escape it
            try:
                while not job.done.wait(CANCEL_REPEAT_SECONDS):
                    sc.cancelJobGroup(job.group_id)
            except Exception:  # noqa: BLE001 - the session was stopped: nothing left to cancel
                pass

        sc.cancelJobGroup(job.group_id)
        threading.Thread(target=keep_cancelling, name=f"jetspark-cancel-{job.id}", daemon=True).start()

    def on_task_failure(self, record: dict) -> None:
        """A task reported a user failure: fail the whole job now (Spark would retry the task)."""
        if self._failed:
            return
        self._failed = True
        job = self._attached()
        cancel_in_background(self._engine.spark.sparkContext, job.group_id, job.id)

    def metrics(self) -> JobMetrics:
        """The counts of the tasks finished so far (all of them once the job ended)."""
        return JobMetrics(dict(self._accumulator.value) if self._accumulator is not None else {})

    def suspension(self, what: str) -> Suspendable:
        """Never: a staged job cannot be suspended (raises ``DagError``)."""
        raise DagError(f"Job '{self._attached().name}': {what}() needs a running PIPELINED job; this one is "
                       "a STAGED job")

    def progress_lines(self) -> Callable[[], list[str]] | None:
        """None: the progress display shows the Spark stages of the job group."""
        return None

    def close(self, error: BaseException | None) -> None:
        """Close the meta suppliers, unpersist outputs, destroy broadcasts."""
        if self._run is not None:
            self._run.close(error)
