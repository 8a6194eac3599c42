"""``job.suspend()``, ``job.resume()`` and ``job.restart()`` of a pipelined job (driver side; Jet's
``SUSPEND_GRACEFUL`` / ``RESTART_GRACEFUL`` terminations, ``jet-streaming.md`` 10).

:class:`Suspension` is the part every pipelined job has, whatever its ``processing_guarantee``:

- ``suspend()`` (only while RUNNING) stops the execution (the tasks learn it from their status poll, so their
  slots are freed) and the job becomes SUSPENDED; ``resume()`` starts a new execution; ``restart()`` is both.
- Without snapshots (guarantee NONE) that is all, as in Jet: the execution stops at once and the next one
  starts with empty state, the sources from their beginning (:meth:`Suspension.run_executions` is the
  execution loop of such a job; any failure still fails it).
- :class:`~dag.runtime.pipelined.restarts.SnapshotRun` (EXACTLY_ONCE, AT_LEAST_ONCE) extends it: a snapshot is
  taken before the execution stops (:meth:`Suspension._before_stop`) and the next execution restores it
  (:meth:`Suspension._restore_point`).

A cancel while SUSPENDED ends the job at once (FAILED, ``CancellationError``, as in Jet 4).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from jetspark_base.errors import DagValidationError
from dag.runtime.common.status import JobStatus
from dag.runtime.pipelined.failure_choice import choose_failure, naming

if TYPE_CHECKING:  # pragma: no cover
    from dag.runtime.runtime import RunningJob

__all__ = ["Suspension", "CANCELLED", "STOP_WAIT"]

STOP_WAIT = 30.0
"""Seconds ``suspend()`` waits for the stage to stop (after its snapshot completed, with one)."""
POLL = 0.02
"""How often the waits below look again."""
CANCELLED = object()
"""What :meth:`Suspension._suspended` returns when the job was cancelled while SUSPENDED."""
_log = logging.getLogger("jetspark.snapshots")


class Suspension:
    """Suspend, resume and restart of one pipelined job (see the module docstring)."""

    def __init__(self, run: Any, job: RunningJob):
        """``run``: the job's ``PipelinedRun`` (``Any``: the coordinator imports this module, not the reverse)."""
        self.run, self.job = run, job
        self._suspending = threading.Event()
        self._resume = threading.Event()

    # ------------------------------------------------------------------ public (through Job)
    def suspend(self) -> None:
        """Stop the execution (after a snapshot, with one); the job becomes SUSPENDED until :meth:`resume`."""
        if self.job.status is not JobStatus.RUNNING or self._suspending.is_set():
            raise DagValidationError(f"Job '{self.job.name}' is {self.job.status.value}: only a RUNNING job can be "
                                     "suspended")
        self._before_stop()
        self._resume.clear()
        self._suspending.set()
        self.run.stop_requested.set()
        deadline = time.monotonic() + STOP_WAIT
        while self.job.status is not JobStatus.SUSPENDED and not self.job.status.is_terminal:
            if time.monotonic() > deadline:
                break
            time.sleep(POLL)

    def resume(self) -> None:
        """Start a new execution of a SUSPENDED job (from the snapshot its suspension took, with one)."""
        if self.job.status is not JobStatus.SUSPENDED:
            raise DagValidationError(f"Job '{self.job.name}' is {self.job.status.value}: only a SUSPENDED job can be "
                                     "resumed")
        self._resume.set()
        deadline = time.monotonic() + STOP_WAIT
        while self.job.status is JobStatus.SUSPENDED and time.monotonic() < deadline:
            time.sleep(POLL)

    def restart(self) -> None:
        """Stop the execution and start a new one (Jet's ``restart()``)."""
        self.suspend()
        self.resume()

    # ------------------------------------------------------------------ hooks
    def _before_stop(self) -> None:
        """Runs before the execution is told to stop (a snapshot, with one)."""

    def _restore_point(self) -> int | None:
        """The snapshot the next execution restores (None: it starts with empty state)."""
        return None

    # ------------------------------------------------------------------ the execution loop's side
    def stopped_for_suspension(self) -> bool:
        """The execution that just ended was stopped by :meth:`suspend` (and the job was not cancelled)."""
        return self._suspending.is_set() and not self.job.cancelled

    def _suspended(self) -> Any:
        """The stage stopped for a suspension: SUSPENDED until resumed (returns the snapshot to restore) or
        cancelled (returns :data:`CANCELLED`)."""
        run, job = self.run, self.job
        restore_id = self._restore_point()
        job.status = JobStatus.SUSPENDED
        _log.info("Job '%s' suspended%s", job.name, "" if restore_id is None else f" at snapshot {restore_id}")
        while not self._resume.wait(POLL * 5):
            if job.cancelled:
                return CANCELLED
        self._suspending.clear()
        run.attempt += 1
        run.stop_requested.clear()
        run.stage_done.clear()
        job.status = JobStatus.RUNNING
        _log.info("Job '%s' resumes %s", job.name, "from scratch" if restore_id is None else
                  f"from snapshot {restore_id}")
        return restore_id

    def _raise_cause(self, exc: Exception, records_before: int) -> None:
        """Raise the failure of an execution that failed with Spark's ``exc``: a processor's own failure, not a
        broken link it caused (``failure_choice.py``); without any record (a Python worker died unreported),
        the error naming the processors the lost task ran. Returns when neither applies."""
        run = self.run
        cause = choose_failure(run.channel, exc, records_before, run.tasks_running)
        if cause is not None:  # the job reports the record named here
            raise naming(self.job.name, cause) from exc
        lost = run.lost_task(exc)
        if lost is not None:
            raise lost from exc

    def run_executions(self) -> None:
        """The execution loop of a job without snapshots: run, and after a suspension run again from scratch."""
        run = self.run
        while True:
            spec = run.worker_spec()
            run.await_slots()
            records_before = run.channel.record_count()
            try:
                run.run_stage(spec)
            except BaseException as exc:
                if not self.stopped_for_suspension():
                    if isinstance(exc, Exception):
                        self._raise_cause(exc, records_before)
                    raise
            if not self.stopped_for_suspension() or self._suspended() is CANCELLED:
                return
