"""The observable and reliable-topic sinks' driver side (``processors.io.observable_sinks``), without Spark: items
published in order, the job's end forwarded to the observable, nothing forwarded to a topic."""

from __future__ import annotations

import doctest

import processors.io.observable_sinks
from dag.runtime.common.observables import Observable, ReliableTopic
from processors.io.observable_sinks import write_observable_p, write_reliable_topic_p


def test_observable_sink_when_items_then_job_end_then_future_gets_all_and_failure_is_forwarded():
    sink, observable = write_observable_p("o"), Observable("o")
    future = observable.to_future(list)
    sink.apply_items(observable, [1, 2], vertex="observableSink(o)")
    sink.apply_items(observable, [3], vertex="observableSink(o)")
    sink.job_ended(observable, None)
    assert future.result(timeout=1) == [1, 2, 3]
    failed = Observable("f")
    sink.job_ended(failed, RuntimeError("job failed"))
    assert str(failed.to_future(list).exception(timeout=1)) == "job failed"


def test_reliable_topic_sink_when_items_then_one_message_each():
    topic, got = ReliableTopic("t"), []
    topic.add_message_listener(lambda m: got.append(m.get_message_object()))
    sink = write_reliable_topic_p("t")
    sink.apply_items(topic, ["a", "b"], vertex="reliableTopicSink(t)")
    sink.job_ended(topic, None)
    assert got == ["a", "b"]


def test_observable_sinks_docstring_examples_hold():
    assert doctest.testmod(processors.io.observable_sinks).failed == 0
