"""``Sinks.observable`` and ``Sinks.reliable_topic`` on Spark (issue 27): observers and futures get a job's
results and its end (completion or failure) on both runtimes, a stream job's results arrive while it runs, and
every topic listener gets every message once, all in one order."""

from __future__ import annotations

import pytest

from dag import CancellationError, ExecutionMode, JobConfig, JobFailedError
from pipeline import Pipeline, Sinks, TestSources
from tests.support import running, unique, wait_for
from tests.support.processors import RecordingObserver

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("mode", [ExecutionMode.STAGED, ExecutionMode.PIPELINED])
def test_observable_when_job_completes_then_observers_future_and_iteration_get_results(engine, mode) -> None:
    observable = engine.new_observable()
    recorder = RecordingObserver()
    observable.add_observer(recorder)
    future = observable.to_future(lambda items: sorted(items))
    p = Pipeline.create()
    p.read_from(TestSources.items(list(range(100)))).map(lambda x: x * x).write_to(Sinks.observable(observable))
    engine.new_job(p, JobConfig(execution_mode=mode)).join(timeout=300)
    expected = [x * x for x in range(100)]
    assert future.result(timeout=10) == expected  # completed before join() returned
    assert sorted(recorder.items) == expected and recorder.completed == 1 and recorder.errors == []
    assert sorted(observable) == expected  # iteration replays the kept items up to the completion
    assert observable in engine.get_observables() and engine.get_observable(observable.name) is observable
    observable.destroy()
    assert observable not in engine.get_observables()


def test_observable_when_job_fails_then_future_and_observer_get_the_error(engine) -> None:
    name = unique("failing-obs")
    recorder = RecordingObserver()
    engine.get_observable(name).add_observer(recorder)
    future = engine.get_observable(name).to_future(list)
    p = Pipeline.create()
    p.read_from(TestSources.items([1, 0, 2])).map(lambda x: 1 // x).write_to(Sinks.observable(name))
    with pytest.raises(JobFailedError):
        engine.new_job(p).join(timeout=300)
    error = future.exception(timeout=10)
    assert isinstance(error, JobFailedError) and "ZeroDivisionError" in str(error)
    assert recorder.errors == [error] and recorder.completed == 0
    engine.get_observable(name).destroy()


def test_observable_when_stream_job_runs_then_results_arrive_live_and_cancel_is_an_error(engine) -> None:
    observable = engine.new_observable(unique("live"))
    recorder = RecordingObserver()
    observable.add_observer(recorder)
    p = Pipeline.create()
    (p.read_from(TestSources.item_stream(50, lambda ts, seq: seq)).without_timestamps()
     .write_to(Sinks.observable(observable)))
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(recorder.items) >= 20, 120, "20 items observed while the job runs")
        assert recorder.completed == 0 and recorder.errors == []
    assert len(recorder.errors) == 1 and isinstance(recorder.errors[0], CancellationError)
    observable.destroy()


def test_new_observable_when_name_taken_then_refused_naming_get_observable(engine) -> None:
    name = unique("taken")
    engine.get_observable(name)
    with pytest.raises(ValueError, match=f"engine.get_observable\\('{name}'\\)"):
        engine.new_observable(name)
    engine.get_observable(name).destroy()


@pytest.mark.parametrize("mode", [ExecutionMode.STAGED, ExecutionMode.PIPELINED])
def test_reliable_topic_when_job_publishes_then_each_listener_gets_every_message_once_in_one_order(
        engine, mode) -> None:
    name = unique("topic")
    first, second = [], []
    topic = engine.get_reliable_topic(name)
    topic.add_message_listener(lambda message: first.append(message.get_message_object()))
    topic.add_message_listener(lambda message: second.append(message.get_message_object()))
    p = Pipeline.create()
    p.read_from(TestSources.items([f"m{i}" for i in range(200)])).rebalance().write_to(Sinks.reliable_topic(name))
    engine.new_job(p, JobConfig(execution_mode=mode)).join(timeout=300)
    assert sorted(first) == sorted(f"m{i}" for i in range(200))
    assert second == first
