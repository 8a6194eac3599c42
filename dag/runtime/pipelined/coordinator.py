"""The job coordinator of a pipelined job (driver side): Jet's master, on Spark.

:class:`PipelinedRun` plans the job (the staged planner without pre-aggregation or accumulate fusion, then
:func:`~dag.runtime.pipelined.layout.make_layout`), creates the processor suppliers on the driver (as the
staged runtime does; driver-side collections through their ``live_supplier()``; ``Context.unbounded`` True
when the DAG has a stream source), waits for free slots and runs
the one barrier stage ``sc.parallelize(range(T), T).barrier().mapPartitions`` whose tasks run
:class:`~dag.runtime.pipelined.worker.Worker`. The job's :class:`~dag.runtime.common.jobchannel.JobChannel` (per-job
secret; failures as JSON records, the driver-side collection topics) also serves:

- ``jetspark.status`` (request, every task every ``POLL_SECONDS``): live metrics in; reply ``{"stop": bool}``,
  True once the job is cancelled or failed, so every task stops within a poll;
- ``jetspark.done``: a task's final metrics;
- ``jetspark.address`` (``worker.ADDRESS_TOPIC``): the address exchange of the tasks' links; a request is held
  open (up to ``EXCHANGE_WAIT``) until every task of the execution told its address, then answered with all.

A task that fails reports the failure record on the channel (``failures.encode_failure``) and raises; the
job's failure hook (:meth:`PipelinedRun.task_failed`) sets the stop flag and cancels the Spark job group (not
when a snapshotting job restarts: its tasks then stop by themselves), and ``Job`` turns the record into the
``JobFailedError`` (never from error text). A task whose Python worker dies reports nothing: its peers see
their links to it end and report that, naming its processors (``runner.py``); when no record arrives within
:data:`PEER_REPORT_WAIT`, the error names the processors of the task Spark says failed.

With ``processing_guarantee`` other than NONE, :class:`~dag.runtime.pipelined.restarts.SnapshotRun` takes over
``run()``: snapshots every ``snapshot_interval_ms`` and the restart loop (``restarts.py``); without, the loop of
:class:`~dag.runtime.pipelined.suspension.Suspension` runs it (a new execution from scratch after
``job.suspend()``/``resume()``/``restart()``). Every message of a task carries its execution number
(``attempt``), and those of an earlier execution are ignored.

A watchdog thread escalates: :data:`STOP_GRACE` seconds after a stop was requested it cancels the Spark job group, so a
task stuck in user code cannot hold the job. It also fails the execution when a task that polled (or sent its link
address) stays silent for :data:`TASK_SILENCE_SECONDS` (a frozen worker: Spark sees nothing wrong), with a record naming
the task's processors, marked restartable. ``run()`` returns only when the stage ended, that is when every task released
its slot.

Hooks for restart (issue 12): ``run()`` is one attempt; a restarting coordinator calls ``run_stage`` again with
the same channel after a failure it deems restartable. ``runtime.py`` is the job's side of this coordinator.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from jetspark_base.errors import JobFailedError
from dag.runtime.common.failures import failed_task_index, summarize_spark_error
from dag.planner.physical_plan import VertexKind
from dag.runtime.common.job_group import active_tasks, await_tasks_gone, cancel_in_background
from dag.runtime.common.meta_suppliers import MetaSuppliers
from dag.runtime.pipelined.layout import Layout, make_layout
from dag.config import ProcessingGuarantee
from dag.runtime.pipelined.failure_choice import CAUSE_WAIT
from dag.runtime.pipelined.restarts import SnapshotRun
from dag.runtime.pipelined.suspension import Suspension
from dag.runtime.pipelined.worker import ADDRESS_TOPIC, EXCHANGE_WAIT, Worker, WorkerSpec
from dag.runtime.pipelined.snapshot_coordinator import is_restartable
from processors.io.text_streams import is_stream_source

if TYPE_CHECKING:  # pragma: no cover
    from dag.runtime.runtime import EngineServices, RunningJob

__all__ = ["PipelinedRun", "StageFunction", "SLOT_WAIT_SECONDS", "STOP_GRACE", "PEER_REPORT_WAIT",
           "TASK_SILENCE_SECONDS", "free_slots", "task_count", "wait_for_slots"]

SLOT_WAIT_SECONDS = 30.0
"""How long ``new_job`` waits for enough free Spark slots before refusing a pipelined job."""
STOP_GRACE = 5.0
"""Seconds the tasks have to stop by themselves before the coordinator cancels the Spark job group."""
TASK_SILENCE_SECONDS = 10.0
"""A running task that polls every ``worker.POLL_SECONDS`` and has not for this long is lost."""
PEER_REPORT_WAIT = 2.0
"""Seconds a stage failure without a failure record waits for one (a peer of a lost task reports the lost
link) before the failure is reported against the lost task's processors from Spark's error."""


def task_count(total_slots: int, members: int) -> int:
    """Tasks of a job: as many slots as the cluster has, a multiple of ``members`` (at least one per member)."""
    return max(1, total_slots // members) * members


def free_slots(sc: Any, own_group: str | None = None) -> int:
    """Spark task slots not used by running tasks right now. With ``own_group`` (a job's own group, before it
    starts its stage again), that group's tasks count as free: its previous stage has ended, but Spark's status
    (fed by its listener bus, which can lag under load) may still show them running, and a task still being
    killed only delays the new stage, which Spark starts as soon as the slot is free."""
    tracker = sc.statusTracker()
    busy = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            busy += info.numActiveTasks
    if own_group is not None:
        busy -= active_tasks(sc, own_group)
    return sc.defaultParallelism - max(busy, 0)


def wait_for_slots(sc: Any, needed: int, job_name: str, stop: threading.Event | None = None,
                   own_group: str | None = None) -> None:
    """Wait up to :data:`SLOT_WAIT_SECONDS` until ``needed`` Spark task slots are free, else refuse the job.

    ``engine.new_job`` calls it before a pipelined job starts (the contract's refusal), the coordinator again
    before every (re)start of the stage, with the job's own group (:func:`free_slots`); ``stop`` ends the wait
    early (a cancel).
    """
    deadline = time.monotonic() + SLOT_WAIT_SECONDS
    while True:
        free = free_slots(sc, own_group)
        if free >= needed:
            return
        if (stop is not None and stop.is_set()) or time.monotonic() >= deadline:
            raise JobFailedError(
                f"Job '{job_name}' needs {needed} free Spark task slot(s) for its pipelined stage (one per task, all "
                f"at once), but only {free} of {sc.defaultParallelism} are free after waiting "
                f"{SLOT_WAIT_SECONDS:.0f} s; wait for other jobs to finish or give Spark more cores",
                job_name=job_name)
        time.sleep(0.1)


class StageFunction:
    """The barrier stage's partition function: run the worker of this task (picklable)."""

    def __init__(self, spec: WorkerSpec):
        self.spec = spec

    def __call__(self, iterator: Any) -> Any:
        from pyspark import BarrierTaskContext

        for _ in iterator:
            pass
        return [Worker(self.spec)(BarrierTaskContext.get().partitionId())]


class PipelinedRun:
    """One execution of a DAG in PIPELINED mode (see the module docstring)."""

    def __init__(self, engine: EngineServices, dag: Any, job: RunningJob, plan: Any, channel: Any,
                 stop: threading.Event):
        self.engine, self.dag, self.job, self.plan = engine, dag, job, plan
        self.layout: Layout = plan.pipelined
        self.sc = engine.spark.sparkContext
        self.channel = channel
        self.attempt = 0  # execution number, raised by each restart
        self.task_metrics: dict[int, dict] = {}
        self.last_seen: dict[int, float] = {}  # task -> when its last status poll arrived (this execution)
        self.tasks_done: set[int] = set()
        self.stop_requested = stop
        self.failure_seen = False  # a task reported a failure in this execution (cleared by a restart)
        self.stage_done = threading.Event()
        self._addresses: dict[int, dict[int, list]] = {}  # execution -> task -> its link address
        self._addressed = threading.Condition()
        self.snapshotting: SnapshotRun | None = None
        if job.config.processing_guarantee is not ProcessingGuarantee.NONE:
            self.snapshotting = SnapshotRun(self, engine, job, self.layout)
        self.suspension: Suspension = self.snapshotting or Suspension(self, job)  # job.suspend(), resume(), restart()
        self.unbounded = any(is_stream_source(v.meta_supplier) for v in dag.vertices)
        self.metas = MetaSuppliers(job_id=job.id, job_name=job.name, members=plan.members,
                                   guarantee=job.config.processing_guarantee, unbounded=self.unbounded)

    @staticmethod
    def layout_for(engine: EngineServices, dag: Any) -> tuple[Any, Layout]:
        """The plan and layout ``dag`` runs with on ``engine`` (also for ``explain``)."""
        from dag.planner import plan_dag

        config = engine.config.model_copy(update={"pre_aggregate": False, "fuse_accumulate": False,
                                                  "co_partition": False, "deal_driver_sources": False})
        plan = plan_dag(dag, config, engine.members, engine.default_local_parallelism)
        total = engine.spark.sparkContext.defaultParallelism
        layout = make_layout(plan, task_count(total, engine.members))
        plan.pipelined = layout
        return plan, layout

    # ------------------------------------------------------------------ channel handlers
    def is_stale(self, body: Any) -> bool:
        """A message of a task of an earlier execution (a restart began since): ignored."""
        return isinstance(body, dict) and body.get("attempt", 0) != self.attempt

    def _status(self, body: Any) -> dict:
        if self.is_stale(body):
            return {"stop": True}
        self.task_metrics[body["task"]] = body["metrics"]
        if body["task"] not in self.tasks_done:
            self.last_seen[body["task"]] = time.monotonic()
        reply = {"stop": self.stop_requested.is_set()}
        if self.snapshotting is not None:
            if "startup" in body:
                self.snapshotting.task_started(body)
            reply.update(self.snapshotting.instructions())
        return reply

    def _address(self, body: dict) -> dict:
        attempt, tasks = body.get("attempt", 0), self.layout.tasks
        with self._addressed:
            if attempt != self.attempt:
                return {"addresses": None, "stop": True}
            known = self._addresses.setdefault(attempt, {})
            known[body["task"]] = body["address"]
            self.last_seen[body["task"]] = time.monotonic()  # its status polls start after this exchange
            self._addressed.notify_all()
            self._addressed.wait_for(lambda: len(known) == tasks or self.stop_requested.is_set()
                                     or attempt != self.attempt, timeout=EXCHANGE_WAIT)
            if len(known) == tasks and attempt == self.attempt:
                for old in [a for a in self._addresses if a < attempt]:
                    del self._addresses[old]
                return {"addresses": [known[u] for u in range(tasks)]}
        return {"addresses": None, "stop": self.stop_requested.is_set() or attempt != self.attempt}

    def _done(self, body: Any) -> None:
        if self.is_stale(body):
            return
        self.task_metrics[body["task"]] = body["metrics"]
        if self.snapshotting is not None and "startup" in body:
            self.snapshotting.task_started(body)
        self.tasks_done.add(body["task"])
        self.last_seen.pop(body["task"], None)
        if self.snapshotting is not None and not self.stop_requested.is_set():
            self.snapshotting.coordinator.finished(self.layout.processors_of(body["task"]))

    def progress_lines(self) -> list[str]:
        """One progress line: items/s emitted (sinks: received) per vertex since the last call."""
        from dag.runtime.common.metrics import EMITTED, RECEIVED

        now, totals = time.monotonic(), {}
        for (vertex, _, metric, _), n in self.metrics().items():
            sink = not self.plan.vertices[vertex].outbound
            if metric == (RECEIVED if sink else EMITTED):
                totals[vertex] = totals.get(vertex, 0) + n
        last_time, last = getattr(self, "_last_progress", (now, {}))
        self._last_progress = (now, totals)
        elapsed = max(now - last_time, 1e-3)
        rates = ", ".join(f"{v} {(n - last.get(v, 0)) / elapsed:,.0f}/s" for v, n in totals.items())
        return [f"[{self.job.name}] {rates}"] if rates else []

    def metrics(self) -> dict:
        merged: dict = {}
        for counters in list(self.task_metrics.values()):
            merged.update(counters)
        return merged

    # ------------------------------------------------------------------ running
    def run(self) -> None:
        """Run the job to its end (or until stopped); a failed stage raises Spark's error."""
        self.channel.register("jetspark.status", self._status)
        self.channel.register("jetspark.done", self._done)
        self.channel.register(ADDRESS_TOPIC, self._address)
        if self.snapshotting is not None:
            self.snapshotting.register(self.channel)
            self.snapshotting.run_with_restarts()
        else:
            self.suspension.run_executions()

    def task_failed(self, record: dict) -> None:
        """The job channel's failure hook: a task reported a failure. Stop the execution (once per execution);
        unless the job restarts from a snapshot (its tasks then stop by themselves at their next status poll,
        keeping their Python workers), cancel the Spark job group."""
        if self.failure_seen:
            return
        self.failure_seen = True
        self.stop_requested.set()
        if not is_restartable(record):
            cancel_in_background(self.sc, self.job.group_id, self.job.id)
        elif self.snapshotting is None:
            # A broken link is mostly the echo of a peer's own failure whose record is still on its way: let
            # the tasks stop at their next status poll (the failing one reports first) and cancel only what is
            # left after CAUSE_WAIT, so the job names the cause, not the echo (failure_choice.py).
            threading.Thread(target=self._cancel_when_tasks_gone, name=f"jetspark-fail-{self.job.id}",
                             daemon=True).start()

    def tasks_running(self) -> bool:
        """Whether a task of the job still runs (and so may still report a failure)."""
        return active_tasks(self.sc, self.job.group_id) > 0

    def _cancel_when_tasks_gone(self) -> None:
        await_tasks_gone(self.sc, self.job.group_id, timeout=CAUSE_WAIT, warn=False)
        self.sc.cancelJobGroup(self.job.group_id)

    def lost_task(self, error: BaseException) -> JobFailedError | None:
        """The error naming the processors of the task whose loss failed the stage (a dead Python worker),
        when no task reported a failure record within :data:`PEER_REPORT_WAIT` seconds (a surviving peer
        normally reports the lost link first); None when a record explains the failure or the job was
        cancelled."""
        if self.job.cancelled or self.channel.failure_record(None, wait=PEER_REPORT_WAIT) is not None:
            return None
        t = failed_task_index(error)
        if t is None or not 0 <= t < self.layout.tasks or not self.layout.processors_of(t):
            return None
        python = getattr(getattr(self, "sc", None), "pythonExec", None)
        spark = summarize_spark_error(error, self.job.name, python)
        vertex, g, names = self._task_processors(t)
        message = f"task {t} (running {names}) was lost: {spark.exc_message}"
        return JobFailedError(f"Job '{self.job.name}' failed: {message}", job_name=self.job.name, vertex=vertex,
                              processor_index=g, exc_type=spark.exc_type, exc_message=message)

    def _task_processors(self, t: int) -> tuple[str, int, str]:
        """Task ``t``'s first processor (vertex, index) and the names of all it runs (``"map#1, sink#1"``)."""
        ran = self.layout.processors_of(t)
        return ran[0][0], ran[0][1], ", ".join(f"{v}#{g}" for v, g in ran)

    def _check_silent_tasks(self) -> None:
        """A task that polled (or sent its link address) before and has been silent for
        :data:`TASK_SILENCE_SECONDS` is lost (a frozen worker or an unreachable machine, which Spark may not
        notice for minutes): store a failure record
        naming its processors, as an infrastructure failure; the job's failure hook stops the stage."""
        now = time.monotonic()
        for t, seen in list(self.last_seen.items()):
            if now - seen > TASK_SILENCE_SECONDS and self.layout.processors_of(t):
                self.last_seen.clear()
                vertex, g, names = self._task_processors(t)
                message = (f"task {t} (running {names}) has not reported for {now - seen:.0f} s: its Python worker "
                           "is frozen or its machine unreachable")
                self.channel.store_failure({
                    "id": uuid.uuid4().hex, "vertex": vertex, "processor_index": g, "exc_type": "TaskLostError",
                    "exc_message": message, "user_traceback": "", "restartable": True})
                return

    def worker_spec(self) -> WorkerSpec:
        """What every task of the next execution runs (its processor suppliers created for it on the driver;
        every meta supplier initialised is closed with the job)."""
        from dag.runtime.common.logforward import driver_level

        suppliers = {}
        levels = {vp.name: [driver_level(f"jetspark.{vp.name}#{g}") for g in range(vp.total_parallelism)]
                  for vp in self.plan.vertices.values()}
        for vp in self.plan.vertices.values():
            meta = self.dag.get_vertex(vp.name).meta_supplier
            if vp.kind in (VertexKind.DRIVER_SOURCE, VertexKind.DRIVER_SINK):
                meta = meta.live_supplier()
            suppliers[vp.name] = self.metas.open(vp, meta)
        return WorkerSpec(
            job_name=self.job.name, job_id=self.job.id, channel=self.channel.ref,
            host="127.0.0.1" if self.engine.is_local else None,
            layout=self.layout, suppliers=suppliers, guarantee=self.job.config.processing_guarantee,
            max_watermark_retain_ms=_retain(self.job.config.max_watermark_retain_ms), attempt=self.attempt,
            log_levels=levels, unbounded=self.unbounded)

    def await_slots(self) -> None:
        """Wait (bounded) for the stage's free Spark slots before an execution; a cancel ends the wait."""
        wait_for_slots(self.sc, self.layout.tasks, self.job.name, self.stop_requested, self.job.group_id)

    def run_stage(self, spec: WorkerSpec) -> list[dict]:
        """Run the barrier stage to its end; every task's result (``{"task": t}``, plus ``"failure"``: the id of
        the restartable failure that ended it, see ``worker.py``)."""
        tasks = self.layout.tasks
        self.last_seen, self.tasks_done = {}, set()
        watchdog = threading.Thread(target=self._watchdog, name=f"jetspark-watchdog-{self.job.id}", daemon=True)
        watchdog.start()
        try:
            rdd = self.sc.parallelize(range(tasks), tasks).barrier().mapPartitions(StageFunction(spec))
            rdd.setName(f"{self.job.name}: pipelined stage ({tasks} tasks)")
            return rdd.collect()
        finally:
            self.stage_done.set()
            watchdog.join(STOP_GRACE + 5)

    def _watchdog(self) -> None:
        while not self.stage_done.is_set():
            if self.stop_requested.wait(0.1):
                if not self.stage_done.wait(STOP_GRACE):
                    self.sc.cancelJobGroup(self.job.group_id)
                return
            self._check_silent_tasks()

    def close(self, error: BaseException | None) -> None:
        """Close the meta suppliers (always; the job closes its channel); delete the job's snapshots."""
        try:
            if self.snapshotting is not None:
                self.snapshotting.close(error)
        finally:
            failure = self.metas.close(error)
            if failure is not None and error is None:
                raise failure


def _retain(value: int | None) -> int | None:
    return None if value is None or value < 0 else value
