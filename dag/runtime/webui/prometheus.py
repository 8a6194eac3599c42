"""``GET /metrics``: the engine's jobs in Prometheus' text exposition format (``prometheus-client``).

A custom collector reads the live figures on every scrape (:class:`JobsCollector`; nothing is counted in
the background): one registry per web UI, never the process-wide default one, so two engines never mix their
jobs. ``job`` is the job's name (the newest job of each name, as ``engine.get_job(name)``), ``vertex`` a
vertex's name. The metrics (the contract's first six):

===========================================  =======  ======================================================
``jetspark_items_emitted_total``             counter  items the vertex's processors emitted (all ordinals)
``jetspark_items_received_total``            counter  items the vertex's processors received
``jetspark_job_status{job,status}``          gauge    1 for the job's current status, 0 for the others
``jetspark_job_restarts_total{job}``         counter  restarts from a snapshot
``jetspark_last_snapshot_id{job}``           gauge    id of the latest complete snapshot (absent before one)
``jetspark_watermark_lag_seconds``           gauge    wall clock - the vertex's lowest forwarded watermark
``jetspark_last_snapshot_duration_seconds``  gauge    start to completion of that snapshot
``jetspark_last_snapshot_size_bytes``        gauge    bytes its files take
``jetspark_queues_size{job,vertex}``         gauge    entries waiting in the vertex's inbound queues
``jetspark_queues_capacity{job,vertex}``     gauge    entries those queues hold at most
===========================================  =======  ======================================================

The counts of a pipelined job are those of its current execution: after a restart they start again, which
Prometheus' ``rate()`` treats as a counter reset. ``prometheus_client`` is imported when the first scrape
comes (the ``webui`` extra installs it).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

__all__ = ["JobsCollector", "exposition", "CONTENT_TYPE"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class JobsCollector:
    """Collects the figures of ``looks()`` (the newest look of every job name) at each scrape."""

    def __init__(self, looks: Callable[[], list[dict[str, Any]]]):
        self._looks = looks

    def collect(self) -> Iterator[Any]:
        """One metric family per metric of the module docstring, filled from a fresh look at every job."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        from dag.runtime.common.status import JobStatus

        emitted = CounterMetricFamily("jetspark_items_emitted", "Items the vertex's processors emitted",
                                      labels=["job", "vertex"])
        received = CounterMetricFamily("jetspark_items_received", "Items the vertex's processors received",
                                       labels=["job", "vertex"])
        status = GaugeMetricFamily("jetspark_job_status", "1 for the job's current status", labels=["job", "status"])
        restarts = CounterMetricFamily("jetspark_job_restarts", "Restarts of the job from a snapshot",
                                       labels=["job"])
        snapshot = GaugeMetricFamily("jetspark_last_snapshot_id", "Id of the job's latest complete snapshot",
                                     labels=["job"])
        duration = GaugeMetricFamily("jetspark_last_snapshot_duration_seconds",
                                     "Seconds the latest complete snapshot took", labels=["job"])
        size = GaugeMetricFamily("jetspark_last_snapshot_size_bytes", "Bytes of the latest complete snapshot",
                                 labels=["job"])
        lag = GaugeMetricFamily("jetspark_watermark_lag_seconds",
                                "Wall clock minus the vertex's lowest forwarded watermark (epoch ms)",
                                labels=["job", "vertex"])
        queued = GaugeMetricFamily("jetspark_queues_size", "Entries waiting in the vertex's inbound queues",
                                   labels=["job", "vertex"])
        capacity = GaugeMetricFamily("jetspark_queues_capacity", "Entries the vertex's inbound queues hold",
                                     labels=["job", "vertex"])
        for look in self._looks():
            job = look["name"]
            for s in JobStatus:
                status.add_metric([job, s.value], 1.0 if look["status"] == s.value else 0.0)
            restarts.add_metric([job], look["restarts"])
            if look["snapshot"] is not None:
                snapshot.add_metric([job], look["snapshot"]["id"])
                duration.add_metric([job], look["snapshot"]["duration_seconds"])
                size.add_metric([job], look["snapshot"]["size_bytes"])
            for v in look["vertices"]:
                labels = [job, v["name"]]
                emitted.add_metric(labels, v["emitted"])
                received.add_metric(labels, v["received"])
                if v["watermark_lag"] is not None:
                    lag.add_metric(labels, v["watermark_lag"])
                if v["queue_capacity"] is not None:
                    queued.add_metric(labels, v["queue_size"])
                    capacity.add_metric(labels, v["queue_capacity"])
        yield from (emitted, received, status, restarts, snapshot, duration, size, lag, queued, capacity)


def exposition(looks: Callable[[], list[dict[str, Any]]]) -> bytes:
    """The text exposition of :class:`JobsCollector` over ``looks`` (a fresh registry per call)."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(JobsCollector(looks))
    return generate_latest(registry)
