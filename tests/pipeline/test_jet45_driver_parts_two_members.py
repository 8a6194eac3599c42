"""Issue 27's driver-side parts on two members (each member's processors reach the driver over the job's
channel): updating map sinks, map lookups, observables and reliable topics in one job, on both runtimes."""

from __future__ import annotations

import pytest

from dag import Engine, EngineConfig, ExecutionMode, JobConfig
from pipeline import Pipeline, Sinks, TestSources
from tests.support import unique

pytestmark = pytest.mark.spark


@pytest.fixture
def two_members(engine):
    two = Engine(EngineConfig(members=2), spark=engine.spark)
    try:
        yield two
    finally:
        two.close()


@pytest.mark.parametrize("mode", [ExecutionMode.STAGED, ExecutionMode.PIPELINED])
def test_driver_parts_when_two_members_then_same_results_as_plain_python(two_members, mode) -> None:
    engine = two_members
    items = list(range(60))
    sums, lookups, replicated, topic = (unique(n) for n in ("sums", "lookups", "replicated", "topic"))
    engine.get_map(lookups).update({k: f"v{k}" for k in range(0, 60, 2)})
    engine.get_replicated_map(replicated).update({k: k * 10 for k in range(0, 60, 3)})
    observable = engine.new_observable()
    future = observable.to_future(sorted)
    messages: list = []
    engine.get_reliable_topic(topic).add_message_listener(lambda m: messages.append(m.get_message_object()))
    p = Pipeline.create()
    src = p.read_from(TestSources.items(items)).rebalance()
    src.write_to(Sinks.map_with_merging(sums, lambda x: x % 4, lambda x: x, lambda a, b: a + b))
    looked_up = (src.map_using_imap(lookups, lambda x: x, lambda x, v: (x, v))
                 .map_using_replicated_map(replicated, lambda pair: pair[0], lambda pair, r: (*pair, r)))
    looked_up.write_to(Sinks.observable(observable))
    looked_up.write_to(Sinks.reliable_topic(topic))
    engine.new_job(p, JobConfig(execution_mode=mode)).join(timeout=300)
    expected = sorted((x, f"v{x}" if x % 2 == 0 else None, x * 10 if x % 3 == 0 else None) for x in items)
    assert dict(engine.get_map(sums)) == {k: sum(x for x in items if x % 4 == k) for k in range(4)}
    assert future.result(timeout=10) == expected
    assert sorted(messages, key=repr) == sorted(expected, key=repr)
    observable.destroy()
