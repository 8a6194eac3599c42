"""``ProcessorTasklet``: one processor run through Jet's lifecycle by one explicit state machine (engine-free).

This is the one copy of the processor lifecycle. Three callers run it, each with a
:class:`~processors.execution.tasklet_policy.TaskletPolicy` saying how it differs: the staged runtime
(:func:`processors.execution.staged.drive`, ``STAGED``), the pipelined runtime (``dag/runtime/pipelined``,
``PIPELINED``) and ``verify_processor`` (``processors/testing.py``, its ``TEST_SUPPORT`` policy). The caller feeds input
and events, calls :meth:`ProcessorTasklet.step` and routes what :meth:`~ProcessorTasklet.take_output` returns; it never
decides what the processor is called with next. That decision is :attr:`ProcessorTasklet.state`, one
:class:`ProcessorState`, and the step function that reads it.

The states
----------
Each ``step()`` runs at most one processor call and returns ``PROGRESS``, ``NO_PROGRESS`` (a call that did
nothing) or ``NEEDS_INPUT`` (nothing to do until more input or events arrive)::

      INIT --restore entries--> RESTORE_FROM_SNAPSHOT --entries consumed--> FINISH_SNAPSHOT_RESTORE
        | no restore                                                                  | True
        v                                                                             |
    +-> PROCESS_INBOX <---------------------------------------------------------------+
    |     |-- inbox items -----------> process(o, inbox), stays
    |     |-- pending watermark -----> PROCESS_WATERMARK ---True---------------------------+
    |     |-- staged, inbox emptied -> NULLARY_PROCESS -----True---------------------------+
    |     |-- a done edge -----------> COMPLETE_EDGE -------one call-----------------------+
    |     |-- barrier due, no input -> SAVE_SNAPSHOT --True--> SNAPSHOT_COMMIT_PREPARE     |
    |     |                                                         | True                 |
    |     |                                                   EMIT_BARRIER --(resume)------+
    +-----|--------------------------------------------------------------------------------+
          | every priority group completed
          v
       COMPLETE --True--> EMIT_DONE --> END           (a due barrier is saved from COMPLETE too)

    phase 2 queued, any state after the restore (END too):  S --> ON_SNAPSHOT_COMPLETED --queue empty--> S
    close(), from any state, once:                         S --> CLOSED

What moves the tasklet, and what each state emits:

``INIT``
    The first step calls ``init(outbox, context)``. Next: ``RESTORE_FROM_SNAPSHOT`` when the caller gave
    :meth:`~ProcessorTasklet.restore_snapshot` entries, else ``PROCESS_INBOX``. A processor restored as already
    completed (:meth:`~ProcessorTasklet.restored_as_completed`) starts at ``EMIT_DONE`` and is never initialised.
``RESTORE_FROM_SNAPSHOT`` / ``FINISH_SNAPSHOT_RESTORE``
    ``restore_from_snapshot(inbox)`` until the entries are consumed, then ``finish_snapshot_restore()`` until
    True (also with no entries, as Jet). The tasklet takes no input meanwhile.
``PROCESS_INBOX``
    The hub: it picks the next call in this order of preference. (a) the ``BatchTransform`` fast path
    (``transform_chunks(batch, size)``, one list per step to every outbound ordinal; no outbox); (b)
    ``process(ordinal, inbox)`` for an inbound edge of the current priority group whose inbox holds items,
    round-robin; (c) a pending coalesced watermark -> ``PROCESS_WATERMARK``; (d) the policy's nullary call:
    pipelined, ``try_process()`` once whenever the inbox is empty (staged: see ``NULLARY_PROCESS``); (e) a
    done edge of the current group, in ascending ordinal order -> ``COMPLETE_EDGE``; when every edge of the
    group completed, the next priority group starts; after the last group -> ``COMPLETE``. Otherwise
    ``NEEDS_INPUT``: the caller feeds :meth:`~ProcessorTasklet.current_ordinals`.
``PROCESS_WATERMARK``
    ``try_process_watermark(Watermark(ts))`` until True, then back. The idle message ``Watermark(2**63-1)`` of
    the coalescer goes to every outbound ordinal without calling the processor.
``NULLARY_PROCESS`` (staged policy)
    ``try_process()`` until True after each emptied inbox, then back (Jet's batch ``NULLARY_PROCESS``).
``COMPLETE_EDGE``
    One ``complete_edge(o)`` call; back to ``PROCESS_INBOX``, which picks it again until it returned True.
``SAVE_SNAPSHOT`` / ``SNAPSHOT_COMMIT_PREPARE`` / ``EMIT_BARRIER``
    Entered from ``PROCESS_INBOX`` or ``COMPLETE`` (never with input or a watermark pending) once a barrier is due
    (:mod:`processors.execution.snapshot_steps`): ``save_to_snapshot()`` until True, then ``snapshot_commit_prepare()``
    until True (not in ``verify_processor``: TestSupport does not call it), the snapshot bucket drained after every
    call. ``EMIT_BARRIER`` (within the same step) records the saved entries for the runtime
    (:meth:`~ProcessorTasklet.take_snapshots`) and, when the policy emits control items, puts the barrier on every
    outbound ordinal after the items emitted before it; then the tasklet resumes where it was.
``ON_SNAPSHOT_COMPLETED``
    Phase 2 (:meth:`~ProcessorTasklet.on_snapshot_completed`, from the coordinator): preempts any state after
    the restore, also ``END``: ``snapshot_commit_finish(success)`` until True for each snapshot this processor
    prepared (others are dropped); it must not emit. Then the tasklet resumes where it was.
``COMPLETE`` / ``EMIT_DONE`` / ``END``
    ``complete()`` until True; then ``EMIT_DONE`` puts ``DONE`` on every outbound ordinal (when the policy emits
    control items: the pipelined runtime routes it to every consumer) and the tasklet is ``END``
    (:attr:`~ProcessorTasklet.is_done`): only phase-2 calls remain, and a snapshot requested now is answered
    with ``(snapshot_id, None)``.
``CLOSED``
    :meth:`~ProcessorTasklet.close` calls ``close()`` once, whatever the state (also after a failure); a second
    call does nothing. It is the caller's last call, always.

The runtimes only route: DONE and barriers come out of :meth:`~ProcessorTasklet.take_output` as
``(ordinal, DONE)`` / ``(ordinal, SnapshotBarrier)`` after the item lists, and no runtime keeps a flag of its own
about the processor's progress.

Rules the tasklet enforces (``ProcessorContractError`` naming processor, vertex, method and rule): a boolean
method returning ``None``; ``NO_PROGRESS_LIMIT`` consecutive calls of a cooperative processor without progress
(staged and verify: any call; pipelined: ``process`` and watermarks only, since a streaming processor may
legitimately wait); ``complete()`` returning True with a refused item never re-offered (also kept as
:attr:`~ProcessorTasklet.broken_rule`, which TestSupport reports as an ``AssertionError``). Exceptions from the
processor get a note naming the processor and the method. The caller must take the output after every step (the
processor is called with empty buckets) and must back off a non-cooperative processor that makes no progress
(:func:`processors.execution.staged.back_off_seconds`). ``is_cooperative()`` is asked once, when the tasklet is made.
"""

from __future__ import annotations

import enum
from typing import Any, Callable, Mapping, Sequence

from jetspark_base.errors import ProcessorContractError
from processors.execution.barrier import SnapshotBarrier
from processors.execution.coalescer import IDLE, WatermarkCoalescer
from processors.api.inbox import Inbox
from processors.execution.lifecycle import (
    DONE,
    ProcessorMetrics,
    call_bool,
    close_processor,
    describe_processor,
    no_progress_error,
    priority_groups,
    unfinished_item_error,
)
from processors.api.outbox import Outbox
from processors.api.processor import BatchTransform
from processors.execution.snapshot_steps import SNAPSHOT_BUCKET, TaskletSnapshots, restore_not_implemented_error
from processors.execution.tasklet_policy import PIPELINED, STAGED, Nullary, TaskletPolicy
from processors.api.watermark import Watermark

__all__ = [
    "ProcessorTasklet", "ProcessorState", "TaskletPolicy", "STAGED", "PIPELINED", "DONE", "PROGRESS",
    "NO_PROGRESS", "NEEDS_INPUT", "NO_PROGRESS_LIMIT",
]

PROGRESS, NO_PROGRESS, NEEDS_INPUT = 1, 0, -1
NO_PROGRESS_LIMIT = 1000
"""Consecutive calls of a cooperative processor without any progress after which the tasklet gives up with a
``ProcessorContractError``."""

_SINK_CHUNK = 1024  # inputs per transform_chunks call of a BatchTransform without outbound edges


class ProcessorState(enum.Enum):
    """Where a :class:`ProcessorTasklet` is in the processor's lifecycle (see the module docstring)."""

    INIT = "init"
    RESTORE_FROM_SNAPSHOT = "restore_from_snapshot"
    FINISH_SNAPSHOT_RESTORE = "finish_snapshot_restore"
    PROCESS_INBOX = "process_inbox"
    PROCESS_WATERMARK = "process_watermark"
    NULLARY_PROCESS = "nullary_process"
    COMPLETE_EDGE = "complete_edge"
    SAVE_SNAPSHOT = "save_snapshot"
    SNAPSHOT_COMMIT_PREPARE = "snapshot_commit_prepare"
    EMIT_BARRIER = "emit_barrier"
    ON_SNAPSHOT_COMPLETED = "on_snapshot_completed"
    COMPLETE = "complete"
    EMIT_DONE = "emit_done"
    END = "end"
    CLOSED = "closed"


# module globals: the step function compares with `is` (an Enum attribute lookup costs ten times more)
_INIT = ProcessorState.INIT
_RESTORE = ProcessorState.RESTORE_FROM_SNAPSHOT
_FINISH_RESTORE = ProcessorState.FINISH_SNAPSHOT_RESTORE
_PROCESS_INBOX = ProcessorState.PROCESS_INBOX
_PROCESS_WATERMARK = ProcessorState.PROCESS_WATERMARK
_NULLARY_PROCESS = ProcessorState.NULLARY_PROCESS
_COMPLETE_EDGE = ProcessorState.COMPLETE_EDGE
_SAVE_SNAPSHOT = ProcessorState.SAVE_SNAPSHOT
_COMMIT_PREPARE = ProcessorState.SNAPSHOT_COMMIT_PREPARE
_EMIT_BARRIER = ProcessorState.EMIT_BARRIER
_ON_SNAPSHOT_COMPLETED = ProcessorState.ON_SNAPSHOT_COMPLETED
_COMPLETE = ProcessorState.COMPLETE
_EMIT_DONE = ProcessorState.EMIT_DONE
_END = ProcessorState.END
_CLOSED = ProcessorState.CLOSED
_AFTER_INBOX, _WHEN_IDLE = Nullary.AFTER_INBOX, Nullary.WHEN_IDLE
_NO_INPUT = frozenset((_RESTORE, _FINISH_RESTORE, _EMIT_DONE, _END, _CLOSED))  # states that take no new input


# ---------------------------------------------------------------------------- the tasklet
class ProcessorTasklet:
    """One processor stepped through its lifecycle (see the module docstring).

    >>> from processors.api.processor import AbstractProcessor
    >>> from processors.api.context import Context
    >>> class Twice(AbstractProcessor):
    ...     def try_process0(self, item):
    ...         return self.try_emit(item) and self.try_emit(item)  # simplified: re-emits on retry
    >>> t = ProcessorTasklet(Twice(), Context(), inbound_priorities={0: 0}, outbound_capacities=[8],
    ...                      policy=PIPELINED)
    >>> t.add_batch(0, [1, 2]); t.edge_done(0)
    >>> while not t.is_done:
    ...     _ = t.step()
    ...     out = t.take_output()
    ...     if out: print(out)
    [(0, [1, 1, 2, 2])]
    [(0, DONE)]
    >>> t.state
    <ProcessorState.END: 'end'>
    >>> t.close(None)
    """

    __slots__ = (
        "processor", "context", "owner", "outbox", "metrics", "policy", "cooperative", "stalls", "state",
        "broken_rule", "snapshots", "_fast", "_fast_in", "_fast_out", "_fast_gen", "_fast_size", "_inboxes",
        "_groups", "_group", "_done_edges", "_completed", "_coalescer", "_coalesce", "_pending_wm", "_n_out",
        "_rotation", "_nullary", "_strict", "_control_out", "_resume_save", "_resume_finish",
    )

    def __init__(
        self,
        processor: Any,
        context: Any,
        *,
        inbound_priorities: Mapping[int, int],
        outbound_capacities: Sequence[int],
        metrics: ProcessorMetrics | None = None,
        vertex_name: str | None = None,
        policy: TaskletPolicy = STAGED,
        max_watermark_retain_ms: int | None = None,
        snapshot_aligned: bool | None = None,
        snapshot_capacity: int = SNAPSHOT_BUCKET,
    ):
        """``snapshot_aligned``: None when the job takes no snapshots, else whether barriers are aligned
        (exactly-once); ``snapshot_capacity``: the entries of the outbox's snapshot bucket."""
        if vertex_name is None:
            vertex_name = getattr(context, "vertex_name", None)
        self.processor, self.context, self.policy = processor, context, policy
        self.owner = describe_processor(processor, vertex_name, getattr(context, "global_processor_index", None))
        snapshot_bucket = None if snapshot_aligned is None else snapshot_capacity
        self.outbox = Outbox(outbound_capacities, snapshot_capacity=snapshot_bucket, owner=self.owner)
        self.broken_rule: ProcessorContractError | None = None
        self.metrics = metrics = ProcessorMetrics() if metrics is None else metrics
        for o in inbound_priorities:
            metrics.received.setdefault(o, 0)
        self._n_out = len(outbound_capacities)
        for o in range(self._n_out):
            metrics.emitted.setdefault(o, 0)
        self.cooperative = bool(getattr(processor, "is_cooperative", lambda: True)())  # asked once, here
        self.stalls = 0
        self.state = _INIT
        self._nullary, self._strict, self._coalesce = policy.nullary, policy.strict_progress, policy.coalesce_watermarks
        self._fast = isinstance(processor, BatchTransform) and policy.fast_path
        self._fast_in: list[list] = []
        self._fast_out: list | None = None
        self._fast_gen: Any = None   # the transform_chunks generator of the batch being transformed
        self._fast_size = min(outbound_capacities, default=_SINK_CHUNK)
        self._inboxes = {o: Inbox() for o in inbound_priorities}
        self._groups = [ordinals for _, ordinals in priority_groups(inbound_priorities)]
        self._group = 0
        self._done_edges: set[int] = set()
        self._completed: set[int] = set()
        n_in = max(inbound_priorities, default=-1) + 1
        self._coalescer = WatermarkCoalescer(n_in, max_watermark_retain_ms) if n_in and self._coalesce else None
        self._pending_wm: int | None = None
        self._rotation = 0
        self._control_out: list[tuple[int, Any]] = []  # (ordinal, DONE or barrier), after the buckets
        self._resume_save = self._resume_finish = _PROCESS_INBOX
        self.snapshots: Any = None if snapshot_aligned is None else \
            TaskletSnapshots(list(inbound_priorities), aligned=snapshot_aligned, owner=self.owner)
        """:class:`~processors.execution.snapshot_steps.TaskletSnapshots`, or None when the job takes no snapshots."""

    # ------------------------------------------------------------------ input and events (all from the caller)
    def add_batch(self, ordinal: int, items: list) -> None:
        """Items of inbound edge ``ordinal`` (never watermarks; those go to :meth:`add_watermark`)."""
        if not items:
            return
        self.metrics.received[ordinal] += len(items)
        if self._fast:
            self._fast_in.append(items)
        else:
            self._inboxes[ordinal]._items.extend(items)
        if self._coalescer is not None:
            self._coalescer.observe_event(ordinal)

    def add_watermark(self, ordinal: int, ts: int) -> None:
        """A watermark of inbound edge ``ordinal``, coalesced over the edge's upstream processors; without the
        policy's coalescing, a watermark item of the test's input, given to the processor as it is."""
        if self._coalescer is not None:
            self._set_pending(self._coalescer.observe_wm(ordinal, ts))
        elif not self._coalesce:
            self._pending_wm = ts

    def add_barrier(self, ordinal: int, barrier: SnapshotBarrier) -> None:
        """Inbound edge ``ordinal`` delivered ``barrier`` (coalesced over its queues); the save is due once the
        barrier arrived on every active edge."""
        self.snapshots.add_barrier(ordinal, barrier)

    def edge_done(self, ordinal: int) -> None:
        """Inbound edge ``ordinal`` has ended: ``complete_edge`` follows once its inbox is empty."""
        if ordinal in self._done_edges:
            return
        self._done_edges.add(ordinal)
        if self._coalescer is not None:
            self._set_pending(self._coalescer.queue_done(ordinal))
        if self.snapshots is not None:
            self.snapshots.edge_done(ordinal)

    def restore_snapshot(self, entries: list) -> None:
        """Restore these snapshot entries (maybe none) right after ``init``."""
        self._expect(_INIT, "restore_snapshot()")
        self.snapshots.restore_inbox = Inbox(entries)

    def restored_as_completed(self) -> None:
        """The processor had completed before the snapshot the job restarted from: emit ``DONE`` without
        initialising or calling it (only ``close()`` and phase-2 messages, which it ignores)."""
        self._expect(_INIT, "restored_as_completed()")
        self.state = _EMIT_DONE

    def request_snapshot(self, snapshot_id: int) -> None:
        """The coordinator started snapshot ``snapshot_id``: applies once no inbound edge is active (a source); a
        processor that already completed answers at once with ``(snapshot_id, None)`` in :meth:`take_snapshots`."""
        if self.state is _EMIT_DONE or self.state is _END:
            self.snapshots.saved.append((snapshot_id, None))
        else:
            self.snapshots.requested = SnapshotBarrier(snapshot_id)

    def on_snapshot_completed(self, snapshot_id: int, success: bool) -> None:
        """Phase 2: snapshot ``snapshot_id`` completed (or failed): ``snapshot_commit_finish(success)`` follows if
        this processor prepared it."""
        self.snapshots.finishes.append((snapshot_id, success))

    def skip_to_complete(self) -> None:
        """End the input without ``complete_edge`` calls (Jet's TestSupport never calls it): the next step (after
        a due snapshot) calls ``complete()``. Only in ``PROCESS_INBOX`` with no input pending."""
        if self.state is not _PROCESS_INBOX or not self._input_empty():
            raise RuntimeError(f"skip_to_complete() needs {self.owner} in PROCESS_INBOX without pending input, "
                               f"it is in {self.state.name}")
        self._group = len(self._groups)
        self.state = _COMPLETE

    def _expect(self, state: ProcessorState, call: str) -> None:
        if self.state is not state or self.snapshots is None:
            raise RuntimeError(f"{call} needs a new {self.owner} of a job taking snapshots, it is in "
                               f"{self.state.name}")

    def _set_pending(self, wm: int | None) -> None:
        if wm is not None:
            self._pending_wm = wm if self._pending_wm is None else max(self._pending_wm, wm)

    # ------------------------------------------------------------------ questions of the caller
    def wants_input(self) -> bool:
        """True when every inbox is empty, no watermark is pending and no restore or save is: the caller may
        add more input (of :meth:`current_ordinals`)."""
        state = self.state
        if state is not _PROCESS_INBOX and state in _NO_INPUT:
            return False
        if self.snapshots is not None and self.snapshots.barrier is not None:
            return False
        return self._input_empty()

    def _input_empty(self) -> bool:
        if self._pending_wm is not None or self._fast_in or self._fast_gen is not None:
            return False
        for inbox in self._inboxes.values():
            if inbox._items:
                return False
        return True

    def current_ordinals(self) -> list[int]:
        """The inbound ordinals of the priority group being consumed (the only ones to feed now)."""
        return self._groups[self._group] if self._group < len(self._groups) else []

    @property
    def is_done(self) -> bool:
        """``complete()`` returned True (or the processor was restored as completed): nothing more but ``DONE``."""
        return self.state is _END or self.state is _EMIT_DONE

    @property
    def restoring(self) -> bool:
        """True while the restore from a snapshot runs."""
        return self.state is _RESTORE or self.state is _FINISH_RESTORE or (
            self.state is _INIT and self.snapshots is not None and self.snapshots.restore_inbox is not None)

    @property
    def phase_two_pending(self) -> bool:
        """True while phase-2 calls wait (they run also after ``END``)."""
        return self.snapshots is not None and bool(self.snapshots.finishes)

    # ------------------------------------------------------------------ output
    def take_output(self) -> list[tuple[int, Any]]:
        """What the last step emitted: ``(outbound ordinal, items)`` (lists owned by the caller, not to mutate),
        then ``(ordinal, DONE)`` / ``(ordinal, SnapshotBarrier)`` with the policy's ``emit_control``."""
        emitted = self.metrics.emitted
        out = self._fast_out
        result: list[tuple[int, Any]] = []
        if out is not None:
            self._fast_out = None
            n = len(out)
            caps = self.outbox._capacities
            for o in range(self._n_out):
                emitted[o] += n
                cap = caps[o]
                if n <= cap:
                    result.append((o, out))
                else:
                    result += [(o, out[start:start + cap]) for start in range(0, n, cap)]
        else:
            buckets = self.outbox._buckets
            for o in range(self._n_out):
                if buckets[o]:
                    items = buckets[o]
                    buckets[o] = []
                    emitted[o] += len(items)
                    result.append((o, items))
        if self._control_out:
            result += self._control_out
            self._control_out = []
        return result

    def take_snapshots(self) -> list[tuple[int, list | None]]:
        """``(snapshot_id, entries)`` of every save completed since the last call, for the snapshot store
        (``entries`` None: the processor had completed before the snapshot)."""
        return self.snapshots.take_saved() if self.snapshots is not None else []

    # ------------------------------------------------------------------ the step function
    def step(self) -> int:
        """Run one unit of the lifecycle: ``PROGRESS``, ``NO_PROGRESS`` (a call that did nothing) or
        ``NEEDS_INPUT`` (nothing to do until more input or events arrive). Every transition is made here or in
        the state handlers below it."""
        try:
            if self.snapshots is not None:
                self._snapshot_transitions()
            state = self.state
            if state is _PROCESS_INBOX:
                return self._process_inbox()
            if state is _PROCESS_WATERMARK:
                return self._process_watermark()
            if state is _NULLARY_PROCESS:
                return self._nullary_process()
            if state is _COMPLETE:
                return self._complete()
            if state is _INIT:
                return self._init()
            if state is _SAVE_SNAPSHOT:
                return self._save_snapshot()
            if state is _COMMIT_PREPARE:
                return self._commit_prepare()
            if state is _ON_SNAPSHOT_COMPLETED:
                return self._on_snapshot_completed()
            if state is _RESTORE:
                return self._restore()
            if state is _FINISH_RESTORE:
                return self._finish_restore()
            if state is _EMIT_DONE:
                return self._emit_done()
            return NEEDS_INPUT  # END, CLOSED
        except Exception as exc:
            if not isinstance(exc, ProcessorContractError):
                exc.add_note(f"in {self.owner}, method {self.outbox.call or 'init(outbox, context)'}")
            raise

    def close(self, failure: BaseException | None) -> None:
        """Call ``close()`` on the processor once, whatever the state (see :func:`close_processor`); the tasklet is
        ``CLOSED`` after it and a second call does nothing."""
        if self.state is _CLOSED:
            return
        self.state = _CLOSED
        close_processor(self.processor, self.owner, failure)

    def _snapshot_transitions(self) -> None:
        """Snapshot work preempts the current state: phase 2 any state after the restore; a due save
        ``PROCESS_INBOX`` and ``COMPLETE`` once no input is pending."""
        snapshots, state = self.snapshots, self.state
        if state is _INIT or state is _RESTORE or state is _FINISH_RESTORE or state is _CLOSED:
            return
        if snapshots.finishes:
            if state is not _ON_SNAPSHOT_COMPLETED:
                self._resume_finish, self.state = state, _ON_SNAPSHOT_COMPLETED
            return
        if state is not _PROCESS_INBOX and state is not _COMPLETE:
            return
        requested = snapshots.requested
        if requested is not None and snapshots.barrier is None:
            if requested.snapshot_id <= snapshots.last_id:
                snapshots.requested = None
            elif snapshots.no_active_input():
                snapshots.requested, snapshots.barrier = None, requested
        if snapshots.barrier is not None and self._input_empty():
            self._resume_save, self.state = state, _SAVE_SNAPSHOT

    # ------------------------------------------------------------------ INIT, restore
    def _init(self) -> int:
        self.outbox.call = "init(outbox, context)"
        self.processor.init(self.outbox, self.context)
        restore = self.snapshots is not None and self.snapshots.restore_inbox is not None
        self.state = _RESTORE if restore else _PROCESS_INBOX
        return PROGRESS

    def _restore(self) -> int:
        inbox = self.snapshots.restore_inbox
        if not inbox:
            self.state = _FINISH_RESTORE
            return self._finish_restore()
        before = len(inbox)
        self.outbox.reset()
        self.outbox.call = "restore_from_snapshot(inbox)"
        try:
            self.processor.restore_from_snapshot(inbox)
        except ProcessorContractError as exc:
            if "does not override" not in str(exc):
                raise
            raise restore_not_implemented_error(self.owner, self.processor, before) from exc
        return PROGRESS if len(inbox) < before or self._emitted() else NO_PROGRESS

    def _finish_restore(self) -> int:
        if self._call("finish_snapshot_restore()", self.processor.finish_snapshot_restore):
            self.snapshots.restore_inbox = None
            self.state = _PROCESS_INBOX
            return PROGRESS
        return PROGRESS if self._emitted() else NO_PROGRESS

    # ------------------------------------------------------------------ PROCESS_INBOX and what it picks
    def _process_inbox(self) -> int:
        if self._fast_in or self._fast_gen is not None:
            return self._transform()
        group = self._groups[self._group] if self._group < len(self._groups) else ()
        n = len(group)
        for k in range(n):
            o = group[(self._rotation + k) % n] if n > 1 else group[0]
            inbox = self._inboxes[o]
            if inbox._items:
                self._rotation = (self._rotation + k) % n if n > 1 else 0
                return self._process(o, inbox)
        if self._pending_wm is not None:
            self.state = _PROCESS_WATERMARK
            return self._process_watermark()
        if self._nullary is _WHEN_IDLE:
            if self._coalescer is not None:
                self._set_pending(self._coalescer.check_history())
            self._call("try_process()", self.processor.try_process)
            if any(self.outbox._buckets):
                return PROGRESS
        for o in group:
            if o in self._completed:
                continue
            if o not in self._done_edges:
                break  # complete_edge in ascending ordinal order
            return self._complete_edge(o)
        if n and len(self._completed.intersection(group)) == n:
            self._group += 1
            return PROGRESS
        if self._group >= len(self._groups):
            self.state = _COMPLETE
            return PROGRESS
        return NEEDS_INPUT

    def _process(self, ordinal: int, inbox: Inbox) -> int:
        items = inbox._items
        before = len(items)
        outbox = self.outbox
        outbox.reset()
        call = outbox.call = f"process({ordinal}, inbox)"
        self.processor.process(ordinal, inbox)
        if not items and self._nullary is _AFTER_INBOX:
            self.state = _NULLARY_PROCESS
        return self._progress(len(items) != before or self._emitted(), call, check=True)

    def _transform(self) -> int:
        """One list of the ``BatchTransform`` fast path: ``transform_chunks`` cuts a batch's output into lists
        of about the smallest queue size, taken one per step, so memory is bounded by the queue sizes."""
        if self._fast_gen is None:
            batch = self._fast_in.pop(0)
            self.outbox.call = f"transform_batch(<{len(batch)} items>)"
            self._fast_gen = iter(self.processor.transform_chunks(batch, self._fast_size))
        out = next(self._fast_gen, None)
        if out is None:
            self._fast_gen = None
        elif out:
            self._fast_out = out
        self.stalls = 0
        return PROGRESS

    def _process_watermark(self) -> int:
        ts = self._pending_wm
        if ts == IDLE and self._coalesce:
            for bucket in self.outbox._buckets:
                bucket.append(Watermark(IDLE))
            self._pending_wm = None
            self.state = _PROCESS_INBOX
            return PROGRESS
        done = self._call("try_process_watermark(watermark)", self.processor.try_process_watermark, Watermark(ts))
        if done:
            self._pending_wm = None
            self.state = _PROCESS_INBOX
        return self._progress(done or self._emitted(), "try_process_watermark(watermark)", check=True)

    def _nullary_process(self) -> int:
        done = self._call("try_process()", self.processor.try_process)
        if done:
            self.state = _PROCESS_INBOX
        return self._progress(done or self._emitted(), "try_process()")

    def _complete_edge(self, ordinal: int) -> int:
        self.state = _COMPLETE_EDGE
        call = f"complete_edge({ordinal})"
        done = self._call(call, self.processor.complete_edge, ordinal)
        if done:
            self._completed.add(ordinal)
        self.state = _PROCESS_INBOX  # which picks this edge again until it completed
        return self._progress(done or self._emitted(), call)

    # ------------------------------------------------------------------ snapshots
    def _save_snapshot(self) -> int:
        snapshots, outbox = self.snapshots, self.outbox
        done = self._call("save_to_snapshot()", self.processor.save_to_snapshot)
        saved = outbox.drain_snapshot()
        snapshots.entries.extend(saved)
        progress = done or bool(saved) or self._emitted()
        if done:
            if self.policy.commit_prepare:
                self.state = _COMMIT_PREPARE
            else:
                self._emit_barrier()
        return PROGRESS if progress else NO_PROGRESS

    def _commit_prepare(self) -> int:
        snapshots = self.snapshots
        done = self._call("snapshot_commit_prepare()", self.processor.snapshot_commit_prepare)
        snapshots.entries.extend(self.outbox.drain_snapshot())
        if done:
            snapshots.prepared.add(snapshots.barrier.snapshot_id)
            self._emit_barrier()
        return PROGRESS

    def _emit_barrier(self) -> None:
        """Record the save for the runtime and emit the barrier after the items emitted so far; resume."""
        self.state = _EMIT_BARRIER
        snapshots = self.snapshots
        barrier = snapshots.barrier
        snapshots.saved.append((barrier.snapshot_id, snapshots.entries))
        snapshots.entries, snapshots.barrier, snapshots.last_id = [], None, barrier.snapshot_id
        if self.policy.emit_control:
            self._control_out += [(o, barrier) for o in range(self._n_out)]
        self.state = self._resume_save

    def _on_snapshot_completed(self) -> int:
        finishes, prepared = self.snapshots.finishes, self.snapshots.prepared
        snapshot_id, success = finishes[0]
        if snapshot_id not in prepared:  # not prepared here (e.g. restored as completed): nothing to commit
            finishes.popleft()
            done = False
        else:
            call = f"snapshot_commit_finish({success})"
            done = self._call(call, self.processor.snapshot_commit_finish, success)
            if self._emitted():
                raise ProcessorContractError(f"{self.owner}: {call} emitted items; it must not emit (it may run "
                                             "between any two calls, also after complete())")
            if done:
                finishes.popleft()
                prepared.discard(snapshot_id)
        if not finishes:
            self.state = self._resume_finish
        return PROGRESS if done else NO_PROGRESS

    # ------------------------------------------------------------------ COMPLETE, EMIT_DONE
    def _complete(self) -> int:
        outbox = self.outbox
        done = self._call("complete()", self.processor.complete)
        if done:
            if outbox.has_unfinished_item():
                self.broken_rule = unfinished_item_error(self.owner, "complete()", outbox)
                raise self.broken_rule
            self._emit_done()
        return self._progress(done or self._emitted(), "complete()")

    def _emit_done(self) -> int:
        self.state = _EMIT_DONE
        if self.policy.emit_control:
            self._control_out += [(o, DONE) for o in range(self._n_out)]
        self.state = _END
        return PROGRESS

    # ------------------------------------------------------------------ helpers
    def _call(self, call: str, fn: Callable[..., Any], *args: Any) -> bool:
        return call_bool(self.outbox, call, fn, *args)

    def _emitted(self) -> bool:
        return self._fast_out is not None or any(self.outbox._buckets)

    def _progress(self, progress: bool, call: str, check: bool = False) -> int:
        """Count consecutive calls without progress; a cooperative processor fails after ``NO_PROGRESS_LIMIT``."""
        if progress:
            self.stalls = 0
            return PROGRESS
        self.stalls += 1
        if self.cooperative and self.stalls >= NO_PROGRESS_LIMIT and (check or self._strict):
            raise no_progress_error(self.owner, call, self.stalls)
        return NO_PROGRESS
