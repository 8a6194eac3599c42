"""Library processors across a snapshot and a restore into another parallelism, routed as the engine routes."""

from __future__ import annotations

from collections import Counter

import pytest
from tests.support.snapshots import by_key, complete, emitted, feed, restore, save, start

from dag.errors import ProcessorContractError
from dag.runtime.pipelined.snapshot_routing import RestoreRouter
from edges.partitioner import Partitioner
from processors import (Outbox, SourceBuilder, accumulate_by_key_p, aggregate_by_key_p, aggregate_p, counting,
                        peek_input_p, sort_p, summing, verify_processor)
from processors.api.processor import Processor

WORDS = [w for w in "a b c a b a d e f a g h b".split()]


def _identity(x):
    return x


@pytest.mark.parametrize("before, after", [(2, 3), (3, 1), (1, 4)])
def test_by_key_counts_when_restored_into_other_parallelism_then_exact(before, after):
    supplier = aggregate_by_key_p(_identity, counting())
    procs = start(supplier, before)
    feed(procs, WORDS[:7], by_key(_identity))
    restored = restore(supplier, save(procs), after)
    feed(restored, WORDS[7:], by_key(_identity))
    assert sorted(complete(restored)) == sorted(Counter(WORDS).items())


def test_by_key_entries_when_saved_then_keyed_by_raw_grouping_key():
    procs = start(accumulate_by_key_p(_identity, summing()), 1)
    feed(procs, [1, 2, 2], lambda item, n: 0)
    assert sorted(save(procs)) == [(1, 1), (2, 4)]


def test_sort_when_snapshot_taken_mid_emission_then_rest_emitted_once():
    supplier = sort_p()
    procs = start(supplier, 1)
    feed(procs, [3, 1, 2], lambda item, n: 0)
    p, _outbox = procs[0]
    small = Outbox([1], snapshot_capacity=1 << 20)
    p._outbox = small  # emit one item, then snapshot while two are pending
    small.reset()
    assert p.complete() is False
    first = small.drain(0)
    small.reset()
    assert p.save_to_snapshot() is True
    entries = small.drain_snapshot()
    restored = restore(supplier, entries, 2)
    assert first + sorted(complete(restored)) == [1, 2, 3]


def test_non_keyed_aggregate_when_restored_mid_emission_then_result_not_repeated():
    supplier = aggregate_p(counting())
    procs = start(supplier, 1)
    feed(procs, [1, 2, 3], lambda item, n: 0)
    p, _outbox = procs[0]
    full = Outbox([1], snapshot_capacity=1 << 20)
    full.offer("blocker")  # the result cannot go out yet
    p._outbox = full
    full.reset()
    assert p.complete() is False
    full.reset()
    assert p.save_to_snapshot() is True
    restored = restore(supplier, full.drain_snapshot(), 1)
    assert complete(restored) == [3]


def test_mixed_phases_when_restored_together_then_leftover_and_state_both_emitted():
    supplier = aggregate_by_key_p(_identity, counting())
    emitting = start(supplier, 1)
    feed(emitting, ["x", "x"], lambda item, n: 0)
    p, _ = emitting[0]
    full = Outbox([1], snapshot_capacity=1 << 20)
    full.offer("blocker")
    p._outbox = full
    full.reset()
    assert p.complete() is False
    full.reset()
    p.save_to_snapshot()
    mid_emission = full.drain_snapshot()
    accumulating = start(supplier, 1)
    feed(accumulating, ["y"], lambda item, n: 0)
    restored = restore(supplier, mid_emission + save(accumulating), 1)
    feed(restored, ["y", "z"], lambda item, n: 0)
    assert sorted(complete(restored)) == [("x", 2), ("y", 2), ("z", 1)]


def test_builder_source_when_restored_into_more_processors_then_each_gets_every_state():
    got = []

    def create(ctx):
        return {"index": ctx.global_processor_index, "pos": 0}

    def fill(state, buf):
        buf.add(state["pos"])
        state["pos"] += 1

    source = (SourceBuilder.stream("numbers", create).fill_buffer_fn(fill)
              .create_snapshot_fn(lambda state: state["pos"])
              .restore_snapshot_fn(lambda state, saved: got.append((state["index"], sorted(saved))))
              .distributed(1).build())

    def supplier():
        (proc,) = source.get([0])(0).get(1)
        return proc

    procs = start(supplier, 2)
    for p, outbox in procs:
        for _ in range(3):
            outbox.reset()
            p.complete()
    assert sorted(emitted(procs)) == [0, 0, 1, 1, 2, 2]
    restore(supplier, save(procs), 3)
    assert sorted(got) == [(0, [3, 3]), (1, [3, 3]), (2, [3, 3])]


def test_peek_wrapper_when_snapshot_cycles_then_wrapped_state_survives():
    verify_processor(peek_input_p(aggregate_by_key_p(_identity, counting()))).input(["a", "b", "a"]) \
        .expect_output([("a", 2), ("b", 1)])


def test_restore_when_processor_does_not_override_then_error_names_class():
    class Stateless(Processor):
        pass

    router = RestoreRouter(Partitioner.default(), 271)
    with pytest.raises(ProcessorContractError, match=r"Stateless does not override restore_from_snapshot"):
        restore(Stateless, [("k", 1)], 1, router)
