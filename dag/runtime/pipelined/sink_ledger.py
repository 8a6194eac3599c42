"""Exactly-once publication of the driver-side sinks (``write_list_p``/``write_map_p``) of a PIPELINED job.

In an ``EXACTLY_ONCE`` job the sink processors still send their items to the driver as they come, but the
driver keeps them *staged* in a :class:`SinkLedger` instead of storing them in the named collection:

- ``stage(sink, items)``: items of one sink processor (``sink`` = ``(vertex, global index)``) join its *open*
  batch, in arrival order (one processor's messages arrive in order on its connection);
- ``seal(sink, snapshot_id)``: the processor met the barrier of ``snapshot_id`` (its ``snapshot_commit_prepare``
  sends this after the items before the barrier): the open batch becomes the batch of that snapshot;
- ``publish_through(snapshot_id)``: the coordinator saw ``snapshot_id`` complete: every batch sealed with an id
  ``<= snapshot_id`` goes to the collection, sealed-id order, then sink order (each exactly once);
- ``rollback(restored_id)``: the job restarts from snapshot ``restored_id`` (``None``: from scratch): batches
  sealed with ids ``<= restored_id`` are published (their snapshot is complete), everything later or still open is
  dropped, because the restarted sources replay it;
- ``publish_all()``: a bounded job completed: what remains is published (api-contract: "when a bounded job
  completes, two-phase-commit sinks publish what remains"); ``discard()``: the job failed or was cancelled.

Thread-safe (channel handlers and the coordinator call it from different threads).

>>> out = []
>>> ledger = SinkLedger(lambda kind, name, items: out.extend(items))
>>> sink = ("sink", 0)
>>> ledger.stage(sink, ("list", "results"), [1, 2]); ledger.seal(sink, 0); ledger.stage(sink, ("list", "results"), [3])
>>> ledger.publish_through(0), out
(2, [1, 2])
>>> ledger.rollback(0); ledger.publish_all(), out  # 3 came after snapshot 0: dropped, the source replays it
(0, [1, 2])
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["SinkLedger"]


class SinkLedger:
    """Staged items of the driver-side sinks of one job (see the module docstring).

    ``publish(kind, name, items)`` stores items into the engine's collection ``(kind, name)`` (``"list"`` or
    ``"map"``; a map takes ``(key, value)`` entries).
    """

    def __init__(self, publish: Callable[[str, str, list], None]):
        self._publish = publish
        self._lock = threading.Lock()
        self._open: dict[Hashable, list[tuple[tuple[str, str], list]]] = {}
        self._sealed: dict[int, dict[Hashable, list[tuple[tuple[str, str], list]]]] = {}

    def stage(self, sink: Hashable, collection: tuple[str, str], items: list) -> None:
        """Add ``items`` (bound for ``collection``) to the open batch of ``sink``."""
        if items:
            with self._lock:
                self._open.setdefault(sink, []).append((collection, list(items)))

    def seal(self, sink: Hashable, snapshot_id: int) -> None:
        """The open batch of ``sink`` belongs to ``snapshot_id`` (the sink passed that barrier)."""
        with self._lock:
            batch = self._open.pop(sink, None)
            if batch:
                self._sealed.setdefault(snapshot_id, {}).setdefault(sink, []).extend(batch)

    def publish_through(self, snapshot_id: int) -> int:
        """Publish every batch sealed with an id ``<= snapshot_id``; returns the number of items published."""
        with self._lock:
            ready = sorted(i for i in self._sealed if i <= snapshot_id)
            batches = [self._sealed.pop(i) for i in ready]
        return self._emit(batches)

    def rollback(self, restored_id: int | None) -> None:
        """Restart from ``restored_id``: publish what it covers, drop everything after it."""
        if restored_id is not None:
            self.publish_through(restored_id)
        with self._lock:
            self._sealed.clear()
            self._open.clear()

    def publish_all(self) -> int:
        """The job completed: publish every sealed batch, then every open one."""
        with self._lock:
            batches = [self._sealed.pop(i) for i in sorted(self._sealed)]
            batches.append(self._open)
            self._open = {}
        return self._emit(batches)

    def discard(self) -> None:
        """The job failed or was cancelled: drop everything staged."""
        with self._lock:
            self._sealed.clear()
            self._open.clear()

    def pending(self) -> int:
        """How many items are staged (sealed or open)."""
        with self._lock:
            groups = [*self._sealed.values(), self._open]
            return sum(len(items) for group in groups for batch in group.values() for _c, items in batch)

    def _emit(self, batches: list[dict[Any, list]]) -> int:
        count = 0
        for group in batches:
            for sink in sorted(group, key=repr):
                for (kind, name), items in group[sink]:
                    self._publish(kind, name, items)
                    count += len(items)
        return count
