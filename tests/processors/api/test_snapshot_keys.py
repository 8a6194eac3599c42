"""BroadcastKey, broadcast_key, SnapshotKey and the partition-key protocol."""

from __future__ import annotations

import doctest
import pickle

import pytest

import processors.api.snapshot_keys as snapshot_keys
from dag.errors import DagValidationError
from processors import BroadcastKey, SnapshotKey, broadcast_key
from processors.api.snapshot_keys import partition_key_of


def test_snapshot_keys_examples_hold():
    assert doctest.testmod(snapshot_keys).failed == 0


def test_broadcast_key_when_equal_wrapped_keys_then_equal_hash_and_repr_as_jet():
    assert broadcast_key("a") == BroadcastKey("a") and hash(broadcast_key("a")) == hash(BroadcastKey("a"))
    assert broadcast_key("a") != broadcast_key("b") and broadcast_key("a") != "a"
    assert repr(broadcast_key("a")) == "BroadcastKey{key='a'}"
    assert pickle.loads(pickle.dumps(broadcast_key(("x", 1)))) == broadcast_key(("x", 1))


def test_broadcast_key_when_none_then_rejected():
    with pytest.raises(DagValidationError, match="key must not be None"):
        broadcast_key(None)


def test_snapshot_key_when_pickled_then_equal_and_partitions_by_grouping_key():
    key = SnapshotKey(100, ("u", 1))
    assert pickle.loads(pickle.dumps(key)) == key and key != SnapshotKey(101, ("u", 1))
    assert partition_key_of(key) == ("u", 1)


def test_partition_key_of_when_class_defines_partition_key_then_used():
    class Aware:
        def partition_key(self):
            return "pk"

    assert partition_key_of(Aware()) == "pk"
    assert partition_key_of(7) == 7
