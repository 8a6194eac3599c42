from __future__ import annotations

from types import SimpleNamespace

import pytest

from dag.errors import DagValidationError
from edges import DISTRIBUTE_TO_ALL, Edge, EdgeConfig, Partitioner, RoutingPolicy, between, from_


def vertex(name: str) -> SimpleNamespace:
    return SimpleNamespace(name=name)


A, B, C = vertex("a"), vertex("b"), vertex("c")


def test_between_when_created_then_ordinals_zero_and_jet_defaults():
    e = between(A, B)
    assert (e.source, e.source_name, e.source_ordinal) == (A, "a", 0)
    assert (e.destination, e.dest_name, e.dest_ordinal) == (B, "b", 0)
    assert e.routing_policy is RoutingPolicy.UNICAST
    assert e.is_local and not e.is_distributed and e.distributed_to is None
    assert e.get_priority() == 0
    assert e.config is None and e.queue_size() == 1024 and e.queue_size(16) == 16
    assert e.key_fn is None and e.partitioner is None and not e.is_all_to_one
    assert Edge.between is between and Edge.from_ is from_


def test_from_when_to_given_then_ordinals_kept():
    e = from_(A, 2).to(B, 3)
    assert (e.source_ordinal, e.dest_ordinal) == (2, 3)
    assert from_(A).destination is None and from_(A).dest_name is None


def test_to_when_called_twice_then_rejected():
    e = from_(A).to(B)
    with pytest.raises(DagValidationError, match="destination already set"):
        e.to(C)
    assert e.destination is B


@pytest.mark.parametrize("bad", [-1, 1.0, True, "0", None])
def test_from_when_bad_ordinal_then_rejected(bad):
    with pytest.raises(DagValidationError, match="source ordinal must be an int >= 0"):
        from_(A, bad)
    with pytest.raises(DagValidationError, match="destination ordinal must be an int >= 0"):
        from_(A).to(B, bad)


def test_between_when_not_a_vertex_then_message_names_role():
    with pytest.raises(DagValidationError, match="the destination must be a Vertex"):
        between(A, "b")
    with pytest.raises(DagValidationError, match="the source must be a Vertex"):
        from_(None)


@pytest.mark.parametrize(
    "setting, policy",
    [
        (lambda e: e.isolated(), RoutingPolicy.ISOLATED),
        (lambda e: e.broadcast(), RoutingPolicy.BROADCAST),
        (lambda e: e.fanout(), RoutingPolicy.FANOUT),
        (lambda e: e.partitioned(len), RoutingPolicy.PARTITIONED),
        (lambda e: e.all_to_one(), RoutingPolicy.PARTITIONED),
        (lambda e: e.broadcast().unicast(), RoutingPolicy.UNICAST),
    ],
)
def test_routing_when_set_then_returns_edge_and_policy(setting, policy):
    e = between(A, B)
    assert setting(e) is e
    assert e.routing_policy is policy


def test_routing_when_called_again_then_last_call_wins_and_clears_key():
    e = between(A, B).partitioned(len).broadcast()
    assert e.routing_policy is RoutingPolicy.BROADCAST and e.key_fn is None
    e.all_to_one("k").partitioned(str, Partitioner.HASH_CODE)
    assert not e.is_all_to_one and e.key_fn is str and e.partitioner is Partitioner.HASH_CODE
    e.all_to_one("k")
    assert e.is_all_to_one and e.all_to_one_key == "k" and e.key_fn is None


def test_partitioned_when_key_fn_not_callable_then_rejected():
    with pytest.raises(DagValidationError, match="key_fn must be a function"):
        between(A, B).partitioned("word")


def test_partitioned_when_partitioner_lacks_get_partition_then_suggests_of():
    with pytest.raises(DagValidationError, match=r"Partitioner\.of\(fn\)"):
        between(A, B).partitioned(len, lambda k, n: 0)


def test_locality_when_set_then_last_call_wins():
    e = between(A, B).partitioned(len)
    assert e.distributed().is_distributed and e.distributed_to is DISTRIBUTE_TO_ALL and not e.is_local
    assert e.distribute_to(1).distributed_to == 1 and not e.is_distributed and not e.is_local
    assert e.local().is_local and e.distributed_to is None


@pytest.mark.parametrize("bad", [-1, True, 1.5, "0", None, DISTRIBUTE_TO_ALL])
def test_distribute_to_when_not_member_index_then_rejected(bad):
    with pytest.raises(DagValidationError, match=r"distribute_to|distributed\(\)"):
        between(A, B).distribute_to(bad)


def test_priority_when_set_then_read_back():
    assert between(A, B).priority(-5).get_priority() == -5


@pytest.mark.parametrize("bad", [True, 1.0, "1", None])
def test_priority_when_not_int_then_rejected(bad):
    with pytest.raises(DagValidationError, match="priority must be an int"):
        between(A, B).priority(bad)


def test_priority_when_reserved_min_value_then_rejected():
    with pytest.raises(DagValidationError, match=r"-2147483648 \(-2\*\*31, reserved"):
        between(A, B).priority(-(2**31))


def test_set_config_when_edge_config_then_queue_size_used():
    e = between(A, B).set_config(EdgeConfig(queue_size=128))
    assert e.queue_size() == 128 and e.queue_size(16384) == 128
    assert e.set_config(None).queue_size() == 1024


def test_set_config_when_not_edge_config_then_rejected():
    with pytest.raises(DagValidationError, match="expected an EdgeConfig"):
        between(A, B).set_config({"queue_size": 3})


@pytest.mark.parametrize(
    "edge, text",
    [
        (lambda: between(A, B), 'between("a", "b")'),
        (lambda: from_(A, 1).to(C, 1).broadcast(), 'from_("a", 1).to("c", 1).broadcast()'),
        (lambda: from_(A).to(C, 2), 'from_("a").to("c", 2)'),
        (lambda: from_(A, 3), 'from_("a", 3)'),
        (lambda: between(B, C).priority(1), 'between("b", "c").priority(1)'),
        (
            lambda: between(A, B).partitioned(len).distributed().priority(1),
            'between("a", "b").partitioned(?).distributed().priority(1)',
        ),
        (lambda: between(A, B).all_to_one().distribute_to(2), 'between("a", "b").all_to_one().distribute_to(2)'),
        (lambda: between(A, B).isolated(), 'between("a", "b").isolated()'),
        (lambda: between(A, B).fanout().local(), 'between("a", "b").fanout()'),
    ],
)
def test_str_when_edge_then_jet_style(edge, text):
    assert str(edge()) == text
    assert repr(edge()) == text


def test_partition_of_when_partitioned_then_key_fn_and_partitioner_applied():
    e = between(A, B).partitioned(str.lower)
    expected = Partitioner.default().get_partition("word", 271)
    assert e.partition_of("Word", 271) == e.partition_of("word", 271) == expected
    fixed = between(A, B).partitioned(lambda item: item, Partitioner.of(lambda key, n: 42))
    assert fixed.partition_of(13, 271) == 42


def test_partition_of_when_all_to_one_then_same_partition_for_any_item():
    e = between(A, B).all_to_one("key")
    assert {e.partition_of(item, 271) for item in range(100)} == {Partitioner.default().get_partition("key", 271)}


def test_partition_of_when_not_partitioned_then_rejected():
    with pytest.raises(DagValidationError, match="needs a partitioned edge, this one is broadcast"):
        between(A, B).broadcast().partition_of(1, 4)


@pytest.mark.parametrize("bad", [0, -1, 2.0])
def test_partition_of_when_bad_partition_count_then_rejected(bad):
    with pytest.raises(DagValidationError, match="partition_count must be an int > 0"):
        between(A, B).partitioned(len).partition_of("x", bad)


def test_partition_of_when_partitioner_out_of_range_then_rejected():
    e = between(A, B).partitioned(len, Partitioner.of(lambda key, n: n))
    with pytest.raises(DagValidationError, match=r"returned 4 for item 'x'; expected an int in 0\.\.3"):
        e.partition_of("x", 4)
