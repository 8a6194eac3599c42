"""Job metrics: Jet's ``receivedCount``/``emittedCount`` per processor and ordinal, gathered with one Spark
accumulator per job.

Each task adds one small dict ``{(vertex, processor_index, metric, ordinal): count}`` when it ends (never per
item). :class:`JobMetrics` is the driver-side view.

Notes on what is counted: a vertex whose processors were replaced by the planner (a receiver combining
pre-aggregated accumulators) counts the entries it received; an accumulate vertex absorbed into its sender's
task (``fuse_accumulate``) reports its counts under the sender's processor indices; a driver-side sink counts
everything under processor 0. A task that Spark re-runs counts again.

A pipelined job also reports ``lastForwardedWm`` (Jet's metric name): per processor and outbound ordinal the
timestamp of the last watermark it sent (a value, not a count: :meth:`JobMetrics.watermark` takes the lowest
over a vertex's processors; ``total`` means nothing for it), and per processor and inbound ordinal Jet's
``queuesSize`` (entries waiting in the inbound queues of that edge; an entry is a batch of up to the edge's
queue size items, a watermark or a barrier) and ``queuesCapacity`` (entries those queues hold at most):
:meth:`JobMetrics.queue_fill` sums them per vertex. The web page and ``/metrics`` (``dag/runtime/webui``)
show all of these, plus :class:`SnapshotStats` and the :class:`RestartRecord` list of a job with snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MetricsParam", "JobMetrics", "SnapshotStats", "RestartRecord", "RECEIVED", "EMITTED",
           "LAST_FORWARDED_WM", "QUEUES_SIZE", "QUEUES_CAPACITY"]

RECEIVED = "receivedCount"
EMITTED = "emittedCount"
LAST_FORWARDED_WM = "lastForwardedWm"
QUEUES_SIZE = "queuesSize"
QUEUES_CAPACITY = "queuesCapacity"


@dataclass(frozen=True)
class SnapshotStats:
    """The latest complete snapshot of a PIPELINED job: its id, the bytes its files take in the snapshot
    directory, how long it took from its start to its completion (seconds) and when it completed (seconds
    since the epoch)."""

    id: int
    size_bytes: int
    duration_seconds: float
    completed_at: float


@dataclass(frozen=True)
class RestartRecord:
    """One restart of a PIPELINED job: when it happened (seconds since the epoch), the failure that caused it
    (``exc_type``, ``exc_message`` as the failure record or Spark's error gave them) and the snapshot it
    restarted from (None: from scratch)."""

    time: float
    exc_type: str
    exc_message: str
    from_snapshot: int | None


class MetricsParam:
    """``pyspark.AccumulatorParam`` for dicts of counters (duck-typed so this module imports no pyspark)."""

    def zero(self, value: dict) -> dict:
        return {}

    def addInPlace(self, value1: dict, value2: dict) -> dict:  # noqa: N802 - pyspark's name
        for key, count in value2.items():
            value1[key] = value1.get(key, 0) + count
        return value1


class JobMetrics:
    """Metrics of a job: ``metrics[vertex][processor_index]`` is
    ``{"receivedCount": {ordinal: n}, "emittedCount": {ordinal: n}}``; ``restarts`` counts the restarts of a
    PIPELINED job from its snapshots (the counts above are those of the current execution); ``last_snapshot`` is
    the id of its latest complete snapshot (the one a restart would use), None before the first one completed
    or when the job takes no snapshots.

    >>> m = JobMetrics({("map", 0, "receivedCount", 0): 3, ("map", 1, "receivedCount", 0): 2})
    >>> m.total("map", "receivedCount"), m["map"][1]["receivedCount"]
    (5, {0: 2})
    """

    def __init__(self, counters: dict[tuple[str, int, str, int], int], restarts: int = 0,
                 last_snapshot: int | None = None, snapshot_stats: SnapshotStats | None = None,
                 restart_log: tuple[RestartRecord, ...] = ()):
        self.restarts = restarts  # restarts from a snapshot (PIPELINED jobs with a guarantee other than NONE)
        self.last_snapshot = last_snapshot  # id of the latest complete snapshot (same jobs), None: none yet
        self.snapshot_stats = snapshot_stats  # that snapshot's size and duration (same jobs), None: none yet
        self.restart_log = tuple(restart_log)  # the restarts with their causes, oldest first
        self._data: dict[str, dict[int, dict[str, dict[int, int]]]] = {}
        for (vertex, index, metric, ordinal), count in sorted(counters.items(), key=lambda kv: repr(kv[0])):
            proc = self._data.setdefault(vertex, {}).setdefault(index, {RECEIVED: {}, EMITTED: {}})
            counts = proc.setdefault(metric, {})
            counts[ordinal] = counts.get(ordinal, 0) + count

    def __getitem__(self, vertex: str) -> dict[int, dict[str, dict[int, int]]]:
        return self._data[vertex]

    def __contains__(self, vertex: object) -> bool:
        return vertex in self._data

    @property
    def vertices(self) -> list[str]:
        return list(self._data)

    def total(self, vertex: str, metric: str, ordinal: int | None = None) -> int:
        """The sum of ``metric`` over the vertex's processors (and over ordinals unless one is given)."""
        return sum(n for proc in self._data.get(vertex, {}).values() for o, n in proc[metric].items()
                   if ordinal is None or o == ordinal)

    def watermark(self, vertex: str) -> int | None:
        """The lowest ``lastForwardedWm`` over the vertex's processors that sent one (pipelined jobs), or None.

        >>> JobMetrics({("s", 0, "lastForwardedWm", 0): 50, ("s", 1, "lastForwardedWm", 0): 40}).watermark("s")
        40
        """
        values = [min(p[LAST_FORWARDED_WM].values()) for p in self._data.get(vertex, {}).values()
                  if p.get(LAST_FORWARDED_WM)]
        return min(values) if values else None

    def queue_fill(self, vertex: str) -> tuple[int, int] | None:
        """``(queuesSize, queuesCapacity)`` summed over the vertex's processors and inbound edges (pipelined
        jobs; None when the runtime reported none, e.g. a source or a staged job).

        >>> JobMetrics({("s", 0, "queuesSize", 0): 3, ("s", 0, "queuesCapacity", 0): 8}).queue_fill("s")
        (3, 8)
        """
        procs = [p for p in self._data.get(vertex, {}).values() if QUEUES_CAPACITY in p]
        if not procs:
            return None
        return (sum(sum(p.get(QUEUES_SIZE, {}).values()) for p in procs),
                sum(sum(p[QUEUES_CAPACITY].values()) for p in procs))

    def as_dict(self) -> dict[str, Any]:
        """A plain nested dict (JSON-friendly once keys are strings)."""
        return {v: {i: {m: dict(c) for m, c in p.items()} for i, p in procs.items()} for v, procs in self._data.items()}

    def __repr__(self) -> str:
        return f"JobMetrics({self.as_dict()!r})"
