"""The task side of snapshots in a pipelined job: restore routing, writing saved state, reporting, and the
driver's instructions as the status poll brings them (pure Python).

- :class:`SnapshotSpec` (in the :class:`~dag.runtime.pipelined.worker.WorkerSpec`): alignment (exactly-once),
  the store's directory and job key, and for a restart the snapshot to restore, one
  :class:`~dag.runtime.pipelined.snapshot_routing.RestoreRouter` per vertex and the processors that had completed.
- :class:`TaskSnapshots`: per task. ``entries_for(vertex, g, total)`` reads the vertex's saved entries once and
  routes them over the vertex's current processors (``snapshot_routing``), so parallelism and member count may
  differ from the run that saved them; ``on_snapshot`` writes one processor's entries to the store (durable
  when it returns) and then reports to the coordinator (``SNAPSHOT_TOPIC``; ``done`` for a completed
  processor, which saves nothing); ``instructions(reply)`` turns the status reply's ``snapshot`` (the id in
  progress) and ``finish`` (``[[id, success], ...]``) into control messages not applied before.
- :class:`StampedClient`: the driver client of the task's processors, stamping every message with the
  execution number.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from dag.runtime.pipelined.snapshot_store import SnapshotStore

__all__ = ["SnapshotSpec", "TaskSnapshots", "StampedClient", "SNAPSHOT_TOPIC"]

SNAPSHOT_TOPIC = "jetspark.snapshot"


@dataclass
class SnapshotSpec:
    """What a task needs to take part in snapshots (pickled into the stage closure)."""

    aligned: bool                       # EXACTLY_ONCE: barriers are aligned
    directory: str
    job_key: str
    restore_id: int | None = None       # the snapshot to restore, None for a fresh start
    routers: dict[str, Any] = field(default_factory=dict)   # vertex -> RestoreRouter
    done: dict[str, list[int]] = field(default_factory=dict)  # vertex -> processors restored as completed


class StampedClient:
    """The task's driver client as its processors see it (``context.driver``) in a job that may restart: every
    dict body gets the execution number (``attempt``), so the driver can ignore what a task of a failed
    execution still sends (e.g. a driver-side sink's staged items)."""

    def __init__(self, client: Any, attempt: int):
        self._client, self.attempt = client, attempt

    def _stamp(self, body: Any) -> Any:
        return {**body, "attempt": self.attempt} if isinstance(body, dict) else body

    def send(self, topic: str, body: Any, **kw: Any) -> None:
        self._client.send(topic, self._stamp(body), **kw)

    def request(self, topic: str, body: Any, **kw: Any) -> Any:
        return self._client.request(topic, self._stamp(body), **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class TaskSnapshots:
    """The snapshot side of one task (see the module docstring)."""

    def __init__(self, spec: SnapshotSpec, secret: bytes, driver: Any):
        self.spec = spec
        self.store = SnapshotStore(spec.directory, spec.job_key, secret=secret)
        self.driver = driver
        self._routed: dict[str, list[list]] = {}
        self._lock = threading.Lock()
        self._requested = -1
        self._finished = -1

    # ------------------------------------------------------------------ restore
    def is_done(self, vertex: str, g: int) -> bool:
        """The processor had completed when the restored snapshot was taken (it is not run again)."""
        return g in self.spec.done.get(vertex, ())

    def entries_for(self, vertex: str, g: int, total: int) -> list | None:
        """The restored entries of processor ``g`` of ``vertex`` (None when the job does not restore)."""
        sid = self.spec.restore_id
        if sid is None:
            return None
        with self._lock:
            routed = self._routed.get(vertex)
            if routed is None:
                router = self.spec.routers[vertex]
                routed = self._routed[vertex] = router.route(self.store.read(sid, vertex), total)
        return routed[g]

    # ------------------------------------------------------------------ saving
    def on_snapshot(self, vertex: str, g: int, snapshot_id: int, entries: list | None) -> None:
        """Store ``entries`` (None: the processor had completed) and report to the coordinator."""
        if entries is not None:
            self.store.write(snapshot_id, vertex, g, entries)
        self.driver.request(SNAPSHOT_TOPIC, {"snapshot_id": snapshot_id, "vertex": vertex, "g": g,
                                             "done": entries is None})

    # ------------------------------------------------------------------ driver instructions
    def instructions(self, reply: dict) -> list[tuple]:
        """Control messages from a status reply that were not applied yet, in order."""
        out: list[tuple] = []
        for snapshot_id, success in reply.get("finish", ()):
            if snapshot_id > self._finished:
                self._finished = snapshot_id
                out.append(("finish", snapshot_id, bool(success)))
        requested = reply.get("snapshot")
        if requested is not None and requested > self._requested:
            self._requested = requested
            out.append(("snapshot", requested))
        return out
