"""The snapshot part of a processor's lifecycle, step by step (engine-free; owned by a
:class:`~processors.execution.tasklet.ProcessorTasklet` whose job takes snapshots).

The tasklet calls :meth:`SnapshotSteps.step` before its own work; a non-None result means a snapshot step ran.
In order of preference (``jet-streaming.md`` 8.3, 8.4, 8.6):

1. **Restore** (once, right after ``init``, when the job restarted from a snapshot): the processor's routed
   entries go to ``restore_from_snapshot(inbox)`` until the inbox is empty, then ``finish_snapshot_restore()``
   until True (also with no entries, as Jet). A processor that received entries but kept the default
   ``restore_from_snapshot`` fails with a ``ProcessorContractError`` naming its vertex, index and class.
2. **Phase 2** (``add_finish(snapshot_id, success)``, sent by the coordinator once a snapshot completed or
   failed): ``snapshot_commit_finish(success)`` until True, for snapshots this processor prepared; it may run
   while input is pending and must not emit.
3. **Save** once barrier ``n`` is complete (it arrived on every active inbound edge, see
   :class:`~processors.execution.barrier.BarrierAligner`; or, for a processor without active input such as a source, the
   coordinator requested it with :meth:`request`; or ``verify_processor`` asked for it with :meth:`save_now`)
   **and** the inbox is empty: ``save_to_snapshot()`` until True, then ``snapshot_commit_prepare()`` until True
   (not with ``commit=False``: Jet's TestSupport does not call it), draining the outbox's snapshot bucket after
   every call; then the barrier is handed to the runner (:meth:`take_barriers`, to forward on every outbound
   edge after the items emitted so far) and the saved entries too (:meth:`take_snapshots`, to write to the
   store and report). A ``save_to_snapshot()`` call that neither returned True, nor saved, nor emitted anything
   is a step without progress.

While a save is pending the tasklet takes no new input (:attr:`busy`); with aligned barriers (exactly-once) the
runner also stops draining the edges that already delivered the barrier (:meth:`blocked`).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from jetspark_base.errors import ProcessorContractError
from processors.execution.barrier import BarrierAligner, SnapshotBarrier
from processors.api.inbox import Inbox

__all__ = ["SnapshotSteps", "SNAPSHOT_BUCKET"]

SNAPSHOT_BUCKET = 1024
"""Entries the outbox's snapshot bucket holds before ``offer_to_snapshot`` refuses (drained after every call)."""


class SnapshotSteps:
    """Snapshot state of one tasklet (see the module docstring)."""

    __slots__ = ("tasklet", "aligner", "restore_inbox", "restoring", "finishes", "prepared", "barrier", "phase",
                 "entries", "snapshots", "barriers", "requested", "last_id", "inputs", "commit")

    def __init__(self, tasklet: Any, inbound_ordinals: list[int], *, aligned: bool, commit: bool = True):
        self.tasklet = tasklet
        self.commit = commit
        self.inputs = len(inbound_ordinals)
        self.aligner = BarrierAligner(max(inbound_ordinals, default=-1) + 1, aligned=aligned, owner=tasklet.owner)
        self.restore_inbox: Inbox | None = None
        self.restoring = False
        self.finishes: deque = deque()
        self.prepared: set[int] = set()
        self.barrier: SnapshotBarrier | None = None
        self.phase = "save"
        self.entries: list = []
        self.snapshots: list[tuple[int, list]] = []
        self.barriers: list[SnapshotBarrier] = []
        self.requested: SnapshotBarrier | None = None
        self.last_id = -1

    # ------------------------------------------------------------------ inputs (runner's thread)
    def set_restore(self, entries: list) -> None:
        """Restore these entries (maybe none) right after ``init``."""
        self.restore_inbox = Inbox(entries)
        self.restoring = True

    def add_barrier(self, ordinal: int, barrier: SnapshotBarrier) -> None:
        """Inbound edge ``ordinal`` delivered ``barrier`` (coalesced over its queues)."""
        if self.aligner.on_barrier(ordinal, barrier):
            self._complete(barrier)

    def edge_done(self, ordinal: int) -> None:
        pending = self.aligner.pending
        if self.aligner.on_done(ordinal):
            self._complete(pending)

    def blocked(self, ordinal: int) -> bool:
        """Exactly-once: do not drain ``ordinal`` now (its barrier arrived, others' not yet)."""
        return self.aligner.blocked(ordinal)

    def request(self, barrier: SnapshotBarrier) -> None:
        """The coordinator started snapshot ``barrier.snapshot_id``; applies when no inbound edge is active."""
        self.requested = barrier

    def save_now(self, barrier: SnapshotBarrier) -> None:
        """Save as soon as the inbox is empty, whatever the inbound edges (``verify_processor``'s snapshot points)."""
        self._complete(barrier)

    def add_finish(self, snapshot_id: int, success: bool) -> None:
        self.finishes.append((snapshot_id, success))

    def _complete(self, barrier: SnapshotBarrier) -> None:
        self.barrier = barrier
        self.phase = "save"

    @property
    def busy(self) -> bool:
        """True while a restore or a save is pending: the tasklet must not take new input."""
        return self.restoring or self.barrier is not None

    # ------------------------------------------------------------------ outputs (runner's thread)
    def take_snapshots(self) -> list[tuple[int, list]]:
        """``(snapshot_id, entries)`` of every save completed since the last call."""
        done, self.snapshots = self.snapshots, []
        return done

    def take_barriers(self) -> list[SnapshotBarrier]:
        """Barriers to forward on every outbound edge (after the items emitted before them)."""
        done, self.barriers = self.barriers, []
        return done

    # ------------------------------------------------------------------ stepping
    def step(self, inbox_empty: bool) -> bool | None:
        """Run one snapshot step if one is due; returns its progress (True/False) or None when none was due."""
        if self.restoring:
            return self._restore_step()
        if self.finishes:
            return self._finish_step()
        requested = self.requested
        if requested is not None and self.barrier is None:
            if requested.snapshot_id <= self.last_id:
                self.requested = None
            elif self._no_active_input():
                self.requested = None
                self._complete(requested)
        if self.barrier is not None and inbox_empty:
            return self._save_step()
        return None

    def _no_active_input(self) -> bool:
        return len(self.tasklet._done_edges) >= self.inputs  # noqa: SLF001 - the owner's state

    def _restore_step(self) -> bool:
        t, inbox = self.tasklet, self.restore_inbox
        processor = t.processor
        if inbox:
            before = len(inbox)
            t.outbox.reset()
            t.outbox.call = "restore_from_snapshot(inbox)"
            try:
                processor.restore_from_snapshot(inbox)
            except ProcessorContractError as exc:
                if "does not override" not in str(exc):
                    raise
                raise ProcessorContractError(
                    f"{t.owner} received {before} snapshot entries on restore, but class "
                    f"{type(processor).__module__}.{type(processor).__qualname__} does not override "
                    "restore_from_snapshot(inbox): implement it (AbstractProcessor: restore_from_snapshot_entry"
                    "(key, value)), or do not save state in save_to_snapshot"
                ) from exc
            return len(inbox) < before or t._emitted()  # noqa: SLF001
        if t._call("finish_snapshot_restore()", processor.finish_snapshot_restore):  # noqa: SLF001
            self.restoring, self.restore_inbox = False, None
            return True
        return t._emitted()  # noqa: SLF001

    def _finish_step(self) -> bool:
        t = self.tasklet
        snapshot_id, success = self.finishes[0]
        if snapshot_id not in self.prepared:
            self.finishes.popleft()
            return False
        done = t._call(f"snapshot_commit_finish({success})", t.processor.snapshot_commit_finish, success)  # noqa: SLF001
        if t._emitted():  # noqa: SLF001
            raise ProcessorContractError(f"{t.owner}: snapshot_commit_finish({success}) emitted items; it must not "
                                         "emit (it may run between any two calls, also after complete())")
        if done:
            self.finishes.popleft()
            self.prepared.discard(snapshot_id)
        return done

    def _save_step(self) -> bool:
        t = self.tasklet
        outbox, processor = t.outbox, t.processor
        if self.phase == "save":
            done = t._call("save_to_snapshot()", processor.save_to_snapshot)  # noqa: SLF001
            saved = outbox.drain_snapshot()
            self.entries.extend(saved)
            if done:
                if self.commit:
                    self.phase = "prepare"
                else:
                    self._saved()
            return done or bool(saved) or t._emitted()  # noqa: SLF001
        done = t._call("snapshot_commit_prepare()", processor.snapshot_commit_prepare)  # noqa: SLF001
        self.entries.extend(outbox.drain_snapshot())
        if done:
            self.prepared.add(self.barrier.snapshot_id)
            self._saved()
        return True

    def _saved(self) -> None:
        barrier = self.barrier
        self.snapshots.append((barrier.snapshot_id, self.entries))
        self.barriers.append(barrier)
        self.entries, self.barrier, self.last_id = [], None, barrier.snapshot_id
