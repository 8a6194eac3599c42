"""The engine's observables and reliable topics on the driver (``dag.runtime.common.observables``), without Spark:
replay to late observers, completion and failure, futures, blocking iteration, destroy, listener order."""

from __future__ import annotations

import threading

import pytest

from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.common.observables import Observable, ReliableTopic

from tests.support.processors import RecordingObserver


def test_observer_when_added_late_then_gets_kept_events_then_live_ones_in_order():
    obs = Observable("o")
    obs.publish([1, 2])
    early, late = RecordingObserver(), RecordingObserver()
    obs.add_observer(early)
    obs.publish([3])
    obs.add_observer(late)
    obs.complete()
    expected = [("next", 1), ("next", 2), ("next", 3), ("complete",)]
    assert early.events == expected and late.events == expected


def test_observer_when_it_raises_then_others_still_get_every_event():
    obs, rec = Observable("o"), RecordingObserver()
    obs.add_observer(lambda item: 1 / 0)
    obs.add_observer(rec)
    obs.publish(["a"])
    obs.fail(RuntimeError("job failed"))
    assert rec.events == [("next", "a"), ("error", "job failed")]


def test_to_future_when_completed_or_failed_then_result_or_error():
    obs = Observable("o")
    future = obs.to_future(lambda items: sorted(items))
    obs.publish([3, 1, 2])
    assert not future.done()
    obs.complete()
    assert future.result(timeout=1) == [1, 2, 3]
    failing = Observable("f")
    future = failing.to_future(len)
    failing.fail(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        future.result(timeout=1)
    assert failing.to_future(len).exception(timeout=1) is not None  # a late future sees the kept failure


def test_iteration_when_items_arrive_from_another_thread_then_yields_until_completion():
    obs = Observable("o")

    def produce():
        obs.publish([1, 2])
        obs.publish([3])
        obs.complete()

    producer = threading.Timer(0.05, produce)
    producer.start()
    try:
        assert list(obs) == [1, 2, 3]
    finally:
        producer.join(10)
    failed = Observable("f")
    failed.publish(["x"])
    failed.fail(RuntimeError("gone"))
    with pytest.raises(RuntimeError, match="gone"):
        list(failed)


def test_destroy_when_called_then_name_forgotten_and_new_one_empty():
    store = DriverCollections(partition_count=2)
    first = store.get("observable", "results")
    first.publish([1])
    assert store.observables() == [first]
    first.destroy()
    assert store.observables() == [] and not store.exists("observable", "results")
    second = store.get("observable", "results")
    assert second is not first and second.to_future(list).done() is False


def test_reliable_topic_when_published_then_each_listener_gets_each_message_once_in_one_order():
    topic = ReliableTopic("news")
    a, b = [], []
    topic.add_message_listener(lambda m: a.append(m.get_message_object()))
    registration = topic.add_message_listener(lambda m: b.append((m.topic, m.get_message_object())))
    threads = [threading.Thread(target=topic.publish_all, args=([f"{t}-{i}" for i in range(50)],)) for t in "xyz"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(a) == sorted(f"{t}-{i}" for t in "xyz" for i in range(50))
    assert [m for _, m in b] == a and {name for name, _ in b} == {"news"}
    assert topic.remove_message_listener(registration) is True
    topic.publish("late")
    assert a[-1] == "late" and len(b) == 150


def test_observables_docstring_examples_hold():
    import doctest

    import dag.runtime.common.observables

    assert doctest.testmod(dag.runtime.common.observables).failed == 0
