"""PreparedTransactions: the records the two-phase-commit sinks share (prepare groups, failed snapshots, the ids
saved to and restored from snapshots). Engine-free."""

from __future__ import annotations

import doctest

import pytest

from processors import Inbox
from processors.api.snapshot_keys import broadcast_key
from processors.io import prepared_transactions
from processors.io.prepared_transactions import PreparedTransactions


def test_finish_when_a_snapshot_failed_then_the_next_success_commits_its_group_too_oldest_first():
    txns = PreparedTransactions("t")
    committed: list[list[str]] = []
    txns.add_prepared(["a"])
    txns.add_prepared([])
    txns.add_prepared(["b", "c"])
    txns.finish(False, committed.append)
    assert committed == [] and txns.pending() == ["a", "b", "c"]
    txns.finish(True, committed.append)  # the empty group's snapshot succeeded: "a" goes with it
    txns.finish(True, committed.append)
    txns.finish(True, committed.append)  # no prepare left: nothing to do
    assert committed == [["a"], ["b", "c"]] and txns.pending() == []


def test_finish_when_commit_raises_then_failed_transactions_stay_pending():
    txns = PreparedTransactions("t")
    txns.add_prepared(["a"])
    txns.finish(False, pytest.fail)
    txns.add_prepared(["b"])

    def broken(_entries):
        raise OSError("disk gone")

    with pytest.raises(OSError):
        txns.finish(True, broken)
    assert txns.pending() == ["a"]  # still known, so the sink can close what it holds


def test_save_then_restore_keeps_owned_owners_and_returns_the_next_own_sequence():
    txns = PreparedTransactions("t")
    txns.add_prepared([3])
    txns.add_prepared([4])
    saved: list = []
    txns.save(lambda key, value: saved.append((key, value)) is None, lambda seq: (1, seq), "sink")
    assert saved == [(broadcast_key(("t", 1, 3)), True), (broadcast_key(("t", 1, 4)), True)]
    others = [(broadcast_key(("t", 0, 9)), True), (broadcast_key(("t", 3, 1)), True)]
    restored = PreparedTransactions("t")
    assert restored.restore(Inbox(saved + others), 1, 2, "sink") == 5
    assert restored.restored == {(1, 3), (1, 4), (3, 1)}  # owners 1 and 3 belong to index 1 of 2
    assert PreparedTransactions("t").restore(Inbox(others), 0, 2, "sink") == 10


def test_save_when_value_given_then_each_id_saved_with_it():
    txns = PreparedTransactions("t")
    txns.add_prepared([0])
    saved: list = []
    txns.save(lambda key, value: saved.append(value) is None, lambda seq: (2, seq), "sink",
              value=lambda owner, seq: f"{owner}/{seq}")
    assert saved == ["2/0"]


def test_restore_when_foreign_key_then_error_names_the_sink_and_the_key():
    with pytest.raises(ValueError, match=r"sink 'x': unexpected snapshot key .*other"):
        PreparedTransactions("t").restore(Inbox([(broadcast_key(("other", 0, 0)), True)]), 0, 1, "sink 'x'")


def test_module_docstring_examples_hold():
    assert doctest.testmod(prepared_transactions).failed == 0
