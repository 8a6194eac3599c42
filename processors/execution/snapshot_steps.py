"""The snapshot bookkeeping of one processor (engine-free): what a
:class:`~processors.execution.tasklet.ProcessorTasklet` whose job takes snapshots must remember between its steps.

The steps themselves (restore, save, commit-prepare, emitting the barrier, phase 2) are states of the tasklet's
one state machine (``RESTORE_FROM_SNAPSHOT`` ... ``ON_SNAPSHOT_COMPLETED``, see :mod:`processors.execution.tasklet`).
This module only keeps the data those states read and write (``jet-streaming.md`` 8.3, 8.4, 8.6):

- ``restore_inbox``: the processor's routed entries of the snapshot the job restarted from (``None``: no
  restore); the tasklet moves to ``RESTORE_FROM_SNAPSHOT`` right after ``init`` when it is set.
- ``barrier``: the barrier whose save is due. It is set when barrier ``n`` arrived on every active inbound edge
  (the :class:`~processors.execution.barrier.BarrierAligner`), when the coordinator ``requested`` it for a processor
  without active input (a source), or when ``verify_processor`` asked for a save (:meth:`save_now`). The tasklet
  starts ``SAVE_SNAPSHOT`` once the inbox is empty.
- ``entries``: what the save being made collected so far; ``saved``: ``(snapshot_id, entries)`` of every save
  completed (``entries`` is ``None`` for a processor that had already finished), taken by the runtime.
- ``prepared`` and ``finishes``: the snapshots this processor prepared (``snapshot_commit_prepare``) and the
  phase-2 messages ``(snapshot_id, success)`` waiting for ``snapshot_commit_finish``.

With aligned barriers (exactly-once) the runtime stops draining the edges that already delivered the barrier
(:meth:`~processors.execution.barrier.BarrierAligner.blocked`).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from jetspark_base.errors import ProcessorContractError
from processors.execution.barrier import BarrierAligner, SnapshotBarrier
from processors.api.inbox import Inbox

__all__ = ["TaskletSnapshots", "SNAPSHOT_BUCKET", "restore_not_implemented_error"]

SNAPSHOT_BUCKET = 1024
"""Entries the outbox's snapshot bucket holds before ``offer_to_snapshot`` refuses (drained after every call)."""


class TaskletSnapshots:
    """The snapshot state one tasklet keeps between steps (see the module docstring)."""

    __slots__ = ("aligner", "restore_inbox", "finishes", "prepared", "barrier", "entries", "saved", "requested",
                 "last_id", "inputs", "done_inputs")

    def __init__(self, inbound_ordinals: list[int], *, aligned: bool, owner: str):
        self.inputs = len(inbound_ordinals)
        self.done_inputs = 0
        self.aligner = BarrierAligner(max(inbound_ordinals, default=-1) + 1, aligned=aligned, owner=owner)
        self.restore_inbox: Inbox | None = None
        self.finishes: deque[tuple[int, bool]] = deque()
        self.prepared: set[int] = set()
        self.barrier: SnapshotBarrier | None = None
        self.entries: list = []
        self.saved: list[tuple[int, list | None]] = []
        self.requested: SnapshotBarrier | None = None
        self.last_id = -1

    def add_barrier(self, ordinal: int, barrier: SnapshotBarrier) -> None:
        """Inbound edge ``ordinal`` delivered ``barrier`` (coalesced over its queues)."""
        if self.aligner.on_barrier(ordinal, barrier):
            self.barrier = barrier

    def edge_done(self, ordinal: int) -> None:
        """Inbound edge ``ordinal`` ended (called once per edge): it no longer holds up a barrier."""
        self.done_inputs += 1
        pending = self.aligner.pending
        if self.aligner.on_done(ordinal):
            self.barrier = pending

    def no_active_input(self) -> bool:
        """True when every inbound edge ended (or there is none): a requested snapshot applies."""
        return self.done_inputs >= self.inputs

    def save_now(self, barrier: SnapshotBarrier) -> None:
        """Save as soon as the inbox is empty, whatever the inbound edges (``verify_processor``'s snapshot points)."""
        self.barrier = barrier

    def take_saved(self) -> list[tuple[int, list | None]]:
        """``(snapshot_id, entries)`` of every save completed since the last call."""
        done, self.saved = self.saved, []
        return done


def restore_not_implemented_error(owner: str, processor: Any, count: int) -> ProcessorContractError:
    """The error for a processor given ``count`` snapshot entries that kept the default ``restore_from_snapshot``."""
    cls = type(processor)
    return ProcessorContractError(
        f"{owner} received {count} snapshot entries on restore, but class {cls.__module__}.{cls.__qualname__} "
        "does not override restore_from_snapshot(inbox): implement it (AbstractProcessor: "
        "restore_from_snapshot_entry(key, value)), or do not save state in save_to_snapshot"
    )
