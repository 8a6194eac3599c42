"""The partitioned ``Router``'s key cache (built-in partitioners): every target gets the same items in the same
order as on the general path that asks the partitioner for every item, batch after batch, including the
batches the cache cannot serve (new keys, other key types, ``None`` keys, unhashable keys) and a full cache.
(The order of the ``(target, items)`` pairs of one batch may differ: each goes to its own queue.)"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dag.runtime.common.senders as senders
from dag.errors import DagValidationError
from dag.planner import EdgeOp, Route
from dag.runtime.common.senders import Router, SenderSpec
from edges import Partitioner


class Uncached(Partitioner):
    """The default partitioner behind a custom class: the router asks it for every item (no cache)."""

    def __init__(self, inner: Partitioner):
        self.inner = inner

    def get_partition(self, key, partition_count):
        return self.inner.get_partition(key, partition_count)


def spec(partitioner, key_fn=lambda x: x[0], ld=3, members=2, route=Route.PARTITIONED_ALL):
    return SenderSpec(op=EdgeOp.PARTITION_BY, route=route, dest_ordinal=0, ls=1, ld=ld, members=members,
                      partition_count=271, queue_size=1024, key_fn=key_fn, partitioner=partitioner, member=1,
                      edge_name="between(a, b)")


def routed(router, items):
    """``{target: items}`` of one batch (each target once)."""
    out = router.route(items)
    assert len({t for t, _ in out}) == len(out) and all(out_items for _, out_items in out)
    return dict(out)


def pair(partitioner=None, **kw):
    partitioner = partitioner or Partitioner.default()
    cached, general = Router(spec(partitioner, **kw), 0), Router(spec(Uncached(partitioner), **kw), 0)
    assert cached.route.__name__ == "_partitioned_cached" and general.route.__name__ == "_partitioned"
    return cached, general


class EqualsInt:
    """A key of another type that equals an int (as numpy's integers do) but encodes differently."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return other == self.value

    def __hash__(self):
        return hash(self.value)


keys = st.one_of(st.integers(-50, 50), st.sampled_from(["a", "b", "word", ""]), st.sampled_from([1.0, 2.5, -0.0]),
                 st.booleans(), st.just(b"x"), st.tuples(st.integers(0, 3), st.text(max_size=2)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(keys, max_size=40), max_size=8),
       st.sampled_from([Route.PARTITIONED_ALL, Route.PARTITIONED_MEMBER, Route.PARTITIONED_LOCAL]),
       st.sampled_from([Partitioner.default(), Partitioner.HASH_CODE]))
def test_cached_route_when_batches_of_mixed_keys_then_same_lists_in_same_order(batches, route, partitioner):
    cached, general = pair(partitioner, route=route)
    for n, batch in enumerate(batches):
        items = [(k, n, i) for i, k in enumerate(batch)]
        assert routed(cached, items) == routed(general, items)


def test_cached_route_when_keys_repeat_then_lists_are_fresh_copies():
    cached, general = pair()
    items = [(k % 7, i) for i, k in enumerate(range(100))]
    first = routed(cached, items)
    second = routed(cached, items)  # served from the cache
    assert first == second == routed(general, items)
    assert all(first[t] is not second[t] for t in first)


def test_cached_route_when_other_type_equals_a_cached_key_then_its_own_partition():
    cached, general = pair()
    cached.route([(k, 0) for k in range(20)])  # ints 0..19 cached
    items = [(EqualsInt(k), 1) for k in range(20)]
    sizes = lambda router: {t: len(b) for t, b in routed(router, items).items()}  # noqa: E731
    assert sizes(cached) == sizes(general)


def test_cached_route_when_unhashable_key_then_general_path():
    cached, general = pair()
    items = [([1, 2], 0), ([3], 1), (5, 2)]
    assert routed(cached, items) == routed(general, items)


def test_cached_route_when_none_key_then_null_key_error_naming_edge():
    cached, _ = pair()
    cached.route([(1, 0), (2, 1)])
    with pytest.raises(DagValidationError, match=r"Null key from key extractor, edge: between\(a, b\).*\(None, 7\)"):
        cached.route([(1, 0), (None, 7)])


def test_cached_route_when_cache_full_then_starts_again_with_same_targets(monkeypatch):
    monkeypatch.setattr(senders, "KEY_CACHE", 10)
    cached, general = pair()
    rnd = random.Random(3)
    for n in range(30):
        items = [(rnd.randrange(40), n, i) for i in range(rnd.randrange(1, 20))]
        assert routed(cached, items) == routed(general, items)
        assert len(cached._appends) <= 10 + 20


def test_router_when_partitioner_subclasses_default_then_asked_for_every_item():
    class Overridden(type(Partitioner.default())):
        def get_partition(self, key, partition_count):
            return 0 if key is True else 1  # tells True from 1: no cache may merge them

    router = Router(spec(Overridden()), 0)
    assert router.route.__name__ == "_partitioned"
    assert routed(router, [(1, 0), (True, 1)]) == {0: [(True, 1)], 1: [(1, 0)]}


@pytest.mark.parametrize("partitioner", [Partitioner.default(), Partitioner.HASH_CODE])
def test_cached_route_when_keys_never_repeat_then_cache_bypassed_with_same_targets(partitioner):
    """A stream keyed by ids: after ``MISSES_BEFORE_BYPASS`` batches of unseen keys the router stops caching for
    ``BYPASS_BATCHES`` batches (each routed in one partitioner call), then tries again; the targets never change."""
    cached, general = pair(partitioner)
    batches = senders.MISSES_BEFORE_BYPASS + senders.BYPASS_BATCHES + senders.MISSES_BEFORE_BYPASS + 1
    cache_sizes = []
    for n in range(batches):
        items = [(n * 100 + i, n, i) for i in range(100)]
        assert routed(cached, items) == routed(general, items)
        cache_sizes.append(len(cached._appends))
    learned = senders.MISSES_BEFORE_BYPASS * 100
    assert cache_sizes[senders.MISSES_BEFORE_BYPASS - 1] == learned
    assert cache_sizes[senders.MISSES_BEFORE_BYPASS + senders.BYPASS_BATCHES - 1] == learned, "nothing cached"
    assert cache_sizes[-1] > learned, "caching was tried again"


def test_cached_route_when_keys_repeat_after_a_bypass_then_cached_again():
    cached, general = pair()
    for n in range(senders.MISSES_BEFORE_BYPASS + senders.BYPASS_BATCHES):  # unseen keys: bypassed
        routed(cached, [(10_000 + n * 100 + i, n) for i in range(100)])
    repeating = [(i % 50, i) for i in range(100)]
    for _ in range(3):
        assert routed(cached, repeating) == routed(general, repeating)
    assert all(k in cached._appends for k in range(50))


def test_cached_route_when_keys_never_repeat_then_tries_caching_ever_more_rarely():
    """Each try that finds unseen keys again doubles the wait before the next (up to ``MAX_BYPASS_BATCHES``): with a
    fixed wait, a fifth of a stream of ids was cached for nothing, the garbage collector's work and a full cache's
    ``clear()`` stalling the task for milliseconds (bench/README)."""
    cached, general = pair()
    batches, size = 3000, 10
    for n in range(batches):
        items = [(n * size + i, n) for i in range(size)]
        assert routed(cached, items) == routed(general, items)
    tries = 1 + (batches // senders.BYPASS_BATCHES).bit_length()  # waits of 16, 32, 64, ... batches
    assert len(cached._appends) <= tries * senders.MISSES_BEFORE_BYPASS * size
    assert cached._next_bypass == senders.MAX_BYPASS_BATCHES  # after waits of 16, 32, ..., 2,048 batches
    repeating = [(i % 5, i) for i in range(size)]
    for _ in range(2 + senders.MAX_BYPASS_BATCHES):  # through the current wait, then cached again
        assert routed(cached, repeating) == routed(general, repeating)
    assert all(k in cached._appends for k in range(5)) and cached._next_bypass == senders.BYPASS_BATCHES
