"""``map_using_service_async`` and ``_batched`` on Spark (issue 27, part 3): results in input order with at
most ``max_concurrent_ops`` calls in flight, unordered when the pipeline says so, the batched and keyed forms,
and the failures: a failing future and one that never completes fail the job naming the vertex and the item."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from dag import JobFailedError
from dag.errors import DagValidationError
from pipeline import Pipeline, ServiceFactories, Sinks, TestSources
from tests.support import unique

pytestmark = pytest.mark.spark


class Slow:
    """A service answering on its own threads after a random short delay; records the calls in flight."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(8)
        self.lock = threading.Lock()
        self.in_flight = 0

    def call(self, x):
        with self.lock:
            self.in_flight += 1
            seen = self.in_flight
        future = self.pool.submit(self._answer, x, seen)
        return future

    def _answer(self, x, seen):
        time.sleep(random.random() / 200)  # the service's latency (the behaviour): answers come out of order
        with self.lock:
            self.in_flight -= 1
        return (x * 10, seen)


def _slow_service():
    return ServiceFactories.non_shared_service(lambda ctx: Slow(), lambda s: s.pool.shutdown())


def _run(engine, p: Pipeline, sink: str) -> list:
    engine.new_job(p).join(timeout=300)
    out = list(engine.get_list(sink))
    engine.get_list(sink).clear()
    return out


def test_async_when_default_order_then_input_order_and_at_most_max_concurrent_ops(engine) -> None:
    out = unique("async")
    p = Pipeline.create()
    (p.read_from(TestSources.items(list(range(200))))
     .map_using_service_async(_slow_service(), lambda s, x: s.call(x), max_concurrent_ops=3)
     .set_local_parallelism(1)
     .write_to(Sinks.list(out)))
    result = _run(engine, p, out)
    assert [r for r, _ in result] == [x * 10 for x in range(200)]
    assert max(seen for _, seen in result) <= 3


def test_async_when_preserve_order_false_then_every_result_once(engine) -> None:
    out = unique("async-unordered")
    p = Pipeline.create().set_preserve_order(False)
    (p.read_from(TestSources.items(list(range(200))))
     .map_using_service_async(_slow_service(), lambda s, x: s.call(x) if x % 7 else _done(None))
     .write_to(Sinks.list(out)))
    assert sorted(r for r, _ in _run(engine, p, out)) == [x * 10 for x in range(200) if x % 7]


def _done(value) -> Future:
    future = Future()
    future.set_result(value)
    return future


def test_async_batched_and_keyed_when_run_then_results(engine) -> None:
    out = unique("async-batched")
    p = Pipeline.create()
    src = p.read_from(TestSources.items(list(range(50))))
    src.map_using_service_async_batched(_slow_service(), 8, lambda s, xs: _done([x + 1 for x in xs])) \
        .write_to(Sinks.list(out))
    src.grouping_key(lambda x: x % 5).map_using_service_async(
        _slow_service(), lambda s, key, x: _done(("k", key, x))).write_to(Sinks.list(out))
    src.grouping_key(lambda x: x % 5).map_using_service_async_batched(
        _slow_service(), 4, lambda s, keys, xs: _done([("b", k, x) for k, x in zip(keys, xs)])) \
        .write_to(Sinks.list(out))
    result = _run(engine, p, out)
    assert sorted(r for r in result if isinstance(r, int)) == list(range(1, 51))
    assert sorted(r for r in result if isinstance(r, tuple) and r[0] == "k") == sorted(("k", x % 5, x)
                                                                                      for x in range(50))
    assert sorted(r for r in result if isinstance(r, tuple) and r[0] == "b") == sorted(("b", x % 5, x)
                                                                                      for x in range(50))


def _failing(service, x) -> Future:
    future = Future()
    if x == 13:
        future.set_exception(ConnectionError("lookup service down"))
    else:
        future.set_result(x)
    return future


def test_async_when_future_fails_then_job_fails_naming_vertex_and_item(engine) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.items(list(range(20))))
     .map_using_service_async(ServiceFactories.non_shared_service(lambda: None), _failing)
     .set_local_parallelism(1).write_to(Sinks.noop()))
    with pytest.raises(JobFailedError) as info:
        engine.new_job(p).join(timeout=300)
    text = str(info.value)
    assert "vertex 'map-using-service-async'" in text and "item #13 (13)" in text
    assert "ConnectionError: lookup service down" in text


def test_async_when_future_never_completes_then_job_fails_after_timeout(engine) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.items(list(range(5))))
     .map_using_service_async(ServiceFactories.non_shared_service(lambda: None), lambda s, x: Future(),
                              timeout_s=1)
     .write_to(Sinks.noop()))
    started = time.monotonic()
    with pytest.raises(JobFailedError, match="item #0 .*has not completed after 1.0 s"):
        engine.new_job(p).join(timeout=300)
    assert time.monotonic() - started < 120


def test_async_when_bad_arguments_then_errors_at_build_time() -> None:
    p = Pipeline.create()
    stage = p.read_from(TestSources.items(1))
    service = ServiceFactories.non_shared_service(lambda: None)
    with pytest.raises(DagValidationError, match="max_batch_size >= 1"):
        stage.map_using_service_async_batched(service, 0, lambda s, xs: None)
    with pytest.raises(DagValidationError, match="max_concurrent_ops >= 1"):
        stage.map_using_service_async(service, lambda s, x: None, max_concurrent_ops=0)
    with pytest.raises(TypeError, match="needs a ServiceFactory"):
        stage.map_using_service_async(lambda: None, lambda s, x: None)
