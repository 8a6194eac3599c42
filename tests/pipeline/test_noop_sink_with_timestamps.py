"""``Sinks.noop()`` after a stage with timestamps (issue 27's bug: the job failed with ``min() arg is an empty
sequence``, the unwrapped noop processor offering its empty output to an outbox without buckets)."""

from __future__ import annotations

import pytest

from dag import JobStatus
from pipeline import Pipeline, Sinks, TestSources
from tests.support import running, unique, wait_for

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("middle", ["none", "map", "peek"])
def test_noop_sink_when_stage_has_timestamps_then_job_keeps_running(engine, middle: str) -> None:
    p = Pipeline.create()
    stage = p.read_from(TestSources.item_stream(100)).with_native_timestamps(0)
    if middle == "map":
        stage = stage.map(lambda e: e.sequence)
    elif middle == "peek":
        stage = stage.peek(should_log_fn=lambda e: False)
    stage.write_to(Sinks.noop())
    seen = unique("noop-seen")
    stage.write_to(Sinks.list(seen))  # a fork: proves items flowed past the noop sink's input too
    with running(engine, p, join_timeout=120) as job:
        wait_for(lambda: len(engine.get_list(seen)) >= 10 or job.status.is_terminal, 120,
                 "10 items in the list sink")
        assert job.status is JobStatus.RUNNING, job.status
    engine.get_list(seen).clear()
