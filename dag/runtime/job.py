"""Jobs: one DAG execution on the engine's Spark session, started asynchronously (Jet's ``Job``).

A job runs in its own thread, in its own Spark job group (``jetspark-<id>``), so ``cancel()`` can cancel
exactly its Spark jobs. Status transitions: ``NOT_RUNNING`` (created) -> ``STARTING`` (planning, suppliers
created on the driver) -> ``RUNNING`` (Spark actions) -> ``COMPLETING`` (meta suppliers closed, metrics read)
-> ``COMPLETED`` or ``FAILED``. ``join()`` re-raises a failure as ``JobFailedError``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from enum import Enum
from typing import TYPE_CHECKING, Any

from jetspark_base.errors import CancellationError, DagError, JobFailedError
from dag.runtime.common.failures import decode_failure, summarize_spark_error
from dag.runtime.common.metrics import JobMetrics, MetricsParam
from dag.runtime.pipelined.snapshot_coordinator import is_restartable

if TYPE_CHECKING:
    from dag.config import JobConfig
    from dag.planner.physical_plan import PhysicalPlan
    from dag.runtime.engine import Engine

__all__ = ["Job", "JobStatus", "await_tasks_gone"]

TASKS_GONE_TIMEOUT = 60.0
"""Seconds a failed or cancelled job waits for Spark to report its killed tasks ended (then it logs them)."""
LOG_TAIL = 200
"""How many of its processors' latest forwarded log records a job keeps (``recent_logs()``, the web page)."""
_log = logging.getLogger("jetspark.runtime")


class JobStatus(str, Enum):
    """Jet's job states. A batch job goes through NOT_RUNNING, STARTING, RUNNING, COMPLETING and COMPLETED or
    FAILED; a PIPELINED job may also be SUSPENDED (not terminal)."""

    NOT_RUNNING = "NOT_RUNNING"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"  # a PIPELINED job stopped by job.suspend() after a snapshot; job.resume() restarts it
    COMPLETING = "COMPLETING"
    FAILED = "FAILED"
    COMPLETED = "COMPLETED"

    @property
    def is_terminal(self) -> bool:
        return self in (JobStatus.FAILED, JobStatus.COMPLETED)


class Job:
    """A running or finished job. Create it with ``engine.new_job(dag)``.

    >>> # job = engine.new_job(dag, JobConfig(name="wc")); job.join(); job.status  -> JobStatus.COMPLETED
    """

    def __init__(self, engine: Engine, dag: Any, plan: PhysicalPlan, config: JobConfig, job_id: int, name: str):
        self._engine, self._dag, self._plan, self._config = engine, dag, plan, config
        self._id, self._name = job_id, name
        self._status = JobStatus.NOT_RUNNING
        self._submission_time = time.time()
        self._completion_time: float | None = None
        self._log_tail: deque[dict] = deque(maxlen=LOG_TAIL)
        self._error: BaseException | None = None
        self._cancelled = False
        self._done = threading.Event()
        self._accumulator: Any = None
        self._progress: Any = None
        self._lock = threading.Lock()
        self._channel: Any = None
        self._user_failed = False
        self._thread = threading.Thread(target=self._main, name=f"jetspark-job-{job_id}", daemon=True)
        self._pipelined_run: Any = None
        self._pipelined_stop = threading.Event()

    # ------------------------------------------------------------------ public API
    @property
    def id(self) -> int:
        return self._id

    @property
    def name(self) -> str:
        return self._name

    @property
    def config(self) -> JobConfig:
        return self._config

    @property
    def plan(self) -> PhysicalPlan:
        return self._plan

    @property
    def dag(self) -> Any:
        """The DAG the job runs (a pipeline's lowered DAG)."""
        return self._dag

    @property
    def engine(self) -> Engine:
        """The engine that runs the job."""
        return self._engine

    @property
    def failure(self) -> BaseException | None:
        """The error ``join()`` raises for a failed job (None while it runs or when it completed)."""
        return self._error

    @property
    def submission_time(self) -> float:
        """When the job was submitted (seconds since the epoch)."""
        return self._submission_time

    @property
    def completion_time(self) -> float | None:
        """When the job completed or failed (seconds since the epoch); None while it has not ended."""
        return self._completion_time

    def recent_logs(self) -> list[dict]:
        """The latest log records its processors forwarded to the driver (at most :data:`LOG_TAIL`, oldest
        first), as plain fields: ``name`` (``jetspark.<vertex>#<index>``), ``levelno``, ``msg``, ``created``."""
        return list(self._log_tail)

    @property
    def status(self) -> JobStatus:
        return self._status

    @property
    def group_id(self) -> str:
        """The Spark job group of this job."""
        return f"jetspark-{self._id}"

    def join(self, timeout: float | None = None) -> None:
        """Wait for the job to finish; raise ``JobFailedError`` if it failed, ``TimeoutError`` on timeout."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"Job '{self._name}' did not finish within {timeout} s (status {self._status.value})")
        if self._error is not None:
            raise self._error

    def suspend(self) -> None:
        """Jet's ``suspend()``: stop the job (status ``SUSPENDED``, its Spark slots freed) until :meth:`resume`.
        For PIPELINED jobs, only while ``RUNNING``. With ``processing_guarantee`` EXACTLY_ONCE or AT_LEAST_ONCE
        a snapshot is taken first and the job resumes from it; with NONE it stops at once and resumes with
        empty state, its sources from the beginning (as Jet)."""
        self._suspension("suspend").suspend()

    def resume(self) -> None:
        """Start a ``SUSPENDED`` job again: from the snapshot its suspension took, or from scratch with NONE."""
        self._suspension("resume").resume()

    def restart(self) -> None:
        """Jet's ``restart()``: stop and start again (e.g. to pick up new members), i.e. ``suspend()`` then
        ``resume()``: from a snapshot taken now, or from scratch with guarantee NONE."""
        self._suspension("restart").restart()

    def _suspension(self, what: str) -> Any:
        run = self._pipelined_run
        if run is None:
            raise DagError(f"Job '{self._name}': {what}() needs a running PIPELINED job; this one is "
                           + ("a STAGED job" if self._plan.pipelined is None else f"{self._status.value}"))
        return run.suspension

    def cancel(self) -> None:
        """Cancel the job: its running Spark jobs are cancelled and it ends FAILED (``join`` raises
        ``CancellationError``)."""
        with self._lock:
            if self._status.is_terminal or self._cancelled:
                return
            self._cancelled = True
        if self._plan.pipelined is not None:  # the coordinator stops the tasks, then cancels Spark if need be
            self._pipelined_stop.set()
            return
        sc = self._engine.spark.sparkContext

        def keep_cancelling() -> None:  # a Spark job submitted just after a cancel must not escape it
            try:
                while not self._done.wait(0.5):
                    sc.cancelJobGroup(self.group_id)
            except Exception:  # noqa: BLE001 - the session was stopped: nothing left to cancel
                pass

        sc.cancelJobGroup(self.group_id)
        threading.Thread(target=keep_cancelling, name=f"jetspark-cancel-{self._id}", daemon=True).start()

    def metrics(self) -> JobMetrics:
        """``receivedCount`` per inbound and ``emittedCount`` per outbound ordinal, per vertex and processor
        (complete once the job finished; a running staged job shows the tasks finished so far, a pipelined
        job its live counts, refreshed every fraction of a second). A PIPELINED job with snapshots also tells
        ``restarts`` (restarts from a snapshot so far) and ``last_snapshot`` (the id of the latest complete
        snapshot, None before the first)."""
        run = self._pipelined_run
        if run is not None:
            snapshots = run.snapshotting
            if snapshots is None:
                return JobMetrics(run.metrics())
            return JobMetrics(run.metrics(), restarts=snapshots.restarts,
                              last_snapshot=snapshots.coordinator.last_complete,
                              snapshot_stats=snapshots.coordinator.last_stats, restart_log=snapshots.restart_log)
        return JobMetrics(dict(self._accumulator.value) if self._accumulator is not None else {})

    def __repr__(self) -> str:
        return f"Job(id={self._id}, name={self._name!r}, status={self._status.value})"

    def _repr_html_(self) -> str:
        """IPython's rich display: the job's status and a table of its vertices' metrics (escaped HTML)."""
        from dag.runtime.webui.html import job_table

        return job_table(self)

    # ------------------------------------------------------------------ execution
    def _start(self) -> None:
        self._thread.start()

    def _main(self) -> None:
        error: BaseException | None = None
        try:
            error = self._execute_pipelined() if self._plan.pipelined is not None else self._execute()
        except BaseException as exc:  # noqa: BLE001 - join() must always return
            error = exc
        finally:
            try:
                self._finish(error)
            finally:
                self._done.set()

    def _execute(self) -> BaseException | None:
        """Run the plan; returns the failure (None on success). Returns only when no task of the job runs."""
        from dag.runtime.staged.build import PlanRun
        from dag.runtime.common.progress import ProgressDisplay

        sc = self._engine.spark.sparkContext
        run = None
        error: BaseException | None = None
        progress = ProgressDisplay(sc, self) if self._engine.config.progress else None
        self._progress = progress
        self._open_channel(sc)
        try:
            self._status = JobStatus.STARTING
            sc.setJobGroup(self.group_id, f"jetspark job '{self._name}'", interruptOnCancel=True)
            self._accumulator = sc.accumulator({}, MetricsParam())
            run = PlanRun(sc, self._dag, self._plan, job_id=self._id, job_name=self._name,
                          guarantee=self._config.processing_guarantee, accumulator=self._accumulator,
                          collections=self._engine._collections, describe=self._describe,  # noqa: SLF001
                          channel=self._channel.ref, serve=self._channel.register)
            self._status = JobStatus.RUNNING
            if progress is not None:
                progress.start()
            run.run()
        except BaseException as exc:  # noqa: BLE001 - reported through join()
            error = exc
            try:
                sc.cancelJobGroup(self.group_id)
                await_tasks_gone(sc, self.group_id)
            except Exception:  # noqa: BLE001 - the JVM died: no task of it runs any more
                pass
        finally:
            if progress is not None:
                progress.stop()
        return self._close_run(run, error)

    def _open_channel(self, sc: Any) -> None:
        """The job's authenticated driver channel, serving failures, driver-side collections and log records."""
        from dag.runtime.common.driver_topics import register_apply_topic, register_collection_topics
        from dag.runtime.common.jobchannel import JobChannel
        from dag.runtime.common.logforward import register_log_topics

        self._channel = JobChannel(sc.master, sc.getConf().get("spark.driver.host"), self._on_task_failure)
        register_collection_topics(self._channel, self._engine._collections)  # noqa: SLF001
        register_apply_topic(self._channel, self._dag, self._engine._collections)  # noqa: SLF001
        register_log_topics(self._channel, self._log_tail.append)

    def _close_run(self, run: Any, error: BaseException | None) -> BaseException | None:
        """COMPLETING: close ``run`` (suppliers, sinks); returns the first failure, ``error`` or close's."""
        self._status = JobStatus.COMPLETING
        if run is not None:
            try:
                run.close(error)
            except BaseException as exc:  # noqa: BLE001
                error = error or exc
        return error

    def _on_task_failure(self, record: dict) -> None:
        """A task reported a user failure: fail the whole job now (Spark would retry the task)."""
        if self._user_failed:
            return
        self._user_failed = True
        self._pipelined_stop.set()
        if getattr(self._pipelined_run, "snapshotting", None) is not None and is_restartable(record):
            return  # the job restarts: its tasks stop by themselves (their next status poll), keeping their workers
        sc = self._engine.spark.sparkContext
        threading.Thread(target=sc.cancelJobGroup, args=(self.group_id,), name=f"jetspark-fail-{self._id}",
                         daemon=True).start()

    def _execute_pipelined(self) -> BaseException | None:
        """Run the job on the pipelined runtime (``dag/runtime/pipelined``); like :meth:`_execute`."""
        from dag.runtime.pipelined.coordinator import PipelinedRun
        from dag.runtime.common.progress import ProgressDisplay

        sc = self._engine.spark.sparkContext
        error: BaseException | None = None
        run = None
        progress = None
        self._open_channel(sc)
        try:
            self._status = JobStatus.STARTING
            sc.setJobGroup(self.group_id, f"jetspark job '{self._name}' (pipelined)", interruptOnCancel=True)
            run = PipelinedRun(self._engine, self._dag, self, self._plan, self._channel, self._pipelined_stop)
            self._pipelined_run = run
            if self._engine.config.progress:
                progress = ProgressDisplay(sc, self, lines=run.progress_lines)
                progress.start()
            self._status = JobStatus.RUNNING
            run.run()
        except BaseException as exc:  # noqa: BLE001 - reported through join()
            error = exc
            sc.cancelJobGroup(self.group_id)
            await_tasks_gone(sc, self.group_id)
        finally:
            if progress is not None:
                progress.stop()
        error = self._close_run(run, error)
        if self._cancelled and error is None:
            error = CancellationError(f"Job '{self._name}' was cancelled", job_name=self._name)
        return error

    def _describe(self, what: str) -> None:
        """Name the next Spark job after the vertices it runs; stop here if the job was cancelled."""
        if self._cancelled:
            raise JobFailedError(f"Job '{self._name}' was cancelled", job_name=self._name)
        self._engine.spark.sparkContext.setJobDescription(f"{self._name}: {what}")
        if self._progress is not None:
            self._progress.announce(what)

    def _finish(self, error: BaseException | None) -> None:
        try:
            if error is not None:
                self._error = self._translate(error)
        except BaseException as exc:  # noqa: BLE001 - a failure to explain a failure still fails the job
            self._error = JobFailedError(f"Job '{self._name}' failed: {error!r} (and reporting it failed: {exc!r})",
                                         job_name=self._name, exc_type=type(error).__name__,
                                         exc_message=str(error)[:2000])
        finally:
            self._completion_time = time.time()
            self._status = JobStatus.FAILED if error is not None else JobStatus.COMPLETED
            self._end_driver_sinks()
            if self._channel is not None:
                self._channel.close()

    def _end_driver_sinks(self) -> None:
        """Tell the DAG's driver-applied sinks (observables) that the job ended, before ``join()`` returns."""
        from dag.runtime.common.driver_topics import end_driver_sinks

        try:
            end_driver_sinks(self._dag, self._engine._collections, self._error)  # noqa: SLF001
        except Exception:  # noqa: BLE001 - the job's outcome stands; the observer's failure is logged
            _log.exception("Job '%s': notifying its observable sinks of the job's end failed", self._name)

    def _translate(self, error: BaseException) -> BaseException:
        if self._cancelled:
            return CancellationError(f"Job '{self._name}' was cancelled", job_name=self._name,
                                     exc_type="CancellationException", exc_message="cancelled")
        from dag.runtime.common.jvm import DEAD_JVM, is_dead_jvm_error

        if is_dead_jvm_error(error):
            failed = JobFailedError(f"Job '{self._name}' failed: {DEAD_JVM}", job_name=self._name,
                                    exc_type=type(error).__name__, exc_message=DEAD_JVM)
            failed.__cause__ = error
            return failed
        decoded = decode_failure(error, self._name, self._channel)
        if decoded is not None:
            return decoded
        if isinstance(error, JobFailedError):
            return error
        if isinstance(error, DagError):
            return JobFailedError(f"Job '{self._name}' failed: {error}", job_name=self._name,
                                  exc_type=type(error).__qualname__, exc_message=str(error))
        python = getattr(self._engine._spark.sparkContext, "pythonExec", None)  # noqa: SLF001
        return summarize_spark_error(error, self._name, python)


def await_tasks_gone(sc: Any, group_id: str, timeout: float = TASKS_GONE_TIMEOUT) -> None:
    """Wait until Spark reports no running task in the job group ``group_id`` (killed tasks included: Spark
    kills a cancelled task's Python worker after ``spark.python.task.killTimeout``)."""
    tracker = sc.statusTracker()
    deadline = time.monotonic() + timeout
    while True:
        active = 0
        for job_id in tracker.getJobIdsForGroup(group_id):
            info = tracker.getJobInfo(job_id)
            for stage_id in (info.stageIds if info is not None else ()):
                stage = tracker.getStageInfo(stage_id)
                active += stage.numActiveTasks if stage is not None else 0
        if active == 0:
            return
        if time.monotonic() > deadline:
            _log.warning("jetspark: %d task(s) of job group %s still running %.0f s after the job ended",
                         active, group_id, timeout)
            return
        time.sleep(0.1)
