"""Snapshots and restarts of a pipelined job on the driver (Jet's ``MasterContext``, ``jet-streaming.md`` 8).

:class:`SnapshotRun` is created by the :class:`~dag.runtime.pipelined.coordinator.PipelinedRun` of a job whose
``processing_guarantee`` is ``EXACTLY_ONCE`` or ``AT_LEAST_ONCE`` and runs it:

- **store**: ``EngineConfig.snapshot_dir`` (a temporary directory in local mode, deleted with the job; required
  on a cluster), one :class:`~dag.runtime.pipelined.snapshot_store.SnapshotStore` per job, cleared when the job is
  submitted so that nothing of an older job is ever restored;
- **snapshots**: a ticker thread per execution starts snapshot ``n`` every ``snapshot_interval_ms`` after the previous
  one completed (:class:`~dag.runtime.pipelined.snapshot_coordinator.SnapshotCoordinator`); the tasks learn it from
  their status poll (reply ``snapshot``), the sources save and emit barrier ``n``, every processor saves once the
  barrier is aligned and reports (``SNAPSHOT_TOPIC``); when all reported the snapshot is marked complete, older ones are
  deleted, the driver-side sinks publish what it covers, and phase 2 goes out (reply ``finish``:
  ``[[id, success], ...]``); a snapshot that does not complete within :data:`SNAPSHOT_TIMEOUT` seconds fails;
- **restarts**: when an execution fails with a ``RestartableError`` or an infrastructure failure (a lost task, Python
  worker or executor, a broken link) the job restarts from the last complete snapshot: incomplete snapshots are deleted,
  the staged sink items after it dropped, and a new barrier stage starts whose tasks restore their processors' routed
  entries; :class:`~dag.runtime.pipelined.snapshot_coordinator.RestartPolicy` stops after ``JobConfig.max_restarts``
  restarts in a row, failing the job with the last error. Restarts are logged (logger ``jetspark.snapshots``), counted
  (``job.metrics().restarts``) and listed with their causes (``job.metrics().restart_log``). A cancelled job never
  restarts;
- **a fast restart**: a task whose processor raised a restartable error reports it and then *returns* (the
  driver sets the stop flag instead of cancelling the Spark job group, so the other tasks stop at their next
  status poll and return too): the stage ends normally and Spark keeps the tasks' Python workers, which run
  the next execution at once (a failed or killed task's worker exits, and a fresh one imports jetspark again:
  seconds on a busy machine). A lost worker or executor still fails the stage through Spark. The tasks then
  exchange their addresses through the driver (``worker.py``). After ``JobConfig.restart_delay_ms`` the new
  stage starts. :class:`RestartTimeline` logs, at debug level, when each of these steps happened;
- **suspend/resume/restart** (``job.suspend()``, ``job.resume()``, ``job.restart()``; ``suspension.py``): a
  snapshot is taken at once, the execution stops after it completed (status SUSPENDED; what ran after the
  snapshot is rolled back like after a failure), and ``resume`` starts a new execution from that snapshot (if it
  fails or times out, the job suspends anyway and resumes from the last complete one, as in Jet);
  ``restart`` is both;
- **driver-side sinks** of an EXACTLY_ONCE job stage their items in a
  :class:`~dag.runtime.pipelined.sink_ledger.SinkLedger` (``STAGE_TOPIC``), sealed per snapshot (``SEAL_TOPIC``); a
  completed job publishes what remains.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from dag.config import ProcessingGuarantee
from jetspark_base.errors import JobFailedError
from dag.runtime.common.metrics import RestartRecord
from dag.runtime.pipelined.snapshots import SNAPSHOT_TOPIC, SnapshotSpec
from dag.runtime.pipelined.suspension import CANCELLED, Suspension
from dag.runtime.common.job_group import await_tasks_gone
from dag.runtime.pipelined.failure_choice import choose_failure, naming
from dag.runtime.pipelined.sink_ledger import SinkLedger
from dag.runtime.pipelined.snapshot_coordinator import RestartPolicy, SnapshotCoordinator, completed_on_restore
from dag.runtime.pipelined.snapshot_routing import RestoreRouter, restore_router
from dag.runtime.pipelined.snapshot_store import SnapshotStore, resolve_snapshot_dir
from edges.partitioner import Partitioner
from processors.io.driver_protocol import SINK_SEAL, SINK_STAGE

if TYPE_CHECKING:  # pragma: no cover
    from dag.runtime.runtime import EngineServices, RunningJob

__all__ = ["SnapshotRun", "SNAPSHOT_TIMEOUT", "TICK_SECONDS"]

SNAPSHOT_TIMEOUT = 120.0
"""Seconds a snapshot may take before it is abandoned (logged; the job goes on)."""
TICK_SECONDS = 0.02
"""How often the ticker looks whether a snapshot is due or complete."""
_log = logging.getLogger("jetspark.snapshots")


class RestartTimeline:
    """When each step of a restart happened (seconds since the failure), logged at debug level (logger
    ``jetspark.snapshots``, record attribute ``timeline``) once every task of the new execution connected."""

    def __init__(self, failed_at: float, tasks: int, attempt: int):
        self.origin, self.tasks, self.attempt = failed_at, tasks, attempt  # attempt: the new execution's number
        self.steps: dict[str, float] = {}
        self.task_steps: dict[int, dict] = {}
        self.logged = False

    def mark(self, step: str) -> None:
        self.steps[step] = time.time() - self.origin

    def task_started(self, task: int, startup: dict) -> bool:
        """A task's start-up times; True once every task connected (the timeline is complete)."""
        self.task_steps[task] = startup
        return len(self.task_steps) == self.tasks and all("connected" in s for s in self.task_steps.values())

    def as_dict(self) -> dict[str, float]:
        steps = dict(self.steps)
        for name in ("entered", "built", "connected"):
            times = [s[name] for s in self.task_steps.values() if s.get(name)]
            if times:
                steps[f"tasks {name}"] = max(times) - self.origin
        steps["fresh python workers"] = sum(bool(s.get("fresh_worker")) for s in self.task_steps.values())
        return steps

    def record(self) -> dict[str, float]:
        """The steps and the failure's time (``origin``, seconds since the epoch): the log record's ``timeline``."""
        return {"origin": self.origin, **self.as_dict()}

    def log(self, job_name: str, restart: int) -> None:
        self.logged = True
        steps = self.as_dict()
        _log.debug("Job '%s' restart %d timeline (s after the failure): %s", job_name, restart,
                   ", ".join(f"{k} {v:.2f}" for k, v in steps.items()), extra={"timeline": self.record()})


class SnapshotRun(Suspension):
    """Snapshots and the restart loop of one pipelined job (see the module docstring)."""

    def __init__(self, run: Any, engine: EngineServices, job: RunningJob, layout: Any):
        super().__init__(run, job)
        config = job.config
        self.engine, self.layout = engine, layout
        self.aligned = config.processing_guarantee is ProcessingGuarantee.EXACTLY_ONCE
        self.root, self.temporary = resolve_snapshot_dir(engine.config.snapshot_dir, local=engine.is_local)
        self.job_key = f"{job.name}-{job.id}"  # the store quotes it into a directory name (tasks too, from this key)
        self.store = SnapshotStore(self.root, self.job_key, secret=run.channel.ref.secret)
        self.ledger = SinkLedger(self._publish) if self.aligned else None
        processors = {name: v.total_parallelism for name, v in layout.vertices.items()}
        self.coordinator = SnapshotCoordinator(self.store, processors, interval_ms=config.snapshot_interval_ms,
                                               ledger=self.ledger)
        self.policy = RestartPolicy(config.max_restarts)
        self.finish_log: list[list] = []
        self._records_before = 0
        self._lock = threading.Lock()
        self.timeline: RestartTimeline | None = None  # of the latest restart
        self.restart_log: list[RestartRecord] = []  # every restart with its cause (the web page shows the last)

    @property
    def restarts(self) -> int:
        return self.policy.total

    # ------------------------------------------------------------------ channel
    def register(self, channel: Any) -> None:
        channel.register(SNAPSHOT_TOPIC, self._report)
        if self.ledger is not None:
            channel.register(SINK_STAGE, self._stage)
            channel.register(SINK_SEAL, self._seal)

    def task_started(self, body: dict) -> None:
        """A task reported its start-up times (``body["startup"]``; see :class:`RestartTimeline`)."""
        timeline = self.timeline
        if timeline is None or timeline.logged or body.get("attempt") != timeline.attempt:
            return
        if timeline.task_started(body["task"], body["startup"]):
            timeline.log(self.job.name, self.policy.total)

    def _mark(self, step: str) -> None:
        if self.timeline is not None and not self.timeline.logged:
            self.timeline.mark(step)

    def instructions(self) -> dict:
        """What the status reply tells the tasks: the snapshot in progress and the recent phase-2 calls."""
        with self._lock:
            return {"snapshot": self.coordinator.in_progress, "finish": self.finish_log[-32:]}

    def _report(self, body: dict) -> None:
        if self.run.is_stale(body):
            return
        report = self.coordinator.report_done if body["done"] else self.coordinator.report
        report(body["snapshot_id"], body["vertex"], body["g"])

    def _stage(self, body: dict) -> None:
        if self.run.is_stale(body):
            return
        self.ledger.stage((body["vertex"], body["g"]), (body["kind"], body["name"]), body["items"])  # type: ignore[union-attr]

    def _seal(self, body: dict) -> None:
        if self.run.is_stale(body):
            return
        # the processor passed the barrier of the latest started snapshot (the one not yet reported by it)
        self.ledger.seal((body["vertex"], body["g"]), self.coordinator.next_id - 1)  # type: ignore[union-attr]

    def _publish(self, kind: str, name: str, items: list) -> None:
        if kind == "apply":  # a driver-applied sink's batch (name: its vertex), applied with the sink's functions
            self._publish_applied(name, items)
            return
        collection = self.engine.driver_collections.get(kind, name)
        if kind == "map":
            collection.update(items)
        else:
            collection.extend(items)

    def _publish_applied(self, vertex: str, items: list) -> None:
        """Apply a driver-applied sink's staged batch; a user function's failure is stored as the job's failure
        (not restartable: a replay would fail again) and raised."""
        from dag.runtime.common.driver_topics import apply_on_driver

        try:
            apply_on_driver(self.job.dag, self.engine.driver_collections, vertex, items)
        except JobFailedError as exc:
            self.run.channel.store_failure({
                "id": uuid.uuid4().hex, "vertex": vertex, "processor_index": 0, "exc_type": exc.exc_type or "",
                "exc_message": str(exc), "user_traceback": ""})
            raise

    # ------------------------------------------------------------------ running
    def run_with_restarts(self) -> None:
        """Run executions until one completes, the job is cancelled, or a failure must not restart it."""
        run = self.run
        self.store.delete_all()
        restore_id: int | None = None
        while True:
            spec = run.worker_spec()
            spec.snapshots = self._spec(restore_id)
            self._mark("spec built")
            run.await_slots()
            self._mark("slots free")
            ticker = threading.Thread(target=self._tick, name=f"jetspark-snapshots-{self.job.id}", daemon=True)
            self._records_before = run.channel.record_count()
            self.coordinator.execution_started(time.monotonic())
            ticker.start()
            self._mark("stage submitted")
            error: BaseException | None = None
            results: list[dict] = []
            try:
                results = run.run_stage(spec)
            except BaseException as exc:  # noqa: BLE001
                error = exc
            ended = time.time()
            ticker.join(5)
            if self.stopped_for_suspension():  # stopped (maybe forcibly) for suspend()
                restore_id = self._suspended()
                if restore_id is CANCELLED:
                    return
                continue
            if error is None and not any(r.get("failure") for r in results):
                if self.ledger is not None and not self.job.cancelled:
                    self.ledger.publish_all()
                return
            restore_id = self._after_failure(error, ended)

    def _after_failure(self, error: BaseException | None, ended: float) -> int | None:
        """The execution failed (``error``: Spark's, None when the tasks ended after a restartable failure they
        reported): raise the job's failure, or prepare the restart and return the snapshot to restore."""
        failure = choose_failure(self.run.channel, error, self._records_before, self.run.tasks_running)
        if self.job.cancelled or not self.policy.should_restart(failure, True):
            if failure is not None:  # name this execution's failure (the job reports the one named)
                raise naming(self.job.name, failure) from error
            raise error or JobFailedError(f"Job '{self.job.name}' failed", job_name=self.job.name)
        self.timeline = RestartTimeline((failure or {}).get("time") or ended, self.layout.tasks, self.run.attempt + 1)
        self.timeline.steps["stage ended"] = ended - self.timeline.origin
        self._mark("failure known")
        return self._prepare_restart(failure or {"exc_type": type(error).__name__, "exc_message": str(error)[:300]},
                                     stage_failed=error is not None)

    # ------------------------------------------------------------------ suspend, resume, restart
    def _before_stop(self) -> None:
        """Take the terminal snapshot and wait until it completed or failed. As in Jet, a terminal snapshot that
        fails (or does not complete within :data:`SNAPSHOT_TIMEOUT`) does not stop the suspension: the job then
        resumes from the last snapshot that did complete (from scratch if none did)."""
        target = self.coordinator.request_now()
        deadline = time.monotonic() + SNAPSHOT_TIMEOUT
        while (self.coordinator.last_complete or -1) < target:
            if self.run.stage_done.is_set():
                raise JobFailedError(f"Job '{self.job.name}' ended before its terminal snapshot completed, so it "
                                     "was not suspended", job_name=self.job.name)
            if self._failed(target) or time.monotonic() > deadline:
                last = self.coordinator.last_complete
                _log.warning("Job '%s': terminal snapshot %d %s; suspending anyway, the job will resume %s",
                             self.job.name, target, "failed" if self._failed(target) else
                             f"did not complete within {SNAPSHOT_TIMEOUT:.0f} s",
                             "from scratch" if last is None else f"from snapshot {last}")
                return
            time.sleep(TICK_SECONDS)

    def _failed(self, snapshot_id: int) -> bool:
        with self._lock:
            return [snapshot_id, False] in self.finish_log

    def _restore_point(self) -> int | None:
        return self.coordinator.prepare_restart()

    def _prepare_restart(self, cause: dict, stage_failed: bool) -> int | None:
        run, job = self.run, self.job
        if stage_failed:  # Spark failed the stage: cancel whatever is left of it (else every task had returned)
            run.sc.cancelJobGroup(job.group_id)
            self._mark("group cancelled")
            await_tasks_gone(run.sc, job.group_id)
            self._mark("old tasks gone")
        restore_id = self.coordinator.prepare_restart()
        self._mark("snapshot prepared")
        self.restart_log.append(RestartRecord(time.time(), str(cause.get("exc_type")),
                                              str(cause.get("exc_message"))[:300], restore_id))
        del self.restart_log[:-100]
        _log.warning("Job '%s' restarts from %s after %s: %s (restart %d; at most %d in a row)", self.job.name,
                     "scratch" if restore_id is None else f"snapshot {restore_id}", cause.get("exc_type"),
                     str(cause.get("exc_message"))[:300], self.policy.total, self.policy.max_restarts)
        run.attempt += 1  # from now on, messages of the failed execution's tasks are ignored
        run.failure_seen = False  # the next failure stops the next execution again
        run.stop_requested.clear()
        run.stage_done.clear()
        time.sleep(job.config.restart_delay_ms / 1000)
        self._mark("restart delay")
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
                del self.finish_log[:-64]  # the tasks see the last 32 (status reply); a long job keeps no more

    def _spec(self, restore_id: int | None) -> SnapshotSpec:
        spec = SnapshotSpec(aligned=self.aligned, directory=self.root, job_key=self.job_key,
                            restore_id=restore_id)
        if restore_id is None:
            return spec
        dag, count = self.run.dag, self.engine.config.partition_count
        names = {v.name for v in dag.vertices}
        saved = self.store.processors(restore_id)
        for name, vertex in self.layout.vertices.items():
            spec.routers[name] = (restore_router(dag, name, count) if name in names
                                  else RestoreRouter(Partitioner.default(), count))
        current = {name: vertex.total_parallelism for name, vertex in self.layout.vertices.items()}
        spec.done = completed_on_restore(saved, self.store.done_processors(restore_id), current)
        return spec

    def close(self, error: BaseException | None) -> None:
        """Delete the job's snapshots (and a temporary snapshot directory); drop staged sink items on failure."""
        if self.ledger is not None and error is not None:
            self.ledger.discard()
        self.store.delete_all()
        if self.temporary:
            shutil.rmtree(self.root, ignore_errors=True)
