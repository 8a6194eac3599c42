"""Bounded queues between processors and the inbound side of an edge (pure Python).

Every (sender processor, receiver processor, inbound ordinal) pair of an edge has one :class:`Queue`: a
``deque`` of *entries*, each a list of items, a :class:`~processors.api.watermark.Watermark`, a snapshot barrier
or the end-of-stream mark :data:`DONE` (emitted by the tasklet, defined in ``processors/execution/lifecycle.py``).
A queue is bounded by :data:`QUEUE_ENTRIES` entries (each list at most the edge's queue size, since an outbox
bucket never holds more); a sender whose target queue is full keeps the entry pending and retries, and does not
step its processor meanwhile: back-pressure from the slowest consumer to the source.
``deque.append``/``popleft``/``len`` are atomic in CPython, so a queue is safe between one producer thread
(the sender's scheduler, which also delivers what the task's links receive, or a non-cooperative sender's
thread) and one consumer thread.

:class:`InboundEdge` drains the queues of one inbound edge of a processor into its tasklet in turn, one entry
per queue per round, coalescing the queues' watermarks (Jet's queue level, ``jet-streaming.md`` 7.1): a
coalesced watermark ends the round, so the items that preceded it are processed first. The consecutive lists
at a queue's head count as one entry, joined up to :data:`JOIN_ITEMS` items: a producer in the consumer's
thread emits one small list per round, and with one list taken per round the backlog of one slow round stayed
for good (every item waited the queue's four rounds more; bench/README, session 14, "A local queue that never drained").
Snapshot barriers (``barriers_aligned`` not None) are aligned over the queues the same way
(``processors/execution/barrier.py``): the edge hands a barrier to the tasklet once every open queue delivered it;
aligned, a queue that delivered it is not drained meanwhile.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from processors.execution.barrier import BarrierAligner, SnapshotBarrier
from processors.execution.coalescer import WatermarkCoalescer
from processors.execution.lifecycle import DONE
from processors.api.watermark import Watermark

__all__ = ["QUEUE_ENTRIES", "JOIN_ITEMS", "Queue", "InboundEdge"]

QUEUE_ENTRIES = 4
"""Entries (lists of up to the edge's queue size items, watermarks, DONE) a queue holds before refusing."""
JOIN_ITEMS = 1024
"""Items up to which consecutive lists of one queue are joined into one entry: by the receiving processor's
:class:`InboundEdge`, and by both sides of a link (``links.py``)."""


class Queue:
    """One bounded queue (see the module docstring); ``wake`` is set whenever an entry arrives."""

    __slots__ = ("entries", "wake")

    def __init__(self, wake: threading.Event):
        self.entries: deque = deque()
        self.wake = wake

    def offer(self, entry: Any) -> bool:
        """Append ``entry`` unless the queue is full (DONE and watermarks are always taken: they are small)."""
        entries = self.entries
        if len(entries) >= QUEUE_ENTRIES and entry.__class__ is list:
            return False
        entries.append(entry)
        self.wake.set()
        return True

    def has_room(self) -> bool:
        return len(self.entries) < QUEUE_ENTRIES


class InboundEdge:
    """The queues of one inbound edge of a processor, one per sender, and their watermark coalescer."""

    __slots__ = ("ordinal", "queues", "open", "coalescer", "turn", "barriers")

    def __init__(self, ordinal: int, queues: list[Queue], max_watermark_retain_ms: int | None,
                 barriers_aligned: bool | None = None):
        self.ordinal = ordinal
        self.queues = queues
        self.open = list(range(len(queues)))
        self.coalescer = WatermarkCoalescer(len(queues), max_watermark_retain_ms)
        self.turn = 0
        self.barriers = None if barriers_aligned is None else BarrierAligner(len(queues), aligned=barriers_aligned)

    @property
    def done(self) -> bool:
        return not self.open

    def drain_into(self, tasklet: Any) -> bool:
        """Move at most one entry of each open queue into ``tasklet``; True if anything moved. Tells the tasklet
        when the edge is done."""
        coalescer, ordinal = self.coalescer, self.ordinal
        n = len(self.open)
        if not n:  # no sender at all (e.g. all-to-one elsewhere), or every sender is done
            tasklet.edge_done(ordinal)
            return False
        moved = False
        start = self.turn % n if n else 0
        self.turn += 1
        finished = []
        barriers = self.barriers
        for k in range(n):
            i = self.open[(start + k) % n]
            entries = self.queues[i].entries
            if not entries or (barriers is not None and barriers.blocked(i)):
                continue
            entry = entries.popleft()
            moved = True
            if entry.__class__ is list:
                if entries and entries[0].__class__ is list:
                    entry = _join_following(entry, entries)
                tasklet.add_batch(ordinal, entry)
                coalescer.observe_event(i)
                continue
            if entry.__class__ is SnapshotBarrier:
                if barriers.on_barrier(i, entry):  # type: ignore[union-attr]
                    tasklet.add_barrier(ordinal, entry)
                    break
                continue
            if entry is DONE:
                finished.append(i)
                wm = coalescer.queue_done(i)
                if barriers is not None:
                    pending = barriers.pending
                    if barriers.on_done(i):
                        tasklet.add_barrier(ordinal, pending)
            elif isinstance(entry, Watermark):
                wm = coalescer.observe_wm(i, entry.timestamp)
            else:
                raise TypeError(f"unexpected entry in a queue: {entry!r:.100}")
            if wm is not None:
                tasklet.add_watermark(ordinal, wm)
                break
        for i in finished:
            self.open.remove(i)
        if not self.open:
            tasklet.edge_done(ordinal)
        elif not moved:
            wm = coalescer.check_history()
            if wm is not None:
                tasklet.add_watermark(ordinal, wm)
                moved = True
        return moved


def _join_following(first: list, entries: deque) -> list:
    """``first`` and the lists that follow it at the head of ``entries`` (taken from it), joined into a new list
    of up to :data:`JOIN_ITEMS` items; a watermark, barrier or ``DONE`` ends the join.

    >>> rest = deque([[2, 3], [4], Watermark(9), [5]])
    >>> _join_following([1], rest), list(rest)
    ([1, 2, 3, 4], [Watermark(9), [5]])
    """
    joined, size = None, len(first)
    while entries:
        following = entries[0]
        if following.__class__ is not list or size + len(following) > JOIN_ITEMS:
            break
        entries.popleft()
        size += len(following)
        if joined is None:
            joined = first + following  # a new list: an entry may be offered to several queues
        else:
            joined.extend(following)
    return first if joined is None else joined
