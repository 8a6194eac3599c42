"""Snapshots and restarts of a pipelined job on the driver (Jet's ``MasterContext``, ``jet-streaming.md`` 8).

:class:`SnapshotRun` is created by the :class:`~dag.runtime.pipelined.coordinator.PipelinedRun` of a job whose
``processing_guarantee`` is ``EXACTLY_ONCE`` or ``AT_LEAST_ONCE`` and runs it:

- **store**: ``EngineConfig.snapshot_dir`` (a temporary directory in local mode, deleted with the job; required
  on a cluster), one :class:`~dag.runtime.snapshot_store.SnapshotStore` per job, cleared when the job is
  submitted so that nothing of an older job is ever restored;
- **snapshots**: a ticker thread per execution starts snapshot ``n`` every ``snapshot_interval_ms`` after the
  previous one completed (:class:`~dag.runtime.snapshot_coordinator.SnapshotCoordinator`); the tasks learn it from
  their status poll (reply ``snapshot``), the sources save and emit barrier ``n``, every processor saves once the
  barrier is aligned and reports (``SNAPSHOT_TOPIC``); when all reported the snapshot is marked complete, older
  ones are deleted, the driver-side sinks publish what it covers, and phase 2 goes out (reply ``finish``:
  ``[[id, success], ...]``); a snapshot that does not complete within :data:`SNAPSHOT_TIMEOUT` seconds fails;
- **restarts**: when an execution fails with a ``RestartableError`` or an infrastructure failure (a lost task,
  Python worker or executor, a broken link) the job restarts from the last complete snapshot: incomplete
  snapshots are deleted, the staged sink items after it dropped, and a new barrier stage starts whose tasks
  restore their processors' routed entries; :class:`~dag.runtime.snapshot_coordinator.RestartPolicy` stops after
  ``JobConfig.max_restarts`` restarts in a row, failing the job with the last error. Restarts are logged
  (logger ``jetspark.snapshots``) and counted (``job.metrics().restarts``). A cancelled job never restarts;
- **suspend/resume/restart** (``job.suspend()``, ``job.resume()``, ``job.restart()``): a snapshot is taken at
  once, the execution stops after it completed (status SUSPENDED; what ran after the snapshot is rolled back
  like after a failure), and ``resume`` starts a new execution from that snapshot; ``restart`` is both;
- **driver-side sinks** of an EXACTLY_ONCE job stage their items in a :class:`~dag.runtime.sink_ledger.SinkLedger`
  (``STAGE_TOPIC``), sealed per snapshot (``SEAL_TOPIC``); a completed job publishes what remains.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from typing import Any

from dag.config import ProcessingGuarantee
from dag.errors import DagValidationError, JobFailedError
from dag.runtime.failures import _ID_RE, ID_PREFIX, RECORD_WAIT, _text
from dag.runtime.pipelined.snapshots import SNAPSHOT_TOPIC, SnapshotSpec
from dag.runtime.sink_ledger import SinkLedger
from dag.runtime.snapshot_coordinator import RestartPolicy, SnapshotCoordinator
from dag.runtime.snapshot_routing import RestoreRouter, restore_router
from dag.runtime.snapshot_store import SnapshotStore, resolve_snapshot_dir
from edges.partitioner import Partitioner
from processors.driver_protocol import SINK_SEAL, SINK_STAGE

__all__ = ["SnapshotRun", "SNAPSHOT_TIMEOUT", "RESTART_DELAY", "TICK_SECONDS"]

SNAPSHOT_TIMEOUT = 120.0
"""Seconds a snapshot may take before it is abandoned (logged; the job goes on)."""
RESTART_DELAY = 0.2
"""Seconds between a failed execution and the next attempt."""
TICK_SECONDS = 0.02
"""How often the ticker looks whether a snapshot is due or complete."""
STOP_WAIT = 30.0
"""Seconds ``suspend()`` waits for the stage to stop after its snapshot completed."""
_CANCELLED = object()
_log = logging.getLogger("jetspark.snapshots")


class SnapshotRun:
    """Snapshots and the restart loop of one pipelined job (see the module docstring)."""

    def __init__(self, run: Any, engine: Any, job: Any, layout: Any):
        config = job.config
        self.run, self.engine, self.job, self.layout = run, engine, job, layout
        self.aligned = config.processing_guarantee is ProcessingGuarantee.EXACTLY_ONCE
        self.root, self.temporary = resolve_snapshot_dir(engine.config.snapshot_dir, local=engine._local)  # noqa: SLF001
        self.store = SnapshotStore(self.root, f"{job.name}-{job.id}", secret=run.channel.ref.secret)
        self.ledger = SinkLedger(self._publish) if self.aligned else None
        processors = {name: v.total_parallelism for name, v in layout.vertices.items()}
        self.coordinator = SnapshotCoordinator(self.store, processors, interval_ms=config.snapshot_interval_ms,
                                               ledger=self.ledger)
        self.policy = RestartPolicy(config.max_restarts)
        self.finish_log: list[list] = []
        self._records_before = 0
        self._suspending = threading.Event()
        self._resume = threading.Event()
        self._lock = threading.Lock()

    @property
    def restarts(self) -> int:
        return self.policy.total

    # ------------------------------------------------------------------ channel
    def register(self, channel: Any) -> None:
        channel.register(SNAPSHOT_TOPIC, self._report)
        if self.ledger is not None:
            channel.register(SINK_STAGE, self._stage)
            channel.register(SINK_SEAL, self._seal)

    def instructions(self) -> dict:
        """What the status reply tells the tasks: the snapshot in progress and the recent phase-2 calls."""
        with self._lock:
            return {"snapshot": self.coordinator.in_progress, "finish": self.finish_log[-32:]}

    def _report(self, body: dict) -> None:
        if self.run._stale(body):  # noqa: SLF001
            return
        report = self.coordinator.report_done if body["done"] else self.coordinator.report
        report(body["snapshot_id"], body["vertex"], body["g"])

    def _stage(self, body: dict) -> None:
        if self.run._stale(body):  # noqa: SLF001
            return
        self.ledger.stage((body["vertex"], body["g"]), (body["kind"], body["name"]), body["items"])  # type: ignore[union-attr]

    def _seal(self, body: dict) -> None:
        if self.run._stale(body):  # noqa: SLF001
            return
        # the processor passed the barrier of the latest started snapshot (the one not yet reported by it)
        self.ledger.seal((body["vertex"], body["g"]), self.coordinator.next_id - 1)  # type: ignore[union-attr]

    def _publish(self, kind: str, name: str, items: list) -> None:
        collection = self.engine._collections.get(kind, name)  # noqa: SLF001
        if kind == "map":
            collection.update(items)
        else:
            collection.extend(items)

    # ------------------------------------------------------------------ running
    def run_with_restarts(self) -> None:
        """Run executions until one completes, the job is cancelled, or a failure must not restart it."""
        run = self.run
        self.store.delete_all()
        restore_id: int | None = None
        while True:
            spec = run._worker_spec()  # noqa: SLF001
            spec.snapshots = self._spec(restore_id)
            run._wait_for_slots()  # noqa: SLF001
            ticker = threading.Thread(target=self._tick, name=f"jetspark-snapshots-{self.job.id}", daemon=True)
            self._records_before = run.channel.record_count()
            self.coordinator.execution_started(time.monotonic())
            ticker.start()
            try:
                run._run_stage(spec)  # noqa: SLF001
            except BaseException as exc:  # noqa: BLE001
                ticker.join(5)
                if self._suspending.is_set() and not self.job._cancelled:  # noqa: SLF001 - stopped, maybe forcibly
                    restore_id = self._suspended()
                    if restore_id is _CANCELLED:
                        return
                    continue
                failure = self._failure_of(exc)
                if self.job._cancelled or not self.policy.should_restart(failure, True):  # noqa: SLF001
                    if failure is not None:  # name this execution's failure (the job reports the one named)
                        raise JobFailedError(f"Job '{self.job.name}' failed [{ID_PREFIX}{failure['id']}]") from exc
                    raise
                restore_id = self._prepare_restart(failure or {"exc_type": type(exc).__name__,
                                                               "exc_message": str(exc)[:300]})
                continue
            ticker.join(5)
            if self._suspending.is_set() and not self.job._cancelled:  # noqa: SLF001
                restore_id = self._suspended()
                if restore_id is not _CANCELLED:
                    continue
            if self.ledger is not None and not self.job._cancelled:  # noqa: SLF001
                self.ledger.publish_all()
            return

    # ------------------------------------------------------------------ suspend, resume, restart
    def suspend(self, timeout: float = SNAPSHOT_TIMEOUT) -> None:
        """Take a snapshot now, then stop the execution; the job becomes SUSPENDED until :meth:`resume`."""
        from dag.runtime.job import JobStatus

        if self.job.status is not JobStatus.RUNNING or self._suspending.is_set():
            raise DagValidationError(f"Job '{self.job.name}' is {self.job.status.value}: only a RUNNING job can be "
                                     "suspended")
        target = self.coordinator.request_now()
        deadline = time.monotonic() + timeout
        while (self.coordinator.last_complete or -1) < target:
            if time.monotonic() > deadline or self.run.stage_done.is_set():
                raise JobFailedError(f"Job '{self.job.name}': no snapshot completed within {timeout:.0f} s, so it "
                                     "was not suspended", job_name=self.job.name)
            time.sleep(TICK_SECONDS)
        self._resume.clear()
        self._suspending.set()
        self.run.stop_requested.set()
        while self.job.status is not JobStatus.SUSPENDED and not self.job.status.is_terminal:
            if time.monotonic() > deadline + STOP_WAIT:
                break
            time.sleep(TICK_SECONDS)

    def resume(self) -> None:
        """Restart a SUSPENDED job from the snapshot taken when it was suspended."""
        from dag.runtime.job import JobStatus

        if self.job.status is not JobStatus.SUSPENDED:
            raise DagValidationError(f"Job '{self.job.name}' is {self.job.status.value}: only a SUSPENDED job can be "
                                     "resumed")
        self._resume.set()
        deadline = time.monotonic() + STOP_WAIT
        while self.job.status is JobStatus.SUSPENDED and time.monotonic() < deadline:
            time.sleep(TICK_SECONDS)

    def _suspended(self) -> Any:
        """The stage stopped for a suspension: wait for resume (or cancel); the snapshot to restart from."""
        from dag.runtime.job import JobStatus

        run, job = self.run, self.job
        restore_id = self.coordinator.prepare_restart()
        job._status = JobStatus.SUSPENDED  # noqa: SLF001
        _log.info("Job '%s' suspended at snapshot %s", job.name, restore_id)
        while not self._resume.wait(TICK_SECONDS * 5):
            if job._cancelled:  # noqa: SLF001
                return _CANCELLED
        self._suspending.clear()
        run.attempt += 1
        run.stop_requested.clear()
        run.stage_done.clear()
        job._status = JobStatus.RUNNING  # noqa: SLF001
        _log.info("Job '%s' resumes from snapshot %s", job.name, restore_id)
        return restore_id

    def _failure_of(self, exc: BaseException) -> dict | None:
        """The failure record of the execution that just failed: the one named in Spark's error, else the first
        that arrived since the execution started; None when no task reported one (an infrastructure failure)."""
        channel = self.run.channel
        ids = _ID_RE.findall(_text(exc))
        for failure_id in reversed(ids):
            record = channel.failure_record(failure_id, wait=RECORD_WAIT if failure_id == ids[-1] else 0.0)
            if record is not None:
                return record
        recent = channel.records_since(self._records_before)
        return recent[0] if recent else None

    def _prepare_restart(self, cause: dict) -> int | None:
        from dag.runtime.job import await_tasks_gone

        run, job = self.run, self.job
        sc = run.sc
        sc.cancelJobGroup(job.group_id)  # whatever is left of the failed stage
        await_tasks_gone(sc, job.group_id)
        restore_id = self.coordinator.prepare_restart()
        _log.warning("Job '%s' restarts from %s after %s: %s (restart %d; at most %d in a row)", self.job.name,
                     "scratch" if restore_id is None else f"snapshot {restore_id}", cause.get("exc_type"),
                     str(cause.get("exc_message"))[:300], self.policy.total, self.policy.max_restarts)
        run.attempt += 1  # from now on, messages of the failed execution's tasks are ignored
        job._user_failed = False  # noqa: SLF001 - the next failure stops the next execution again
        run.stop_requested.clear()
        run.stage_done.clear()
        time.sleep(RESTART_DELAY)
        return restore_id

    def _tick(self) -> None:
        coordinator, run = self.coordinator, self.run
        while not run.stage_done.wait(TICK_SECONDS):
            now = time.monotonic()
            if run.stop_requested.is_set():
                continue
            coordinator.start(now)
            try:
                done = coordinator.complete_if_ready(now)
            except Exception as exc:  # noqa: BLE001 - a snapshot that cannot complete fails, the job goes on
                self._finish(coordinator.fail(f"{type(exc).__name__}: {exc}", now), False)
                continue
            if done is not None:
                self.policy.snapshot_completed()
                self._finish(done, True)
            elif coordinator.in_progress is not None and now - (coordinator.started_at or now) > SNAPSHOT_TIMEOUT:
                missing = ", ".join(coordinator.missing()[:10])
                self._finish(coordinator.fail(f"timed out waiting for {missing}", now), False)

    def _finish(self, snapshot_id: int | None, success: bool) -> None:
        if snapshot_id is not None:
            with self._lock:
                self.finish_log.append([snapshot_id, success])

    def _spec(self, restore_id: int | None) -> SnapshotSpec:
        spec = SnapshotSpec(aligned=self.aligned, directory=self.root, job_key=self.store.job_dir.name,
                            restore_id=restore_id)
        if restore_id is None:
            return spec
        dag, count = self.run.dag, self.engine.config.partition_count
        names = {v.name for v in dag.vertices}
        saved = self.store.processors(restore_id)
        for name, vertex in self.layout.vertices.items():
            spec.routers[name] = (restore_router(dag, name, count) if name in names
                                  else RestoreRouter(Partitioner.default(), count))
        for name, indices in self.store.done_processors(restore_id).items():
            if saved.get(name) == self.layout.vertices[name].total_parallelism:
                spec.done[name] = indices
        return spec

    def close(self, error: BaseException | None) -> None:
        """Delete the job's snapshots (and a temporary snapshot directory); drop staged sink items on failure."""
        if self.ledger is not None and error is not None:
            self.ledger.discard()
        self.store.delete_all()
        if self.temporary:
            shutil.rmtree(self.root, ignore_errors=True)
