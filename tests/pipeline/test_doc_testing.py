"""Jet 4.5's ``site/docs/api/testing.md``, its Pipeline samples ported to Python (issue 27, part 6): the test
sources and the assertions, inline with ``apply`` and followed by the page's logger sink. A sample passes when
its job completes (batch) or ends with ``AssertionCompletedException`` (stream); the expected lists are the
page's. Not ported: the mock-network and
JetTestSupport parts (Java test harness)."""

from __future__ import annotations

import pytest

from dag import JobFailedError
from pipeline import Assertions, Pipeline, Sinks, TestSources
from pipeline.assertions import AssertionCompletedException
from tests.support import running, unique, wait_for

pytestmark = pytest.mark.spark


def assert_true(message: str, condition: bool) -> None:
    """JUnit's ``assertTrue(message, condition)``."""
    assert condition, message


def test_testing_page_batch_samples(engine) -> None:
    pipeline = Pipeline.create()
    seen = unique("seen")
    pipeline.read_from(TestSources.items(1, 2, 3, 4)).write_to(Sinks.list(seen))  # "Batch Source", list not logger
    (pipeline.read_from(TestSources.items(1, 2, 3, 4))
     .apply(Assertions.assert_ordered("unexpected values", [1, 2, 3, 4]))
     .write_to(Sinks.logger()))
    (pipeline.read_from(TestSources.items(4, 3, 2, 1))
     .apply(Assertions.assert_any_order("unexpected values", [1, 2, 3, 4]))
     .write_to(Sinks.logger()))
    (pipeline.read_from(TestSources.items(4, 3, 2, 1))
     .apply(Assertions.assert_contains([1, 3]))
     .write_to(Sinks.logger()))
    (pipeline.read_from(TestSources.items(1, 2, 3, 4))
     .apply(Assertions.assert_collected(lambda items: assert_true("expected minimum of 4 items", len(items) >= 4)))
     .write_to(Sinks.logger()))
    engine.new_job(pipeline).join(timeout=300)
    assert list(engine.get_list(seen)) == [1, 2, 3, 4]
    engine.get_list(seen).clear()


def test_testing_page_streaming_source_sample(engine) -> None:
    items_per_second = 10
    out = unique("item-stream")
    pipeline = Pipeline.create()
    pipeline.read_from(TestSources.item_stream(items_per_second)).with_native_timestamps(0).write_to(Sinks.list(out))
    with running(engine, pipeline, join_timeout=120):
        wait_for(lambda: len(engine.get_list(out)) >= 3, 120, "3 events")
    events = sorted(engine.get_list(out), key=lambda e: e.sequence)[:3]
    engine.get_list(out).clear()
    assert [e.sequence for e in events] == [0, 1, 2]  # 100 ms apart, as the page's output
    assert [b.timestamp - a.timestamp for a, b in zip(events, events[1:])] == [100, 100]


def test_testing_page_collected_eventually_sample(engine) -> None:
    pipeline = Pipeline.create()
    (pipeline.read_from(TestSources.item_stream(10))
     .without_timestamps()
     .apply(Assertions.assert_collected_eventually(  # the page gives 5 s; 30 s so a busy machine passes too
         30, lambda c: assert_true("did not receive at least 20 items", len(c) > 20))))
    with pytest.raises(JobFailedError, match=AssertionCompletedException.__name__):
        engine.new_job(pipeline).join(timeout=120)
