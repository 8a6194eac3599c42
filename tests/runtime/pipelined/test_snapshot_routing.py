"""Restore routing of saved entries: keyed by the inbound edge's partitioner, broadcast keys everywhere."""

from __future__ import annotations

import doctest

from hypothesis import given, strategies as st

import dag.runtime.pipelined.snapshot_routing as snapshot_routing
from dag import DAG
from dag.runtime.pipelined.snapshot_routing import restore_router, route_restored_entries
from edges import between
from edges.partitioner import Partitioner
from processors import SnapshotKey, broadcast_key, noop_p


def _dag(edge_fn=None):
    d = DAG()
    a, b = d.new_vertex("a", noop_p()), d.new_vertex("b", noop_p())
    d.edge(edge_fn(between(a, b)) if edge_fn else between(a, b))
    return d


def test_routing_module_examples_hold():
    assert doctest.testmod(snapshot_routing).failed == 0


@given(keys=st.lists(st.one_of(st.text(max_size=5), st.integers()), unique=True, max_size=30),
       total=st.integers(1, 7))
def test_keyed_entry_when_restored_then_goes_to_owner_of_its_partition_only(keys, total):
    d = _dag(lambda e: e.partitioned(lambda x: x).distributed())
    routed = route_restored_entries(d, "b", [(k, i) for i, k in enumerate(keys)], total_parallelism=total,
                                    partition_count=271)
    assert sorted(e[1] for p in routed for e in p) == list(range(len(keys)))
    for index, entries in enumerate(routed):
        for key, _ in entries:
            assert Partitioner.default().get_partition(key, 271) % total == index


def test_broadcast_entry_when_restored_then_every_processor_gets_it():
    routed = route_restored_entries(_dag(), "b", [(broadcast_key("wm"), 10)], total_parallelism=4,
                                    partition_count=271)
    assert routed == [[(broadcast_key("wm"), 10)]] * 4


def test_edge_partitioner_when_custom_then_used_for_restore():
    by_first_letter = Partitioner.of(lambda key, n: ord(key[0]) % n)
    d = _dag(lambda e: e.partitioned(lambda x: x, by_first_letter))
    router = restore_router(d, "b", 271)
    assert router.target("b-key", 3) == (ord("b") % 271) % 3


def test_frame_key_when_restored_then_routed_by_grouping_key():
    d = _dag(lambda e: e.partitioned(lambda x: x))
    router = restore_router(d, "b", 271)
    assert {router.target(SnapshotKey(ts, "user"), 5) for ts in range(0, 1000, 10)} == {router.target("user", 5)}


def test_all_to_one_edge_when_restored_then_every_keyed_entry_goes_to_the_fed_processor():
    d = _dag(lambda e: e.all_to_one("k").distributed())
    routed = route_restored_entries(d, "b", [(i, i) for i in range(20)] + [(broadcast_key(0), 0)],
                                    total_parallelism=3, partition_count=271)
    fed = Partitioner.default().get_partition("k", 271) % 3
    assert [len(p) for p in routed] == [21 if i == fed else 1 for i in range(3)]


def test_vertex_without_partitioned_inbound_edge_then_default_partitioner():
    d = _dag()
    assert restore_router(d, "a", 271).target("x", 4) == Partitioner.default().get_partition("x", 271) % 4
    assert restore_router(d, "b", 271).target("x", 4) == Partitioner.default().get_partition("x", 271) % 4
