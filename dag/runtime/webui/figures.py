"""What the web page, ``/metrics`` and a notebook show of a job: one JSON-ready dict per look.

:class:`JobWatch` wraps one :class:`~dag.runtime.job.Job` and answers :meth:`JobWatch.look` from
``job.metrics()`` (live counts of a pipelined job, the finished tasks' counts of a staged one), the job's
status and times, its snapshot statistics and restarts, its processors' last forwarded log records and, for a
staged (batch) job, the progress of its Spark stages.

- **Rates.** Each look adds a sample (time, counts) to a short history, at most one per
  :data:`SAMPLE_SECONDS`, and drops samples once a newer one is :data:`RATE_WINDOW` seconds old; a rate is the
  difference between the newest and the oldest sample kept, over the time between them (the page shows it), so
  several browsers and a scraper looking at once all see the same rates and none of them resets another's. A
  finished job's rates are averages over its whole run (submission to end), and its counts are final: a browser
  polling it gets its final figures, not an error.
- **Watermark lag** of a vertex: wall clock minus the lowest ``lastForwardedWm`` of its processors, when that
  watermark reads as epoch milliseconds (within :data:`PLAUSIBLE_EPOCH_MS` of now); otherwise only the
  watermark itself is shown (event times that are not wall-clock times have no lag).
- **Queue fill**: ``queuesSize`` / ``queuesCapacity`` of the vertex's inbound queues (pipelined jobs).
- **Failures**: a failed job shows its exception's type, vertex and processor, never its message (user data);
  a restart shows its cause's type and message as the restart record has them (``RestartRecord``).
- **The picture**: :meth:`JobWatch.dot` is ``dag.to_dot()`` with ``N items, R/s`` on each edge
  (``drawing.py``, the same as ``jetspark run --measured``); :meth:`JobWatch.svg` draws it, at most once per
  :data:`SAMPLE_SECONDS` per job whatever the number of viewers.

Nothing here changes a job: every method only reads.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from dag.runtime.common.metrics import EMITTED, RECEIVED
from dag.runtime.webui.drawing import count_label, edge_counts, labelled_dot

__all__ = ["JobWatch", "RATE_WINDOW", "SAMPLE_SECONDS", "PLAUSIBLE_EPOCH_MS", "LOG_LINES", "watermark_lag"]

RATE_WINDOW = 5.0
"""Seconds of samples a live rate is computed over."""
SAMPLE_SECONDS = 0.5
"""Looks closer together than this share one sample (and one drawing)."""
PLAUSIBLE_EPOCH_MS = 365 * 24 * 3600 * 1000
"""A watermark within this many milliseconds of the wall clock is taken as an epoch-milliseconds time."""
LOG_LINES = 50
"""How many of the job's latest forwarded log records a look carries."""
IDLE_WATERMARK = 2**63 - 1  # Jet's IDLE_MESSAGE watermark: a source with nothing to say, not a time


def watermark_lag(watermark: int | None, now: float) -> float | None:
    """Seconds from ``watermark`` (epoch ms) to ``now`` (epoch s), or None when ``watermark`` is not a plausible
    epoch-milliseconds time.

    >>> watermark_lag(1_700_000_000_000, 1_700_000_002.5)
    2.5
    >>> watermark_lag(42, 1_700_000_000.0) is None
    True
    """
    if watermark is None or watermark == IDLE_WATERMARK or abs(now * 1000 - watermark) > PLAUSIBLE_EPOCH_MS:
        return None
    return now - watermark / 1000


class JobWatch:
    """The read-only view of one job (see the module docstring)."""

    def __init__(self, job: Any):
        self.job = job
        self._samples: deque[tuple[float, dict[str, tuple[int, int]], list[int]]] = deque()
        self._lock = threading.Lock()
        self._svg: tuple[float, bool, str] | None = None  # (when, of the finished job, svg)

    # ------------------------------------------------------------------ counts and rates
    def _rates(self, now: float, terminal: bool, vertices: dict, edges: list[int]
               ) -> tuple[dict[str, tuple], list, float | None]:
        """Per vertex (received/s, emitted/s), per edge items/s and the window they cover (None: no rate yet)."""
        job = self.job
        if terminal:
            seconds = max((job.completion_time or now) - job.submission_time, 1e-3)
            return ({v: (r / seconds, e / seconds) for v, (r, e) in vertices.items()},
                    [n / seconds for n in edges], seconds)
        with self._lock:
            if not self._samples or now - self._samples[-1][0] >= SAMPLE_SECONDS:
                self._samples.append((now, vertices, edges))
            while len(self._samples) > 2 and now - self._samples[1][0] >= RATE_WINDOW:
                self._samples.popleft()
            first, last = self._samples[0], self._samples[-1]
        span = last[0] - first[0]
        if span <= 0:
            return {}, [None] * len(edges), None
        old_v, old_e = first[1], first[2]
        rates = {v: ((r - old_v.get(v, (0, 0))[0]) / span, (e - old_v.get(v, (0, 0))[1]) / span)
                 for v, (r, e) in last[1].items()}
        edge_rates = [(n - (old_e[i] if i < len(old_e) else 0)) / span for i, n in enumerate(last[2])]
        return rates, edge_rates, span

    # ------------------------------------------------------------------ the look
    def look(self) -> dict[str, Any]:
        """Everything the page shows of the job, as plain JSON data (see the module docstring)."""
        job, now = self.job, time.time()
        terminal = job.status.is_terminal  # before the metrics: a job that had ended has its final counts
        metrics = job.metrics()
        vertices = {v.name: (metrics.total(v.name, RECEIVED), metrics.total(v.name, EMITTED)) for v in job.dag
                    if v.name in metrics}
        edges = edge_counts(job.dag, metrics)
        rates, edge_rates, span = self._rates(now, terminal, vertices, [n for _, n in edges])
        plan = job.plan
        out_vertices = []
        for v in job.dag:
            received, emitted = vertices.get(v.name, (0, 0))
            rate = rates.get(v.name, (None, None))
            vp = plan.vertices.get(v.name)
            watermark = metrics.watermark(v.name)
            queue = metrics.queue_fill(v.name)
            out_vertices.append({
                "name": v.name, "description": v.description,
                "parallelism": vp.total_parallelism if vp is not None else None,
                "received": received, "emitted": emitted, "received_rate": rate[0], "emitted_rate": rate[1],
                "queue_size": queue[0] if queue else None, "queue_capacity": queue[1] if queue else None,
                "watermark": None if watermark == IDLE_WATERMARK else watermark,
                "watermark_lag": watermark_lag(watermark, now)})
        out_edges = [{"source": e.source_name, "dest": e.dest_name, "source_ordinal": e.source_ordinal,
                      "dest_ordinal": e.dest_ordinal, "items": n, "rate": edge_rates[i]}
                     for i, (e, n) in enumerate(edges)]
        stats = metrics.snapshot_stats
        return {
            **self.summary(), "terminal": terminal,
            "rates_over": span, "rates_kind": "average over the run" if terminal else "live",
            "vertices": out_vertices, "edges": out_edges,
            "snapshot": None if stats is None else {"id": stats.id, "size_bytes": stats.size_bytes,
                                                    "duration_seconds": stats.duration_seconds,
                                                    "completed_at": stats.completed_at},
            "restarts": metrics.restarts,
            "restart_log": [{"time": r.time, "exc_type": r.exc_type, "exc_message": r.exc_message,
                             "from_snapshot": r.from_snapshot} for r in metrics.restart_log[-20:]],
            "stages": self._stages() if plan.pipelined is None else [],
            "logs": [{"time": r.get("created"), "logger": r.get("name"), "level": r.get("levelno"),
                      "message": r.get("msg")} for r in job.recent_logs()[-LOG_LINES:]],
            "error": _error(job),
        }

    def summary(self) -> dict[str, Any]:
        """The job's line on the index page: id, name, status, times, guarantee, mode."""
        job = self.job
        return {"id": job.id, "name": job.name, "status": job.status.value, "submitted": job.submission_time,
                "completed": job.completion_time, "guarantee": job.config.processing_guarantee.value,
                "mode": "PIPELINED" if job.plan.pipelined is not None else "STAGED"}

    def _stages(self) -> list[dict[str, int]]:
        """The Spark stages of a staged job's Spark job group: tasks completed, running and in all."""
        try:
            tracker = self.job.engine.spark.sparkContext.statusTracker()
            out = []
            for job_id in sorted(tracker.getJobIdsForGroup(self.job.group_id)):
                info = tracker.getJobInfo(job_id)
                for stage_id in (info.stageIds if info is not None else ()):
                    stage = tracker.getStageInfo(stage_id)
                    if stage is not None and stage.numTasks:
                        out.append({"stage": stage_id, "completed": stage.numCompletedTasks,
                                    "active": stage.numActiveTasks, "tasks": stage.numTasks})
            return out
        except Exception:  # noqa: BLE001 - the engine closed or its JVM died: no stages to show
            return []

    # ------------------------------------------------------------------ the picture
    def dot(self) -> str:
        """The DAG's DOT with each edge's items and rate (a new look)."""
        return labelled_dot(self.job.dag, [count_label(e["items"], e["rate"]) for e in self.look()["edges"]])

    def svg(self) -> str:
        """:meth:`dot` drawn by graphviz, redrawn at most every :data:`SAMPLE_SECONDS`."""
        from dag.graph import to_svg

        now, final = time.monotonic(), self.job.status.is_terminal
        cached = self._svg
        if cached is not None and (cached[1] or (not final and now - cached[0] < SAMPLE_SECONDS)):
            return cached[2]
        picture = to_svg(self.dot())
        self._svg = (now, final, picture)
        return picture


def _error(job: Any) -> dict[str, Any] | None:
    """How a failed job failed: the exception type and the processor, never the message (user data)."""
    error = job.failure
    if error is None:
        return None
    return {"type": getattr(error, "exc_type", None) or type(error).__name__,
            "vertex": getattr(error, "vertex", None), "processor_index": getattr(error, "processor_index", None)}
