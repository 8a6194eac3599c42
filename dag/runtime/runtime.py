"""The one interface between a :class:`~dag.runtime.job.Job` and the runtime that executes it.

A DAG runs in one of two ways (``ExecutionMode``), and the engine chooses the way once per job, from the mode
(``engine.execution_mode``); nothing after that asks which one it is:

- :class:`~dag.runtime.staged.runtime.StagedRuntime` (``STAGED``, batch): the planner cuts the DAG into stages,
  one ``mapPartitionsWithIndex`` pass each, linked by Spark shuffles and run one after another as Spark jobs
  (``build.PlanRun``). Metrics come back through a Spark accumulator; a cancel cancels the job's Spark job
  group (again and again until the job ended, so that no Spark job submitted just after escapes it).
- :class:`~dag.runtime.pipelined.runtime.PipelinedRuntime` (``PIPELINED``, streaming and watermarks): every
  processor runs at once in one gang-scheduled barrier stage (``pipelined/coordinator.PipelinedRun``); the
  tasks report live metrics on the job's channel and stop when the driver's stop flag tells them to; with a
  processing guarantee it takes snapshots and restarts from them (``pipelined/restarts.py``), and it is the
  only one that can suspend, resume and restart a job (``pipelined/suspension.py``).

The lifecycle of a job through its runtime (the methods of :class:`Runtime`, in the order they are called)::

    engine.new_job(dag)
      runtime = Runtime(engine)            chosen once, by the execution mode
      plan = runtime.plan(dag)             validates; a pipelined plan carries its task layout
      runtime.admit(plan, name)            pipelined: waits (bounded) for the gang's free Spark slots, or refuses
      Job(engine, runtime, RunningJob)     runtime.attach(job); the job's thread starts
    job thread                             status NOT_RUNNING
      open the job's channel               task failures -> runtime.on_task_failure(record)
      runtime.start()                      STARTING: the job's Spark job group, suppliers created on the driver
      runtime.run()                        RUNNING until the job's work ended (pipelined: SUSPENDED meanwhile)
      runtime.close(error)                 COMPLETING: meta suppliers closed, snapshots deleted, ...
                                           then COMPLETED or FAILED, join() returns
    any thread
      job.cancel()  -> runtime.cancel()
      job.metrics() -> runtime.metrics()
      job.suspend()/resume()/restart() -> runtime.suspension(what)

:class:`RunningJob` is what a runtime knows of its job and the state they share (status, cancelled, done),
so a runtime never reaches into ``Job``; :class:`EngineServices` is what jobs and runtimes use of the engine,
so neither imports ``Engine``. Both are plain interfaces: a test runs a ``Job`` on a fake runtime and a fake
engine without Spark.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from dag.runtime.common.job_group import group_id_of
from dag.runtime.common.status import JobStatus

if TYPE_CHECKING:  # pragma: no cover
    from dag.config import EngineConfig, JobConfig
    from dag.planner.physical_plan import PhysicalPlan
    from dag.runtime.common.driver_collections import DriverCollections
    from dag.runtime.common.metrics import JobMetrics

__all__ = ["EngineServices", "RunningJob", "Runtime", "Suspendable"]


class EngineServices(Protocol):
    """What a job and its runtime use of the engine that runs them (``Engine`` satisfies it)."""

    @property
    def config(self) -> EngineConfig:
        """The engine's configuration."""
        ...

    @property
    def spark(self) -> Any:
        """The SparkSession (raises ``DagValidationError`` once the engine or its session is closed)."""
        ...

    @property
    def members(self) -> int:
        """How many members (executors) a job is planned for."""
        ...

    @property
    def default_local_parallelism(self) -> int:
        """The local parallelism of a vertex that sets none."""
        ...

    @property
    def driver_collections(self) -> DriverCollections:
        """The driver-side maps, lists, observables and topics jobs read and write."""
        ...

    @property
    def is_local(self) -> bool:
        """True when Spark runs on this machine only (ports then bind to loopback)."""
        ...


@dataclass
class RunningJob:
    """One job as its runtime sees it: what it runs, and the state the job and the runtime share.

    The job creates it; the runtime reads the facts, sets ``status`` while a pipelined job is suspended and
    resumed, and reads ``cancelled`` and ``done``.
    """

    id: int
    name: str
    config: JobConfig
    dag: Any
    plan: PhysicalPlan
    describe: Callable[[str], None] = field(default=lambda what: None, repr=False)
    """Names the next Spark job after what it runs (``what``); raises when the job was cancelled."""
    channel: Any = field(default=None, repr=False)
    """The job's ``JobChannel``, open from before ``Runtime.start`` until the job ended."""
    status: JobStatus = JobStatus.NOT_RUNNING
    cancelled: bool = False
    done: threading.Event = field(default_factory=threading.Event, repr=False)
    """Set once the job ended (``join()`` returns)."""

    @property
    def group_id(self) -> str:
        """The Spark job group of this job (``jetspark-<id>``)."""
        return group_id_of(self.id)


@runtime_checkable
class Suspendable(Protocol):
    """``job.suspend()``, ``resume()`` and ``restart()`` as a runtime that supports them implements them."""

    def suspend(self) -> None:
        """Stop the execution; the job becomes SUSPENDED."""
        ...

    def resume(self) -> None:
        """Start a SUSPENDED job again."""
        ...

    def restart(self) -> None:
        """Suspend, then resume."""
        ...


@runtime_checkable
class Runtime(Protocol):
    """Plans, starts, watches and stops one job (see the module docstring for the order of the calls)."""

    def plan(self, dag: Any) -> PhysicalPlan:
        """The physical plan ``dag`` runs with (validates it; also ``engine.plan``)."""
        ...

    def admit(self, plan: PhysicalPlan, job_name: str) -> None:
        """Refuse the job (``JobFailedError``) when it cannot run now; called by ``new_job`` before it starts."""
        ...

    def attach(self, job: RunningJob) -> None:
        """The job this runtime runs (once, when the ``Job`` is created, before any other call below)."""
        ...

    def start(self) -> None:
        """STARTING, in the job's thread: the Spark job group, the processor suppliers on the driver."""
        ...

    def run(self) -> None:
        """Run the job's work to its end; raises its failure."""
        ...

    def cancel(self) -> None:
        """Stop the job's work (``RunningJob.cancelled`` is already True); returns at once."""
        ...

    def on_task_failure(self, record: dict) -> None:
        """A task reported a failure on the job's channel: stop the job's work (or restart it)."""
        ...

    def metrics(self) -> JobMetrics:
        """The job's metrics so far (complete once it ended)."""
        ...

    def suspension(self, what: str) -> Suspendable:
        """What ``job.suspend()``/``resume()``/``restart()`` (``what``) call; raises ``DagError`` when the job
        cannot be suspended (a STAGED job, or one not running)."""
        ...

    def progress_lines(self) -> Callable[[], list[str]] | None:
        """The progress display's lines, or None for Spark's per-stage progress."""
        ...

    def close(self, error: BaseException | None) -> None:
        """COMPLETING: release what ``start`` created (always called, also after a failure); raises a failure
        of its own only when ``error`` is None."""
        ...
