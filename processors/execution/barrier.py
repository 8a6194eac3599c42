"""Snapshot barriers and their alignment (Chandy-Lamport as Jet does it; ``jet-streaming.md`` 8.3).

A :class:`SnapshotBarrier` travels in the stream like a watermark: the coordinator has the sources emit barrier
``n`` after saving their state; every processor saves its state once barrier ``n`` arrived on all its active
inputs, then forwards it. The same rule applies at two levels, both served by :class:`BarrierAligner`:

- queue level: the queues of one inbound edge (one per sending processor) -> the edge yields the barrier once;
- edge level: the inbound edges of one processor -> the processor saves its state.

*Aligned* (``EXACTLY_ONCE``, or any guarantee for a terminal barrier): an input that delivered barrier ``n``
is **blocked** (not drained) until every active input delivered it, so nothing after the barrier reaches the
processor before its state is saved. *Unaligned* (``AT_LEAST_ONCE``): inputs keep flowing; items after the
barrier may be processed before the save and are replayed after a restart (duplicates, nothing lost).
Inputs that are done do not count (they will deliver nothing more). A barrier with an id other than the one
being aligned is a protocol error (Jet's "Unexpected snapshot barrier ID").

>>> a = BarrierAligner(2, aligned=True)
>>> a.on_barrier(0, SnapshotBarrier(5)), a.blocked(0), a.blocked(1)
(False, True, False)
>>> a.on_barrier(1, SnapshotBarrier(5)), a.blocked(0)  # complete: the barrier goes on, inputs unblock
(True, False)
"""

from __future__ import annotations

from typing import Any

from jetspark_base.errors import DagError

__all__ = ["SnapshotBarrier", "BarrierAligner"]


class SnapshotBarrier:
    """Barrier ``snapshot_id`` in the stream (Jet's ``SnapshotBarrier``); ``is_terminal`` for the snapshot that
    ends an execution (``job.suspend()``/``job.restart()``)."""

    __slots__ = ("snapshot_id", "is_terminal")

    def __init__(self, snapshot_id: int, is_terminal: bool = False):
        self.snapshot_id = snapshot_id
        self.is_terminal = is_terminal

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SnapshotBarrier) and other.snapshot_id == self.snapshot_id
                and other.is_terminal == self.is_terminal)

    def __hash__(self) -> int:
        return hash((self.snapshot_id, self.is_terminal))

    def __repr__(self) -> str:
        return f"SnapshotBarrier({self.snapshot_id}{', terminal' if self.is_terminal else ''})"

    def __reduce__(self):
        return (SnapshotBarrier, (self.snapshot_id, self.is_terminal))


class BarrierAligner:
    """Tracks barrier ``n`` over ``count`` inputs (see the module docstring)."""

    __slots__ = ("count", "aligned", "done", "arrived", "current", "owner")

    def __init__(self, count: int, *, aligned: bool, owner: str = "inputs"):
        self.count = count
        self.aligned = aligned
        self.owner = owner
        self.done: set[int] = set()
        self.arrived: set[int] = set()
        self.current: SnapshotBarrier | None = None

    def on_barrier(self, index: int, barrier: SnapshotBarrier) -> bool:
        """Input ``index`` delivered ``barrier``; True when every active input has delivered it (the barrier is
        complete at this level; the aligner resets for the next one)."""
        current = self.current
        if current is None:
            self.current = current = barrier
        elif barrier.snapshot_id != current.snapshot_id:
            raise _unexpected(self.owner, index, barrier, current)
        elif barrier.is_terminal and not current.is_terminal:
            self.current = current = barrier
        if index in self.arrived:
            raise _unexpected(self.owner, index, barrier, current, twice=True)
        self.arrived.add(index)
        return self._check()

    def on_done(self, index: int) -> bool:
        """Input ``index`` ended; True when that completes a barrier being aligned."""
        self.done.add(index)
        self.arrived.discard(index)
        return self.current is not None and self._check()

    def blocked(self, index: int) -> bool:
        """True when input ``index`` must not be drained now (aligned mode, its barrier arrived, others pending)."""
        current = self.current
        return current is not None and (self.aligned or current.is_terminal) and index in self.arrived

    def _check(self) -> bool:
        if len(self.arrived) + len(self.done) < self.count:
            return False
        self.arrived.clear()
        self.current = None
        return True

    @property
    def pending(self) -> SnapshotBarrier | None:
        """The barrier being aligned, or None."""
        return self.current


def _unexpected(owner: str, index: int, barrier: SnapshotBarrier, current: Any, twice: bool = False) -> DagError:
    if twice:
        return DagError(f"{owner}: input {index} delivered snapshot barrier {barrier.snapshot_id} twice")
    return DagError(f"{owner}: unexpected snapshot barrier ID {barrier.snapshot_id} from input {index}, "
                        f"expected {current.snapshot_id}")
