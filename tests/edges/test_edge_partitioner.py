from __future__ import annotations

import enum
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dag.errors import DagValidationError
from edges import DefaultPartitioner, Partitioner, stable_hash

REPO = Path(__file__).resolve().parents[2]

KEYS = [
    "word", "", "naïve", "\udcff", b"bytes", bytearray(b"ba"), 0, 1, -1, 2**70, -(2**70), 1.5, -0.25,
    float("inf"), None, True, False, ("a", 1), ("a", ("b", None)), (), frozenset({"x", "y", "z"}),
    complex(1, 2),
]


class Colour(enum.IntEnum):
    RED = 1


class Letter(enum.StrEnum):
    A = "a"

    def __str__(self) -> str:
        return "not the value"


def test_default_when_called_then_same_stable_instance():
    assert isinstance(Partitioner.default(), DefaultPartitioner)
    assert Partitioner.default() is Partitioner.default()
    assert pickle.loads(pickle.dumps(Partitioner.default())) is Partitioner.default()
    assert pickle.loads(pickle.dumps(Partitioner.HASH_CODE)) is Partitioner.HASH_CODE


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_default_when_key_then_partition_in_range_and_equals_stable_hash(key):
    for n in (1, 2, 7, 271):
        p = Partitioner.default().get_partition(key, n)
        assert 0 <= p < n and p == stable_hash(key) % n
    assert 0 <= stable_hash(key) < 2**32


def test_stable_hash_when_keys_equal_then_hashes_equal():
    assert stable_hash(1) == stable_hash(1.0) == stable_hash(True) == stable_hash(Colour.RED)
    assert stable_hash(0.0) == stable_hash(-0.0) == stable_hash(0) == stable_hash(False)
    assert stable_hash(("a", 1)) == stable_hash(("a", 1.0))
    assert stable_hash(frozenset({"a", "b"})) == stable_hash({"b", "a"})
    assert stable_hash(b"x") == stable_hash(bytearray(b"x"))
    assert stable_hash(Letter.A) == stable_hash("a")


def test_stable_hash_when_keys_differ_then_spread_over_partitions():
    counts = [0] * 8
    for i in range(8000):
        counts[Partitioner.default().get_partition(f"word{i}", 8)] += 1
    assert min(counts) > 800  # roughly uniform: 1000 expected per partition
    assert stable_hash(("a", "b")) != stable_hash(("ab",))
    assert stable_hash(1) != stable_hash(2)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text() | st.binary()
                    | st.floats(allow_nan=False), lambda inner: st.tuples(inner, inner), max_leaves=6))
def test_stable_hash_when_equal_keys_then_equal_hash_property(key):
    copy = pickle.loads(pickle.dumps(key))
    assert copy == key
    assert stable_hash(copy) == stable_hash(key)


def test_default_partitioner_when_other_process_with_other_hash_seed_then_same_partitions():
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import pickle\n"
        "from edges import Partitioner\n"
        "keys = pickle.loads(bytes.fromhex(sys.argv[2]))\n"
        "print(pickle.dumps([Partitioner.default().get_partition(k, 271) for k in keys]).hex())\n"
    )
    keys = KEYS + [f"w{i}" for i in range(200)]
    here = [Partitioner.default().get_partition(k, 271) for k in keys]
    for seed in ("1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run(
            [sys.executable, "-c", script, str(REPO), pickle.dumps(keys).hex()],
            env=env, capture_output=True, text=True, check=True,
        ).stdout
        assert pickle.loads(bytes.fromhex(out.strip())) == here


def test_hash_code_when_key_then_python_hash_modulo():
    assert Partitioner.HASH_CODE.get_partition(13, 271) == 13
    assert Partitioner.HASH_CODE.get_partition(-3, 271) == 268
    assert Partitioner.HASH_CODE.get_partition("x", 5) == hash("x") % 5


def test_partitioner_when_base_not_overridden_then_clear_error():
    with pytest.raises(NotImplementedError, match="must implement get_partition"):
        Partitioner().get_partition("x", 2)


def test_partitioner_of_when_not_callable_then_rejected():
    with pytest.raises(DagValidationError, match=r"Partitioner\.of\(\) needs a function"):
        Partitioner.of(3)
