"""Barrier alignment: aligned (exactly-once) blocks inputs that delivered the barrier, unaligned does not."""

from __future__ import annotations

import doctest
import pickle

import pytest

import processors.execution.barrier as barrier_module
from dag.errors import DagError
from processors.execution.barrier import BarrierAligner, SnapshotBarrier


def test_barrier_examples_hold():
    assert doctest.testmod(barrier_module).failed == 0


def test_aligned_when_one_input_delivered_then_only_it_blocked_until_all_delivered():
    a = BarrierAligner(3, aligned=True)
    assert a.on_barrier(2, SnapshotBarrier(0)) is False
    assert [a.blocked(i) for i in range(3)] == [False, False, True]
    assert a.on_barrier(0, SnapshotBarrier(0)) is False
    assert [a.blocked(i) for i in range(3)] == [True, False, True]
    assert a.on_barrier(1, SnapshotBarrier(0)) is True
    assert not any(a.blocked(i) for i in range(3)) and a.pending is None


def test_unaligned_when_input_delivered_then_never_blocked():
    a = BarrierAligner(2, aligned=False)
    a.on_barrier(0, SnapshotBarrier(1))
    assert not a.blocked(0) and a.pending == SnapshotBarrier(1)
    assert a.on_barrier(1, SnapshotBarrier(1)) is True


def test_terminal_barrier_when_unaligned_then_aligned_anyway():
    a = BarrierAligner(2, aligned=False)
    a.on_barrier(0, SnapshotBarrier(4, is_terminal=True))
    assert a.blocked(0)


def test_done_input_when_barrier_pending_then_completes_it_and_does_not_count_later():
    a = BarrierAligner(2, aligned=True)
    a.on_barrier(0, SnapshotBarrier(0))
    assert a.on_done(1) is True
    assert a.on_barrier(0, SnapshotBarrier(1)) is True  # the done input no longer holds barriers back


def test_barrier_when_other_id_than_aligned_one_then_error_names_both():
    a = BarrierAligner(2, aligned=True, owner="vertex 'agg' #1")
    a.on_barrier(0, SnapshotBarrier(3))
    with pytest.raises(DagError, match=r"vertex 'agg' #1: unexpected snapshot barrier ID 4 from input 1, expected 3"):
        a.on_barrier(1, SnapshotBarrier(4))


def test_barrier_when_pickled_then_equal():
    assert pickle.loads(pickle.dumps(SnapshotBarrier(7, True))) == SnapshotBarrier(7, True)
    assert SnapshotBarrier(7) != SnapshotBarrier(7, True)
