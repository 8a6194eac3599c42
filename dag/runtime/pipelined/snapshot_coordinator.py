"""The coordinator's snapshot and restart bookkeeping for one PIPELINED job (pure; no Spark, no sockets).

:class:`SnapshotCoordinator` (Jet's ``MasterContext`` snapshot part, ``jet-streaming.md`` 8.2):

- ids ``0, 1, 2, ...``, one per *started* snapshot (a failed one consumes its id); the counter survives restarts;
- :meth:`~SnapshotCoordinator.start` begins snapshot ``n`` when none is in progress and the interval since the
  last completion (or the job's start) has passed (Jet's fixed delay); the runtime then has the sources
  emit barrier ``n``;
- every processor reports once it saved its state to the store (:meth:`~SnapshotCoordinator.report`), or
  that it had completed (:meth:`~SnapshotCoordinator.report_done`); when all processors of all vertices
  reported, :meth:`~SnapshotCoordinator.complete_if_ready` writes the completion marker (the snapshot is now
  the one a restart uses), deletes older snapshots, publishes the driver-side sinks' items it covers, records
  its size and duration (``last_stats``, a ``metrics.SnapshotStats``) and returns the id so the runtime sends
  phase 2 (``snapshot_commit_finish(True)``) to every processor;
- a failure while a snapshot is in progress (:meth:`~SnapshotCoordinator.fail`) discards it; phase 2 then says
  ``success=False``;
- :meth:`~SnapshotCoordinator.prepare_restart` (before each new execution): discards incomplete snapshots,
  rolls the sink ledger back to the latest complete snapshot and returns its id (``None``: start from scratch).

:class:`RestartPolicy` decides whether a failure restarts the job (Jet: a ``RestartableException`` or a
topology change; here a ``RestartableError`` or an infrastructure failure, i.e. one that no processor raised:
a lost Spark task, Python worker or executor, a broken link between tasks) and stops after
``JobConfig.max_restarts`` restarts in a row (a snapshot completing after a restart resets the count).

>>> import tempfile
>>> from dag.runtime.pipelined.snapshot_store import SnapshotStore
>>> store = SnapshotStore(tempfile.mkdtemp(), "job-1", secret=b"k")
>>> coord = SnapshotCoordinator(store, {"src": 1, "sink": 1}, interval_ms=0); coord.execution_started(now=0.0)
>>> sid = coord.start(now=0.0); store.write(sid, "src", 0, [("offset", 10)]); coord.report(sid, "src", 0)
>>> coord.complete_if_ready() is None  # the sink has not reported yet
True
>>> coord.report_done(sid, "sink", 0); coord.complete_if_ready(), store.latest_complete()
(0, 0)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from dag.runtime.common.metrics import SnapshotStats

__all__ = ["SnapshotCoordinator", "RestartPolicy", "completed_on_restore", "is_restartable"]

_log = logging.getLogger("jetspark.snapshots")


class SnapshotCoordinator:
    """Snapshot ids, reports and completion of one job (see the module docstring).

    ``processors``: vertex name -> processor count (every vertex whose processors take part); ``ledger``: the
    job's :class:`~dag.runtime.pipelined.sink_ledger.SinkLedger` or None; ``interval_ms``:
    ``JobConfig.snapshot_interval_ms``.
    """

    def __init__(self, store: Any, processors: Mapping[str, int], *, interval_ms: int, ledger: Any = None):
        self.store, self.ledger = store, ledger
        self.processors = dict(processors)
        self.interval = interval_ms / 1000.0
        self.next_id = 0
        self.in_progress: int | None = None
        self.last_complete: int | None = None
        self.last_stats: SnapshotStats | None = None  # of last_complete
        self._ready_at: float | None = None
        self._reported: set[tuple[str, int]] = set()
        self._done: dict[str, set[int]] = {}
        self._finished: set[tuple[str, int]] = set()  # processors whose task ended: done for every snapshot
        self.started_at: float | None = None
        self._asap = False  # request_now() while a snapshot was in progress: the next one starts at once
        self._lock = threading.Lock()

    def execution_started(self, now: float) -> None:
        """A (re)started execution is running: the next snapshot is due one interval from ``now``."""
        with self._lock:
            self._ready_at = now + self.interval

    def request_now(self) -> int:
        """Make the next snapshot due at once; returns the id it will get (the one in progress counts if any:
        then the one after it, so that the state is taken after this call)."""
        with self._lock:
            self._asap = True
            if self._ready_at is not None:
                self._ready_at = 0.0
            return self.next_id

    def start(self, now: float) -> int | None:
        """Begin the next snapshot if one is due; returns its id (or None)."""
        with self._lock:
            if self.in_progress is not None or self._ready_at is None or now < self._ready_at:
                return None
            self.in_progress, self.next_id = self.next_id, self.next_id + 1
            self.started_at, self._asap = now, False
            self._reported = set(self._finished)
            self._done = {}
            for vertex, index in self._finished:
                self._done.setdefault(vertex, set()).add(index)
            return self.in_progress

    def report(self, snapshot_id: int, vertex: str, index: int) -> None:
        """Processor ``vertex#index`` wrote its state for ``snapshot_id`` to the store."""
        with self._lock:
            if snapshot_id == self.in_progress:
                self._reported.add((vertex, index))

    def report_done(self, snapshot_id: int, vertex: str, index: int) -> None:
        """Processor ``vertex#index`` had completed: it takes part in ``snapshot_id`` with nothing saved."""
        with self._lock:
            if snapshot_id == self.in_progress:
                self._reported.add((vertex, index))
                self._done.setdefault(vertex, set()).add(index)

    def finished(self, processors: list[tuple[str, int]]) -> None:
        """These processors' task ended (they completed): they count as done in this and every later snapshot
        of the execution (``prepare_restart`` forgets them)."""
        with self._lock:
            for vertex, index in processors:
                if vertex in self.processors:
                    self._finished.add((vertex, index))
                    if self.in_progress is not None:
                        self._reported.add((vertex, index))
                        self._done.setdefault(vertex, set()).add(index)

    def missing(self) -> list[str]:
        """The processors that have not reported for the snapshot in progress (for logs and timeouts)."""
        with self._lock:
            return [f"{v}#{i}" for v, n in self.processors.items() for i in range(n) if (v, i) not in self._reported]

    def complete_if_ready(self, now: float = 0.0) -> int | None:
        """Mark the snapshot in progress complete when every processor reported; returns its id or None."""
        with self._lock:
            sid = self.in_progress
            if sid is None or len(self._reported) < sum(self.processors.values()):
                return None
            done = {vertex: sorted(indices) for vertex, indices in self._done.items()}
        self.store.mark_complete(sid, self.processors, done=done)
        self.store.prune(sid)
        if self.ledger is not None:
            self.ledger.publish_through(sid)
        stats = SnapshotStats(sid, self.store.size_bytes(sid), max(0.0, now - (self.started_at or now)), time.time())
        with self._lock:
            self.in_progress, self.last_complete, self.last_stats = None, sid, stats
            self._ready_at = now if self._asap else now + self.interval
        _log.debug("snapshot %d complete", sid)
        return sid

    def fail(self, reason: str, now: float = 0.0) -> int | None:
        """Abandon the snapshot in progress (Jet only logs it); returns its id or None."""
        with self._lock:
            sid, self.in_progress = self.in_progress, None
            self._ready_at = now + self.interval
        if sid is not None:
            _log.warning("snapshot %d failed: %s", sid, reason)
            self.store.discard(sid)
        return sid

    def prepare_restart(self) -> int | None:
        """Before a new execution: drop incomplete snapshots and staged sink items after the latest complete
        snapshot; returns that snapshot's id (None: no snapshot, start from scratch)."""
        with self._lock:
            self.in_progress, self._ready_at = None, None
            self._finished = set()
        self.store.discard_incomplete()
        latest = self.store.latest_complete()
        if self.ledger is not None:
            self.ledger.rollback(latest)
        return latest


class RestartPolicy:
    """Counts restarts in a row; ``max_restarts`` is ``JobConfig.max_restarts``."""

    def __init__(self, max_restarts: int):
        self.max_restarts = max_restarts
        self.in_a_row = 0
        self.total = 0

    def should_restart(self, failure: Mapping[str, Any] | None, snapshots_enabled: bool) -> bool:
        """True to restart after ``failure`` (see :func:`is_restartable`); counts the restart."""
        if not snapshots_enabled or not is_restartable(failure) or self.in_a_row >= self.max_restarts:
            return False
        self.in_a_row += 1
        self.total += 1
        return True

    def snapshot_completed(self) -> None:
        """Progress after a restart: the count of restarts in a row starts again."""
        self.in_a_row = 0


def completed_on_restore(saved: Mapping[str, int], done: Mapping[str, Iterable[int]],
                         current: Mapping[str, int]) -> dict[str, list[int]]:
    """Which processors a restart from a snapshot treats as completed (they emit DONE and do not run again).

    ``saved``: vertex -> processor count when the snapshot was taken; ``done``: vertex -> the indices that had
    completed then; ``current``: vertex -> processor count now. A completed processor saved nothing (as in Jet),
    so only its completion can be restored: under the same processor count the same indices stay completed,
    and a vertex whose every processor had completed stays completed under any count. Otherwise (some had
    completed and the count changed) they run again, as every completed processor does in Jet: what they had
    done cannot be given to the new processors. That case is logged.

    >>> completed_on_restore({"src": 2}, {"src": [1]}, {"src": 2})
    {'src': [1]}
    >>> completed_on_restore({"src": 2}, {"src": [0, 1]}, {"src": 3})
    {'src': [0, 1, 2]}
    >>> completed_on_restore({"src": 2}, {"src": [1]}, {"src": 3})
    {}
    """
    out: dict[str, list[int]] = {}
    for vertex, indices in done.items():
        indices = sorted(set(indices))
        before, now = saved.get(vertex), current.get(vertex)
        if not indices or now is None:
            continue
        if before == now:
            out[vertex] = indices
        elif len(indices) == before:
            out[vertex] = list(range(now))
        else:
            _log.warning("vertex '%s': %d of its %s processors had completed when the snapshot was taken; it now has "
                         "%d processors, so they all run again (a completed processor saved no state to hand over)",
                         vertex, len(indices), before, now)
    return out


def is_restartable(failure: Mapping[str, Any] | None) -> bool:
    """Whether a failure restarts the job: a ``RestartableError`` raised by a processor, or an infrastructure
    failure (``failure`` is None, or names no processor but a task, ``<task 1>``, or is marked ``"restartable"``:
    a lost, dead or frozen task or worker, a broken link; ``failures.mark_infrastructure``).

    >>> is_restartable({"exc_type": "RestartableError", "vertex": "src"}), is_restartable(None)
    (True, True)
    >>> is_restartable({"exc_type": "ValueError", "vertex": "map"})
    False
    """
    if failure is None:
        return True
    if failure.get("exc_type") == "RestartableError" or failure.get("restartable"):
        return True
    vertex = failure.get("vertex")
    return vertex is None or str(vertex).startswith("<task ")  # a task's own failure (a link), not a processor's
