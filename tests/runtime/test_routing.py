"""Routing on Spark, item by item (Jet's RoutingPolicyTest as the model): every edge kind delivers exactly the
items Jet's rules say to exactly the processors they say, on one member and on two."""

from __future__ import annotations

import uuid
from collections import defaultdict

import pytest

from dag import DAG, Engine, EngineConfig
from edges import Partitioner, between, from_
from processors import write_list_p
from tests.support.modes import MODES, ModeEngine
from tests.support.processors import Emit, Tag

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module", params=MODES, ids=lambda m: m.value)
def engine(request, engine):
    """The shared engine, every job run in STAGED and again in PIPELINED mode (same expected results)."""
    return ModeEngine(engine, request.param)


def lists(count, size=6):
    return {g: [f"item-{g}-{i}" for i in range(size)] for g in range(count)}


def run_routing(engine, per_processor, up_lp, down_lp, configure, down_inputs=None):
    """up (Emit) -edge-> down (Tag) -> sink; returns {down processor: sorted items}."""
    name = f"routing-{uuid.uuid4().hex}"
    dag = DAG()
    up = dag.new_vertex("up", lambda: Emit(per_processor), local_parallelism=up_lp)
    down = dag.new_vertex("down", lambda: Tag("index", "ordinal", "item"), local_parallelism=down_lp)
    sink = dag.new_vertex("sink", write_list_p(name))
    dag.edge(configure(between(up, down))).edge(between(down, sink))
    engine.new_job(dag).join()
    received = defaultdict(list)
    for index, _, item in engine.get_list(name):
        received[index].append(item)
    return {k: sorted(v) for k, v in received.items()}


@pytest.fixture(scope="module")
def two_members(engine):
    """An engine with members=2 borrowing the shared session."""
    return ModeEngine(Engine(EngineConfig(members=2), spark=engine.spark), engine.mode)


def all_items(per_processor):
    return sorted(i for items in per_processor.values() for i in items)


def test_unicast_when_parallelism_grows_then_every_item_exactly_once(engine):
    data = lists(2)
    got = run_routing(engine, data, 2, 3, lambda e: e)
    assert sorted(i for items in got.values() for i in items) == all_items(data)
    assert set(got) == {0, 1, 2} and all(got.values())  # items are dealt one by one: every consumer gets some


def test_unicast_when_parallelism_shrinks_then_every_item_exactly_once(engine):
    data = lists(4)
    got = run_routing(engine, data, 4, 2, lambda e: e)
    assert sorted(i for items in got.values() for i in items) == all_items(data)
    assert set(got) <= {0, 1}


def test_isolated_when_2_to_4_then_consumers_0_2_get_list0_and_1_3_get_list1(engine):
    data = lists(2)
    got = run_routing(engine, data, 2, 4, lambda e: e.isolated())
    assert sorted(got[0] + got[2]) == sorted(data[0]) and sorted(got[1] + got[3]) == sorted(data[1])
    assert got[0] and got[2] and got[1] and got[3]  # round-robin reaches both candidates


def test_isolated_when_3_to_2_then_consumer0_gets_list0_and_list2(engine):
    data = lists(3)
    got = run_routing(engine, data, 3, 2, lambda e: e.isolated())
    assert got[0] == sorted(data[0] + data[2])
    assert got[1] == sorted(data[1])


def test_isolated_when_equal_parallelism_then_pairs(engine):
    data = lists(2)
    got = run_routing(engine, data, 2, 2, lambda e: e.isolated())
    assert got == {0: sorted(data[0]), 1: sorted(data[1])}


def test_broadcast_then_every_consumer_gets_every_item(engine):
    data = lists(2)
    got = run_routing(engine, data, 2, 3, lambda e: e.broadcast())
    assert got == {g: all_items(data) for g in range(3)}


def test_all_to_one_then_one_consumer_gets_everything(engine):
    data = lists(2)
    got = run_routing(engine, data, 2, 3, lambda e: e.all_to_one())
    assert list(got.values()) == [all_items(data)]


def keyed_lists(count, keys=12):
    return {g: [(k, g) for k in range(keys)] for g in range(count)}


def test_partitioned_when_single_member_then_partition_mod_parallelism(engine):
    data = keyed_lists(2)
    got = run_routing(engine, data, 2, 3, lambda e: e.partitioned(lambda item: item[0]))
    part = Partitioner.default()
    for index, items in got.items():
        assert all(part.get_partition(k, 271) % 3 == index for k, _ in items)
    assert sorted(i for items in got.values() for i in items) == all_items(data)


def test_partitioned_when_local_on_two_members_then_keys_stay_in_the_sending_member(two_members):
    data = keyed_lists(4)  # up: LP 2 x 2 members; senders 0,1 on member 0, senders 2,3 on member 1
    got = run_routing(two_members, data, 2, 2, lambda e: e.partitioned(lambda item: item[0]))
    part = Partitioner.default()
    for index, items in got.items():
        for key, sender in items:
            member = sender // 2
            assert index == member * 2 + part.get_partition(key, 271) % 2


def test_partitioned_when_distributed_on_two_members_then_one_processor_per_key_in_the_job(two_members):
    data = keyed_lists(4)
    got = run_routing(two_members, data, 2, 2, lambda e: e.partitioned(lambda item: item[0]).distributed())
    part = Partitioner.default()
    for index, items in got.items():
        assert all(index == part.get_partition(key, 271) % 4 for key, _ in items)
    assert sorted(i for items in got.values() for i in items) == all_items(data)


def test_broadcast_when_local_on_two_members_then_each_member_sees_its_own_items(two_members):
    data = lists(4)
    got = run_routing(two_members, data, 2, 3, lambda e: e.broadcast())
    for index, items in got.items():
        member = index // 3
        assert items == sorted(data[2 * member] + data[2 * member + 1])
    assert len(got) == 6


def test_broadcast_when_distributed_on_two_members_then_everyone_sees_everything(two_members):
    data = lists(4)
    got = run_routing(two_members, data, 2, 3, lambda e: e.broadcast().distributed())
    assert got == {g: all_items(data) for g in range(6)}


def test_unicast_when_local_on_two_members_then_items_never_cross_members(two_members):
    data = lists(4)
    got = run_routing(two_members, data, 2, 3, lambda e: e)
    for index, items in got.items():
        member = index // 3
        assert all(int(item.split("-")[1]) // 2 == member for item in items)
    assert sorted(i for items in got.values() for i in items) == all_items(data)


def test_fanout_when_distributed_on_two_members_then_each_member_gets_every_item_once(two_members):
    data = lists(4)
    got = run_routing(two_members, data, 2, 3, lambda e: e.fanout().distributed())
    for member in range(2):
        member_items = sorted(i for index, items in got.items() if index // 3 == member for i in items)
        assert member_items == all_items(data)


def test_all_to_one_when_distributed_on_two_members_then_one_processor_in_the_job(two_members):
    data = lists(4)
    got = run_routing(two_members, data, 2, 2, lambda e: e.all_to_one().distributed())
    assert list(got.values()) == [all_items(data)]


def test_distribute_to_member_then_all_items_on_that_member_partitioned(two_members):
    data = keyed_lists(4)
    got = run_routing(two_members, data, 2, 2, lambda e: e.partitioned(lambda item: item[0]).distribute_to(1))
    part = Partitioner.default()
    for index, items in got.items():
        assert all(index == 2 + part.get_partition(key, 271) % 2 for key, _ in items)
    assert sorted(i for items in got.values() for i in items) == all_items(data)


def test_two_partitioned_inputs_then_equal_keys_meet_in_one_processor(engine):
    name = f"join-{uuid.uuid4().hex}"
    left = {g: [("L", k) for k in range(g, 20, 2)] for g in range(2)}
    right = {g: [("R", k) for k in range(20)] for g in range(3)}
    dag = DAG()
    a = dag.new_vertex("left", lambda: Emit(left), local_parallelism=2)
    b = dag.new_vertex("right", lambda: Emit(right), local_parallelism=3)
    j = dag.new_vertex("join", lambda: Tag("index", "ordinal", "item"), local_parallelism=4)
    s = dag.new_vertex("sink", write_list_p(name))
    key = lambda item: item[1]  # noqa: E731
    dag.edge(from_(a).to(j, 0).partitioned(key)).edge(from_(b).to(j, 1).partitioned(key)).edge(between(j, s))
    engine.new_job(dag).join()
    where = defaultdict(set)
    for index, ordinal, (side, k) in engine.get_list(name):
        where[k].add(index)
        assert ordinal == (0 if side == "L" else 1)
    assert len(where) == 20 and all(len(v) == 1 for v in where.values())
