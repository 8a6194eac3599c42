"""The processors of one task: their tasklets, queues, senders, and the scheduler that runs them.

:class:`ProcessorRunner` wraps one :class:`~processors.execution.tasklet.ProcessorTasklet`: before a step it feeds the
tasklet from its inbound edges (only the current priority group, only when the tasklet wants input); after a
step it routes the output with the edge's :class:`~dag.runtime.common.senders.Router` (watermarks go to every candidate,
in order with the items) and offers each entry to the target queue, a local :class:`Queue` or a TCP link. An
entry that does not fit stays pending, and the tasklet is not stepped until every pending entry left: that is
the back-pressure. The runner keeps no state of the processor's lifecycle: ``DONE`` and snapshot barriers come out
of the tasklet's output like items (the runner sends them to every candidate of the edge), a snapshot request or
phase-2 message from the driver is handed to the tasklet, and the saves it completed are stored and reported
before their barrier leaves.

:class:`TaskRunners` builds the runners of task ``t`` and runs them: the cooperative ones round-robin in the task's
thread, which also moves the bytes of the task's links (``links.py``: ``pump`` in every round) and, when a round
made no progress, sleeps on the task's :class:`~dag.runtime.pipelined.waker.Waker` and the links' sockets (backing
off up to :data:`MAX_IDLE_WAIT`); each non-cooperative one in a thread of its own, woken by its own inbound queues
(an ``Event`` of its own: sharing the scheduler's wake-up, an idle sink's thread ran a round, taking the GIL from the
scheduler, every time anything in the task moved) and otherwise backing off. Once every processor finished,
the task sends ``BYE`` on its links and keeps serving its finished processors' snapshot requests and phase-2 calls
until every peer said ``BYE`` (a task whose processors end early, e.g. a member's stand-ins for a
total-parallelism-one source, must not hold up the snapshots of the others). The first exception stops everything
(``stop``); its origin (vertex, processor index) is kept, and it is reported to the driver (``report_failure``)
*before* ``stop`` closes the links: a peer that sees a broken link reports that too, and the driver must have the
cause first. A broken link to another task fails the task naming the processors of that task (the first one as the
origin) as an infrastructure failure.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any, Callable

from dag.runtime.common.failures import mark_infrastructure, mark_origin
from dag.runtime.common.metrics import EMITTED, LAST_FORWARDED_WM, QUEUES_CAPACITY, QUEUES_SIZE, RECEIVED
from dag.runtime.pipelined.links import Links
from dag.runtime.pipelined.queues import QUEUE_ENTRIES, InboundEdge, Queue
from dag.runtime.pipelined.snapshots import StampedClient, TaskSnapshots
from dag.runtime.pipelined.waker import Waker
from dag.runtime.common.senders import Router
from processors.api.context import vertex_contexts
from processors.execution.staged import back_off_seconds
from processors.execution.lifecycle import open_processors
from processors.execution.tasklet import PIPELINED, PROGRESS, ProcessorState, ProcessorTasklet
from processors.api.watermark import Watermark

__all__ = ["ProcessorRunner", "TaskRunners", "MAX_IDLE_WAIT"]

_END = ProcessorState.END

MAX_IDLE_WAIT = 0.001
"""The longest wait (seconds) of an idle cooperative scheduler before it looks again (an arriving entry wakes
it at once)."""
_log = logging.getLogger("jetspark.pipelined")


class _Outbound:
    """One outbound edge of a processor: routes lists, broadcasts watermarks and DONE to every candidate."""

    __slots__ = ("route", "candidates", "deliver", "last_wm")

    def __init__(self, router: Router, deliver: Callable[[int, Any], bool]):
        self.route, self.candidates, self.deliver = router.route, router.candidates, deliver
        self.last_wm: int | None = None  # the last watermark sent (the lastForwardedWm metric)

    def entries(self, items: list, out: deque) -> None:
        if Watermark not in map(type, items):  # the common case, scanned in C
            out.extend((self.deliver, t, part) for t, part in self.route(items))
            return
        start = 0
        for i, item in enumerate(items):
            if item.__class__ is Watermark:
                if i > start:
                    out.extend((self.deliver, t, part) for t, part in self.route(items[start:i]))
                out.extend((self.deliver, t, item) for t in self.candidates)
                self.last_wm = item.timestamp
                start = i + 1
        if start == 0:
            out.extend((self.deliver, t, part) for t, part in self.route(items))
        elif start < len(items):
            out.extend((self.deliver, t, part) for t, part in self.route(items[start:]))

    def broadcast(self, entry: Any, out: deque) -> None:
        """``DONE`` or a snapshot barrier, to every candidate consumer."""
        out.extend((self.deliver, t, entry) for t in self.candidates)


class ProcessorRunner:
    """One processor of the task (see the module docstring): it routes, the tasklet decides."""

    __slots__ = ("vertex", "g", "tasklet", "inbound", "outbound", "pending", "control", "on_snapshot", "wake")

    def __init__(self, vertex: str, g: int, tasklet: ProcessorTasklet, inbound: dict[int, InboundEdge],
                 outbound: list[_Outbound], on_snapshot: Callable | None = None, wake: Any = None):
        self.vertex, self.g, self.tasklet = vertex, g, tasklet
        self.inbound, self.outbound = inbound, outbound
        self.wake = wake  # what its inbound queues set: the task's Waker, or its own thread's Event
        self.pending: deque = deque()
        self.control: deque = deque()  # ("snapshot", id) | ("finish", id, success), from the driver's thread
        self.on_snapshot = on_snapshot  # (vertex, g, snapshot_id, entries or None when done)

    @property
    def cooperative(self) -> bool:
        """Whether the processor runs in the task's cooperative scheduler (else in a thread of its own)."""
        return self.tasklet.cooperative

    @property
    def finished(self) -> bool:
        """The tasklet emitted ``DONE`` (``END``): only snapshot requests and phase-2 calls remain."""
        return self.tasklet.state is _END

    def has_control(self) -> bool:
        """True when a snapshot request or phase-2 call waits (also for a finished processor)."""
        return bool(self.control) or self.tasklet.phase_two_pending

    def _apply_control(self) -> None:
        tasklet, control = self.tasklet, self.control
        while control:
            message = control.popleft()
            if message[0] == "finish":
                tasklet.on_snapshot_completed(message[1], message[2])
            else:
                tasklet.request_snapshot(message[1])

    def run_once(self) -> bool:
        """Flush, feed, step and route once; True when anything moved."""
        progress = False
        pending = self.pending
        if pending:
            progress = self._flush()
            if pending:
                return progress
        tasklet = self.tasklet
        if self.control:
            self._apply_control()
        if tasklet.wants_input():
            snapshots = tasklet.snapshots
            for o in tasklet.current_ordinals():
                if not (snapshots is not None and snapshots.aligner.blocked(o)) and self.inbound[o].drain_into(tasklet):
                    progress = True
        result = tasklet.step()
        out = tasklet.take_output()
        if out:
            outbound = self.outbound
            for o, payload in out:
                if payload.__class__ is list:
                    outbound[o].entries(payload, pending)
                else:  # DONE or a snapshot barrier: to every consumer, after the items before it
                    outbound[o].broadcast(payload, pending)
        if self.on_snapshot is not None:
            saved = tasklet.take_snapshots()
            if saved:
                for snapshot_id, entries in saved:  # stored and reported before the barrier leaves
                    self.on_snapshot(self.vertex, self.g, snapshot_id, entries)
                out = True
        if out:
            self._flush()
            return True
        return progress or result == PROGRESS

    def _flush(self) -> bool:
        pending = self.pending
        moved = False
        while pending:
            deliver, target, entry = pending[0]
            if not deliver(target, entry):
                return moved
            pending.popleft()
            moved = True
        return moved

    @property
    def idle_stalls(self) -> int:
        return self.tasklet.stalls


class TaskRunners:
    """All processors of task ``t`` of a pipelined job (see the module docstring)."""

    def __init__(self, t: int, spec: Any, driver: Any, stop: threading.Event,
                 report_failure: Callable[[BaseException], Any] | None = None):
        self.t, self.spec, self.stop = t, spec, stop
        self.report_failure = report_failure
        self.layout = layout = spec.layout
        self.wake = Waker()
        self.queues: dict[tuple, Queue] = {}
        self.failure: BaseException | None = None
        self.failure_origin: tuple[str, int] | None = None
        self.runners: list[ProcessorRunner] = []
        self.suppliers: list[tuple[str, Any]] = []
        self.threads: list[threading.Thread] = []
        self.links: Links | None = None
        snapshot_spec = getattr(spec, "snapshots", None)
        self.snapshots = None
        if snapshot_spec is not None:
            driver = StampedClient(driver, spec.attempt)
            self.snapshots = TaskSnapshots(snapshot_spec, spec.channel.secret, driver)
        try:
            mine = layout.processors_of(t)
            cache: dict[tuple[str, int], dict] = {}
            for name, g in mine:
                vertex = layout.vertices[name]
                try:
                    processor = self._member_processors(vertex, g, cache, mine)[g]
                    self.runners.append(self._runner(vertex, g, processor, driver))
                except BaseException as exc:
                    mark_origin(exc, name, g)
                    raise
            self.links = Links(t, spec.channel.secret, spec.host or _own_address(), layout.tasks - 1,
                               self.queues.__getitem__, self._link_error, stop.is_set, self.wake)
        except BaseException as exc:
            self.failure = exc
            self.close()
            raise

    # ------------------------------------------------------------------ building
    def _contexts(self, vertex: Any, g: int, driver: Any) -> tuple[Any, Any]:
        return vertex_contexts(vertex.name, g, vertex.local_parallelism, self.layout.members,
                               job_id=self.spec.job_id, processing_guarantee=self.spec.guarantee, driver=driver,
                               unbounded=self.spec.unbounded)

    def _member_processors(self, vertex: Any, g: int, cache: dict, mine: list) -> dict:
        """``{g: processor}`` for this task's processors of ``g``'s member (suppliers asked once per member)."""
        lp = vertex.local_parallelism
        m = g // lp
        if (vertex.name, m) not in cache:
            supplier = self.spec.suppliers[vertex.name][m]
            supplier_ctx, _ = self._contexts(vertex, m * lp, None)
            supplier.init(supplier_ctx)
            self.suppliers.append((vertex.name, supplier))
            wanted = {h % lp for name, h in mine if name == vertex.name and h // lp == m}
            processors = open_processors(supplier, lp, vertex.name, keep=wanted)
            cache[(vertex.name, m)] = {m * lp + i: p for i, p in processors.items()}
        return cache[(vertex.name, m)]

    def _runner(self, vertex: Any, g: int, processor: Any, driver: Any) -> ProcessorRunner:
        layout, spec = self.layout, self.spec
        _, ctx = self._contexts(vertex, g, driver)
        snapshots = self.snapshots
        aligned = None if snapshots is None else snapshots.spec.aligned
        tasklet = ProcessorTasklet(processor, ctx, inbound_priorities=vertex.priorities,
                                   outbound_capacities=vertex.capacities, vertex_name=vertex.name, policy=PIPELINED,
                                   max_watermark_retain_ms=spec.max_watermark_retain_ms, snapshot_aligned=aligned)
        # a processor in a thread of its own is woken by its own queues only: with the task's Waker it would run
        # a round (and take the GIL from the scheduler) every time anything in the task moved
        wake = self.wake if tasklet.cooperative else threading.Event()
        inbound = {}
        for el in vertex.inbound:
            source_p = layout.vertices[el.source].total_parallelism
            queues = []
            for sender in el.senders_to(g, source_p):
                queue = self.queues[(vertex.name, g, el.dest_ordinal, sender)] = Queue(wake)
                queues.append(queue)
            inbound[el.dest_ordinal] = InboundEdge(el.dest_ordinal, queues, spec.max_watermark_retain_ms, aligned)
        outbound = [_Outbound(Router(el.spec, g), self._deliverer(el, g)) for el in vertex.outbound]
        if snapshots is None:
            return ProcessorRunner(vertex.name, g, tasklet, inbound, outbound, wake=wake)
        if snapshots.is_done(vertex.name, g):
            tasklet.restored_as_completed()
        else:
            entries = snapshots.entries_for(vertex.name, g, vertex.total_parallelism)
            if entries is not None:
                tasklet.restore_snapshot(entries)
        return ProcessorRunner(vertex.name, g, tasklet, inbound, outbound, snapshots.on_snapshot, wake)

    def control(self, messages: list[tuple]) -> None:
        """Hand the driver's snapshot instructions to every processor of the task (any thread)."""
        for r in self.runners:
            r.control.extend(messages)
        self._wake_all()

    def _wake_all(self) -> None:
        """Wake the scheduler and every non-cooperative processor's thread (to stop, or to take control)."""
        self.wake.set()
        for r in self.runners:
            r.wake.set()

    def _deliverer(self, edge: Any, sender: int) -> Callable[[int, Any], bool]:
        """``deliver(target, entry)`` for processor ``sender``'s side of ``edge``: into the target processor's
        queue when it runs in this task (the queue is looked up once per target), else over the link to the
        task that runs it."""
        layout, this_task, queues = self.layout, self.t, self.queues
        dest, ordinal = edge.dest, edge.dest_ordinal
        local: dict[int, Queue] = {}

        def deliver(target: int, entry: Any) -> bool:
            queue = local.get(target)
            if queue is not None:
                return queue.offer(entry)
            key = (dest, target, ordinal, sender)
            task = layout.task_of(dest, target)
            if task == this_task:
                queue = local[target] = queues[key]
                return queue.offer(entry)
            return self.links.offer(task, key, entry)  # type: ignore[union-attr]

        return deliver

    # ------------------------------------------------------------------ running
    def run(self) -> None:
        """Run every processor to the end (or until ``stop``); re-raise the first failure."""
        cooperative = [r for r in self.runners if r.cooperative]
        for r in self.runners:
            if not r.cooperative:
                thread = threading.Thread(target=self._in_thread, args=(r,), daemon=True,
                                          name=f"jetspark-{r.vertex}#{r.g}")
                self.threads.append(thread)
                thread.start()
        threads = self.threads
        self._guarded(cooperative, until=lambda: not any(thread.is_alive() for thread in threads), io=True)
        if self.failure is not None:
            raise self.failure
        links = self.links
        if not self.stop.is_set() and links is not None:
            links.finish()
            # until the peers sent everything, finished processors still answer snapshots and phase 2
            self._guarded(self.runners, until=lambda: links.sent_all() and links.all_said_bye(), io=True)
        if self.failure is not None:
            raise self.failure

    def _in_thread(self, runner: ProcessorRunner) -> None:
        """A non-cooperative processor's thread; the scheduler is woken when it ends."""
        try:
            self._guarded([runner], wake=runner.wake)
        finally:
            self.wake.set()

    def _guarded(self, runners: list[ProcessorRunner], until: Callable[[], bool] | None = None,
                 io: bool = False, wake: Any = None) -> None:
        try:
            self._schedule(runners, until, io, wake or self.wake)
        except BaseException as exc:  # noqa: BLE001 - the first failure stops the task
            if self.failure is None:
                self.failure = exc
                self.failure_origin = getattr(exc, "_jetspark_origin", None)
                self._report(exc)
            self.stop.set()
            self._wake_all()

    def _report(self, exc: BaseException) -> None:
        """Report a processor's failure while the task's links are still open: once they close, the peers
        report broken links, and the driver must hear the cause first."""
        if self.report_failure is None or self.stop.is_set():
            return
        try:
            self.report_failure(exc)
        except Exception as err:  # noqa: BLE001 - the task still fails with ``exc``; the worker reports it again
            _log.warning("jetspark: could not report the failure of task %d early: %r", self.t, err)

    def _schedule(self, runners: list[ProcessorRunner], until: Callable[[], bool] | None, io: bool,
                  wake: Any) -> None:
        """Round-robin ``runners`` until each finished (and has no pending control), then until ``until()``,
        sleeping on ``wake`` when a round moved nothing. ``io``: this is the task's scheduler thread, which also
        moves the links' bytes (``links.py``) in every round and sleeps on their sockets too."""
        stop = self.stop
        links = self.links if io else None
        sleep = wake.wait if links is None else links.wait
        idle = 0
        solo = len(runners) == 1 and not runners[0].cooperative
        while not stop.is_set():
            wake.clear()
            progress = False
            active = False
            for r in runners:
                if r.tasklet.state is _END and not r.pending and not r.has_control():  # finished
                    continue
                active = True
                try:
                    if r.run_once():
                        progress = True
                except BaseException as exc:
                    mark_origin(exc, r.vertex, r.g)
                    raise
            if links is not None and links.pump():
                progress = True
            if progress:
                idle = 0
            elif not active:
                if until is None or until():
                    return
                sleep(MAX_IDLE_WAIT)
            elif solo:  # a processor in its own thread: its queues wake it; output held back is retried soon
                idle += 1
                runner = runners[0]
                sleep(back_off_seconds(1 if runner.pending else max(idle, runner.idle_stalls)))
            else:
                idle += 1
                sleep(min(MAX_IDLE_WAIT, 1e-5 * (1 << min(idle, 10))))

    def _link_error(self, peer: int, text: str) -> None:
        """A link to task ``peer`` broke: the task fails naming the peer's processors (its first one as the
        origin), as an infrastructure failure (restartable when the job takes snapshots)."""
        if self.failure is None and not self.stop.is_set():
            ran = self.layout.processors_of(peer)
            names = ", ".join(f"{v}#{g}" for v, g in ran) or "no processor"
            self.failure = ConnectionError(f"task {peer} (running {names}) {text}")
            if ran:
                mark_origin(self.failure, *ran[0])
            mark_infrastructure(self.failure)
        self.stop.set()
        self._wake_all()

    # ------------------------------------------------------------------ results and cleanup
    def log_targets(self) -> list[tuple[Any, int]]:
        """``(processor logger, the driver's level for it)`` of every processor whose logs go to the driver."""
        levels = self.spec.log_levels or {}
        return [(r.tasklet.context.logger, levels[r.vertex][r.g]) for r in self.runners if r.vertex in levels]

    def metrics(self) -> dict:
        counters = {}
        for r in self.runners:
            m = r.tasklet.metrics
            for o, n in list(m.received.items()):
                counters[(r.vertex, r.g, RECEIVED, o)] = n
            for o, n in list(m.emitted.items()):
                counters[(r.vertex, r.g, EMITTED, o)] = n
            for o, edge in enumerate(r.outbound):
                if edge.last_wm is not None:
                    counters[(r.vertex, r.g, LAST_FORWARDED_WM, o)] = edge.last_wm
            for o, edge in r.inbound.items():  # Jet's queue metrics: entries waiting, entries the queues hold
                counters[(r.vertex, r.g, QUEUES_SIZE, o)] = sum(len(q.entries) for q in edge.queues)
                counters[(r.vertex, r.g, QUEUES_CAPACITY, o)] = QUEUE_ENTRIES * len(edge.queues)
        return counters

    def close(self) -> None:
        """Close processors, suppliers and links; join threads (bounded). Never raises over a failure."""
        self.stop.set()
        self._wake_all()
        for thread in self.threads:
            thread.join(5)
        failure = self.failure
        for r in self.runners:
            try:
                r.tasklet.close(failure)
            except Exception as exc:  # noqa: BLE001
                if self.failure is None:
                    self.failure, self.failure_origin = exc, (r.vertex, r.g)
        for name, supplier in self.suppliers:
            try:
                supplier.close(failure)
            except Exception as exc:  # noqa: BLE001
                _log.warning("ProcessorSupplier.close() of vertex '%s' failed: %r", name, exc)
        if self.links is not None:
            self.links.close()
        self.wake.close()


def _own_address() -> str:
    """This machine's address as other machines reach it (a task on a cluster listens on it): Spark's
    ``SPARK_LOCAL_IP`` when the executor has it (as Spark's own ports do), else the host name's address."""
    import os
    import socket

    return os.environ.get("SPARK_LOCAL_IP") or socket.gethostbyname(socket.gethostname())

