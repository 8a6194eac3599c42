"""Jet 4.5's stage operations run on Spark, results checked against plain Python (issue 27, part 3): sort,
rebalance, inner hash-join, stateful mapping (global and keyed, batch and stream with ttl), windows on a batch
stage with add_timestamps, preserved order, and keyed state surviving a restart from a snapshot."""

from __future__ import annotations

import itertools
from concurrent.futures import Future

import pytest

from dag import Engine, EngineConfig, ExecutionMode, JobConfig, ProcessingGuarantee
from pipeline import JoinClause, Pipeline, ServiceFactories, Sinks, TestSources, TimestampedItem, WindowDefinition
from processors import ProcessorMetaSupplier, counting
from tests.support import running, unique, wait_for
from tests.support.processors import FailAt, sequence

pytestmark = pytest.mark.spark


def _run(engine, p: Pipeline, *sinks: str, config: JobConfig | None = None) -> list:
    engine.new_job(p, config).join(timeout=300)
    out = [list(engine.get_list(name)) for name in sinks]
    for name in sinks:
        engine.get_list(name).clear()
    return out


def _done(value) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def _running_sum(state: list, key, item) -> tuple:
    state[0] += item
    return key, state[0]


@pytest.fixture(params=[1, 2], ids=["one-member", "two-members"])
def any_engine(request, engine):
    """The shared engine, and one of two members borrowing its session (keys cross members on distributed
    edges)."""
    if request.param == 1:
        yield engine
        return
    two = Engine(EngineConfig(members=2), spark=engine.spark)
    try:
        yield two
    finally:
        two.close()


def test_batch_ops_when_run_then_sorted_rebalanced_joined_and_stateful_results(any_engine) -> None:
    engine = any_engine
    items = [17, 3, 42, 8, 23, 4, 15, 16]
    s, r, j, g, k = (unique(n) for n in "srjgk")
    p = Pipeline.create()
    src = p.read_from(TestSources.items(items))
    src.sort(lambda x: -x).write_to(Sinks.list(s))
    src.rebalance().map(lambda x: x * 10).rebalance(lambda x: x % 3).filter(lambda x: x > 50).write_to(Sinks.list(r))
    names = p.read_from(TestSources.items([(3, "three"), (8, "eight"), (99, "none")]))
    src.inner_hash_join(names, JoinClause.on_keys(lambda x: x, lambda e: e[0]).project_right(lambda e: e[1]),
                        lambda x, name: f"{x}={name}").write_to(Sinks.list(j))
    src.map_stateful(lambda: [0], lambda st, x: st.__setitem__(0, st[0] + 1) or st[0]).write_to(Sinks.list(g))
    src.grouping_key(lambda x: x % 2).map_stateful(lambda: [0], _running_sum).write_to(Sinks.list(k))
    doubled = unique("async")
    src.map_using_service_async(ServiceFactories.shared_service(lambda ctx: 2),
                                lambda two, x: _done(x * two)).write_to(Sinks.list(doubled))
    sorted_out, rebalanced, joined, counts, sums, async_out = _run(engine, p, s, r, j, g, k, doubled)
    assert sorted(async_out) == sorted(x * 2 for x in items)
    assert sorted_out == sorted(items, reverse=True)
    assert sorted(rebalanced) == sorted(x * 10 for x in items if x * 10 > 50)
    assert sorted(joined) == ["3=three", "8=eight"]
    assert sorted(counts) == list(range(1, len(items) + 1))
    for parity in (0, 1):  # per key the running sums are the prefix sums in some order of the key's items
        mine = sorted(v for key, v in sums if key == parity)
        assert len(mine) == sum(1 for x in items if x % 2 == parity)
        assert mine[-1] == sum(x for x in items if x % 2 == parity)


def test_batch_add_timestamps_when_windowed_then_counts_per_window(engine) -> None:
    times = [5, 12, 18, 25, 27, 29, 44, 61]
    out = unique("win")
    p = Pipeline.create()
    (p.read_from(TestSources.items(times)).add_timestamps(lambda t: t, 0)
     .window(WindowDefinition.tumbling(20)).aggregate(counting()).write_to(Sinks.list(out)))
    result, = _run(engine, p, out)
    expected = {(t // 20 + 1) * 20: n for t, n in
                ((t, sum(1 for u in times if u // 20 == t // 20)) for t in times)}
    assert sorted(result) == sorted(TimestampedItem(end, n) for end, n in expected.items())


def test_preserve_order_when_set_then_items_leave_in_input_order(engine) -> None:
    items = list(range(500))
    out = unique("ordered")
    p = Pipeline.create().set_preserve_order(True)
    p.read_from(TestSources.items(items)).map(lambda x: x * 2).filter(lambda x: x % 3).write_to(Sinks.list(out))
    result, = _run(engine, p, out)
    assert result == [x * 2 for x in items if (x * 2) % 3]


def test_keyed_map_stateful_when_stream_with_ttl_then_evictions_emitted(engine) -> None:
    out = unique("ttl")
    p = Pipeline.create()
    (p.read_from(TestSources.item_stream(200, lambda ts, seq: seq)).with_native_timestamps(0)
     .filter(lambda seq: seq < 40)
     .grouping_key(lambda seq: seq % 4)
     .map_stateful(50, lambda: [0], lambda st, key, seq: st.__setitem__(0, st[0] + 1),
                   lambda st, key, wm: ("evicted", key, st[0]))
     .write_to(Sinks.list(out)))
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(engine.get_list(out)) >= 4, 120, "4 evictions")
    evicted = sorted(engine.get_list(out))
    engine.get_list(out).clear()
    assert evicted == [("evicted", key, 10) for key in range(4)]  # each key saw 10 items, then its state expired


def test_keyed_map_stateful_when_restarted_from_snapshot_then_running_sums_continue(any_engine, tmp_path) -> None:
    engine = any_engine
    n = 3000
    out = unique("restart")
    marker = tmp_path / f"item-{n // 2}"
    p = Pipeline.create()
    (p.read_from(sequence(n, until=marker.exists))  # the source ends only after the injected failure
     .custom_transform("fail-once", ProcessorMetaSupplier.of(
         lambda: FailAt([n // 2], tmp_path, after_commit=True), preferred_local_parallelism=1))
     .grouping_key(lambda x: x % 3)
     .map_stateful(lambda: [0], _running_sum)
     .write_to(Sinks.list(out)))
    config = JobConfig(execution_mode=ExecutionMode.PIPELINED, snapshot_interval_ms=100,
                       processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE)
    result, = _run(engine, p, out, config=config)
    assert marker.exists()  # the job really failed once, after a snapshot, and restarted
    expected = sorted(itertools.chain.from_iterable(
        [(k, v) for v in itertools.accumulate(x for x in range(n) if x % 3 == k)] for k in range(3)))
    assert sorted(result) == expected
