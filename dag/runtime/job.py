"""Jobs: one DAG execution on the engine's Spark session, started asynchronously (Jet's ``Job``).

A job runs in its own thread, in its own Spark job group (``jetspark-<id>``), so ``cancel()`` can cancel
exactly its Spark jobs. Status transitions: ``NOT_RUNNING`` (created) -> ``STARTING`` (planning, suppliers
created on the driver) -> ``RUNNING`` (Spark actions) -> ``COMPLETING`` (meta suppliers closed, metrics read)
-> ``COMPLETED`` or ``FAILED``. ``join()`` re-raises a failure as ``JobFailedError``.

The job does the same for every execution mode: it opens the job's channel, walks the statuses, turns a
failure into the error ``join()`` raises and tells driver-side sinks that it ended. How the work runs, stops,
reports metrics and suspends is its :class:`~dag.runtime.runtime.Runtime`'s (staged or pipelined, chosen by
the engine), which the job knows only through that interface; the state both read (status, cancelled, done)
is the job's :class:`~dag.runtime.runtime.RunningJob`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from jetspark_base.errors import CancellationError, DagError, JobFailedError
from dag.runtime.common.failures import decode_failure, summarize_spark_error
from dag.runtime.common.job_group import await_tasks_gone
from dag.runtime.runtime import RunningJob
from dag.runtime.common.status import JobStatus

if TYPE_CHECKING:
    from dag.config import JobConfig
    from dag.planner.physical_plan import PhysicalPlan
    from dag.runtime.common.metrics import JobMetrics
    from dag.runtime.runtime import EngineServices, Runtime

__all__ = ["Job"]

LOG_TAIL = 200
"""How many of its processors' latest forwarded log records a job keeps (``recent_logs()``, the web page)."""
_log = logging.getLogger("jetspark.runtime")


class Job:
    """A running or finished job. Create it with ``engine.new_job(dag)``; it starts at once.

    >>> # job = engine.new_job(dag, JobConfig(name="wc")); job.join(); job.status  -> JobStatus.COMPLETED
    """

    def __init__(self, engine: EngineServices, runtime: Runtime, dag: Any, plan: PhysicalPlan, config: JobConfig,
                 job_id: int, name: str):
        """Start job ``job_id`` running ``plan`` (of ``dag``) on ``runtime``; ``engine.new_job`` calls it."""
        self._engine, self._runtime = engine, runtime
        self._state = RunningJob(job_id, name, config, dag, plan, describe=self._describe)
        self._submission_time = time.time()
        self._completion_time: float | None = None
        self._log_tail: deque[dict] = deque(maxlen=LOG_TAIL)
        self._error: BaseException | None = None
        self._progress: Any = None
        self._python: str | None = None  # the Python of Spark's workers (named in a failure's summary)
        self._lock = threading.Lock()
        runtime.attach(self._state)
        threading.Thread(target=self._main, name=f"jetspark-job-{job_id}", daemon=True).start()

    # ------------------------------------------------------------------ public API
    @property
    def id(self) -> int:
        return self._state.id

    @property
    def name(self) -> str:
        return self._state.name

    @property
    def config(self) -> JobConfig:
        return self._state.config

    @property
    def plan(self) -> PhysicalPlan:
        return self._state.plan

    @property
    def dag(self) -> Any:
        """The DAG the job runs (a pipeline's lowered DAG)."""
        return self._state.dag

    @property
    def engine(self) -> EngineServices:
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
        return self._state.status

    @property
    def group_id(self) -> str:
        """The Spark job group of this job."""
        return self._state.group_id

    def join(self, timeout: float | None = None) -> None:
        """Wait for the job to finish; raise ``JobFailedError`` if it failed, ``TimeoutError`` on timeout."""
        if not self._state.done.wait(timeout):
            raise TimeoutError(f"Job '{self.name}' did not finish within {timeout} s (status {self.status.value})")
        if self._error is not None:
            raise self._error

    def suspend(self) -> None:
        """Jet's ``suspend()``: stop the job (status ``SUSPENDED``, its Spark slots freed) until :meth:`resume`.
        For PIPELINED jobs, only while ``RUNNING``. With ``processing_guarantee`` EXACTLY_ONCE or AT_LEAST_ONCE
        a snapshot is taken first and the job resumes from it; with NONE it stops at once and resumes with
        empty state, its sources from the beginning (as Jet)."""
        self._runtime.suspension("suspend").suspend()

    def resume(self) -> None:
        """Start a ``SUSPENDED`` job again: from the snapshot its suspension took, or from scratch with NONE."""
        self._runtime.suspension("resume").resume()

    def restart(self) -> None:
        """Jet's ``restart()``: stop and start again (e.g. to pick up new members), i.e. ``suspend()`` then
        ``resume()``: from a snapshot taken now, or from scratch with guarantee NONE."""
        self._runtime.suspension("restart").restart()

    def cancel(self) -> None:
        """Cancel the job: its running Spark jobs are cancelled and it ends FAILED (``join`` raises
        ``CancellationError``)."""
        with self._lock:
            if self._state.status.is_terminal or self._state.cancelled:
                return
            self._state.cancelled = True
        self._runtime.cancel()

    def metrics(self) -> JobMetrics:
        """``receivedCount`` per inbound and ``emittedCount`` per outbound ordinal, per vertex and processor
        (complete once the job finished; a running staged job shows the tasks finished so far, a pipelined
        job its live counts, refreshed every fraction of a second). A PIPELINED job with snapshots also tells
        ``restarts`` (restarts from a snapshot so far) and ``last_snapshot`` (the id of the latest complete
        snapshot, None before the first)."""
        return self._runtime.metrics()

    def __repr__(self) -> str:
        return f"Job(id={self.id}, name={self.name!r}, status={self.status.value})"

    def _repr_html_(self) -> str:
        """IPython's rich display: the job's status and a table of its vertices' metrics (escaped HTML)."""
        from dag.runtime.webui.html import job_table

        return job_table(self)

    # ------------------------------------------------------------------ execution
    def _main(self) -> None:
        error: BaseException | None = None
        try:
            error = self._execute()
        except BaseException as exc:  # noqa: BLE001 - join() must always return
            error = exc
        finally:
            try:
                self._finish(error)
            finally:
                self._state.done.set()

    def _execute(self) -> BaseException | None:
        """Run the job on its runtime; returns the failure (None on success). Returns only when no task of the
        job runs."""
        from dag.runtime.common.progress import ProgressDisplay

        state, runtime = self._state, self._runtime
        sc = self._engine.spark.sparkContext
        self._python = getattr(sc, "pythonExec", None)
        error: BaseException | None = None
        progress = None
        self._open_channel(sc)
        try:
            state.status = JobStatus.STARTING
            runtime.start()
            if self._engine.config.progress:
                progress = ProgressDisplay(sc, self, lines=runtime.progress_lines())
                self._progress = progress
                progress.start()
            state.status = JobStatus.RUNNING
            runtime.run()
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
        state.status = JobStatus.COMPLETING  # close the suppliers and sinks, also after a failure
        try:
            runtime.close(error)
        except BaseException as exc:  # noqa: BLE001
            error = error or exc
        if state.cancelled and error is None:
            error = CancellationError(f"Job '{self.name}' was cancelled", job_name=self.name)
        return error

    def _open_channel(self, sc: Any) -> None:
        """The job's authenticated driver channel, serving failures, driver-side collections and log records."""
        from dag.runtime.common.cluster import on_this_machine
        from dag.runtime.common.driver_topics import register_apply_topic, register_collection_topics
        from dag.runtime.common.jobchannel import JobChannel
        from dag.runtime.common.logforward import register_log_topics

        # on this machine the channel binds to loopback; getConf() copies the whole conf (~90 Py4J calls)
        host = None if on_this_machine(sc.master) else sc.getConf().get("spark.driver.host")
        channel = JobChannel(sc.master, host, self._runtime.on_task_failure)
        self._state.channel = channel
        register_collection_topics(channel, self._engine.driver_collections)
        register_apply_topic(channel, self.dag, self._engine.driver_collections)
        register_log_topics(channel, self._log_tail.append)

    def _describe(self, what: str) -> None:
        """Name the next Spark job after the vertices it runs; stop here if the job was cancelled."""
        if self._state.cancelled:
            raise JobFailedError(f"Job '{self.name}' was cancelled", job_name=self.name)
        self._engine.spark.sparkContext.setJobDescription(f"{self.name}: {what}")
        if self._progress is not None:
            self._progress.announce(what)

    def _finish(self, error: BaseException | None) -> None:
        try:
            if error is not None:
                self._error = self._translate(error)
        except BaseException as exc:  # noqa: BLE001 - a failure to explain a failure still fails the job
            self._error = JobFailedError(f"Job '{self.name}' failed: {error!r} (and reporting it failed: {exc!r})",
                                         job_name=self.name, exc_type=type(error).__name__,
                                         exc_message=str(error)[:2000])
        finally:
            self._completion_time = time.time()
            self._state.status = JobStatus.FAILED if error is not None else JobStatus.COMPLETED
            self._end_driver_sinks()
            if self._state.channel is not None:
                self._state.channel.close()

    def _end_driver_sinks(self) -> None:
        """Tell the DAG's driver-applied sinks (observables) that the job ended, before ``join()`` returns."""
        from dag.runtime.common.driver_topics import end_driver_sinks

        try:
            end_driver_sinks(self.dag, self._engine.driver_collections, self._error)
        except Exception:  # noqa: BLE001 - the job's outcome stands; the observer's failure is logged
            _log.exception("Job '%s': notifying its observable sinks of the job's end failed", self.name)

    def _translate(self, error: BaseException) -> BaseException:
        name = self.name
        if self._state.cancelled:
            return CancellationError(f"Job '{name}' was cancelled", job_name=name,
                                     exc_type="CancellationException", exc_message="cancelled")
        from dag.runtime.common.jvm import DEAD_JVM, is_dead_jvm_error

        if is_dead_jvm_error(error):
            failed = JobFailedError(f"Job '{name}' failed: {DEAD_JVM}", job_name=name,
                                    exc_type=type(error).__name__, exc_message=DEAD_JVM)
            failed.__cause__ = error
            return failed
        decoded = decode_failure(error, name, self._state.channel)
        if decoded is not None:
            return decoded
        if isinstance(error, JobFailedError):
            return error
        if isinstance(error, DagError):
            return JobFailedError(f"Job '{name}' failed: {error}", job_name=name,
                                  exc_type=type(error).__qualname__, exc_message=str(error))
        return summarize_spark_error(error, name, self._python)
