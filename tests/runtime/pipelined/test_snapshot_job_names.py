"""A pipelined job whose name is not a plain file name (spaces, markup, quotes, a slash) takes snapshots: the
driver and the tasks quote the same store key once into the snapshot directory's name (they once quoted it
twice on the tasks' side, so no snapshot ever completed)."""

from __future__ import annotations

import pytest

from dag import DAG, JobConfig, ProcessingGuarantee
from edges import between
from processors import map_p, noop_p
from tests.support import counter_stream, running, wait_for


@pytest.mark.spark
def test_job_named_with_spaces_quotes_and_slash_then_snapshots_complete(engine) -> None:
    dag = DAG()
    src = dag.new_vertex("src", counter_stream("src", 0.01), 1)
    double = dag.new_vertex("double", map_p(lambda n: 2 * n), 1)
    dag.edge(between(src, double)).edge(between(double, dag.new_vertex("sink", noop_p(), 1)))
    config = JobConfig(name='a b/<c> "d"', processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE,
                       snapshot_interval_ms=100)
    with running(engine, dag, config) as job:
        wait_for(lambda: job.metrics().last_snapshot is not None, 60, "a complete snapshot")
        stats = job.metrics().snapshot_stats
        assert stats is not None and stats.id == job.metrics().last_snapshot and stats.size_bytes > 0
