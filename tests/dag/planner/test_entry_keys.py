"""``key_part``: which key functions provably read only an entry's key (``dag/planner/entry_keys.py``)."""

from __future__ import annotations

import math
import pickle

import pytest

from dag.planner.entry_keys import key_part
from processors import entry_key


def second_of_key(e):
    key = e[0]
    return key[1]


@pytest.mark.parametrize("fn, key, expected", [
    (entry_key, ("d", "w"), ("d", "w")),
    (lambda e: e[0][1], ("d", "w"), "w"),
    (lambda e: e[0].lower(), "Word", "word"),
    (lambda e: len(e[0]), "abc", 3),
    (lambda e: str(e[0])[1:], 123, "23"),
    (lambda e: e[0][1] if e[0][0] else "none", (0, "w"), "none"),
    (second_of_key, ("d", "w"), "w"),
])
def test_key_part_when_function_reads_only_the_key_then_it_is_a_function_of_the_key(fn, key, expected):
    part = key_part(fn)
    assert part is not None and part(key) == expected == fn((key, "any value"))


secret = "k"


@pytest.mark.parametrize("fn", [
    lambda e: e[1],
    lambda e: e,
    lambda e: e[0] + e[1],
    lambda e: e[-1],
    lambda e: e[0.0],
    lambda e: e[False],
    lambda e: e is None,
    lambda e: math.floor(e[0]),           # a global that is not a pure builtin
    lambda e: secret + e[0],              # a module global
    lambda e: (lambda x: x)(e)[0],        # a nested function
    lambda e, extra=1: e[0],              # a default argument
    lambda *e: e[0],
    lambda e: [x for x in e][0],          # a comprehension (a nested code object in 3.11)
    len,                                  # not a Python function
])
def test_key_part_when_function_may_read_more_than_the_key_then_refused(fn):
    assert key_part(fn) is None


def test_key_part_when_builtin_is_shadowed_then_refused():
    namespace: dict = {"str": lambda x: x * 2}
    exec("fn = lambda e: str(e[0])", namespace)
    assert key_part(namespace["fn"]) is None


def test_key_part_when_pickled_then_same_function_of_the_key():
    part = key_part(second_of_key)
    assert pickle.loads(pickle.dumps(part))(("d", "w")) == "w"
