"""Key functions that read only an entry's key: the proof behind co-partitioning (``aggregation.py``).

A by-key aggregator emits ``(key, result)`` entries. When the partitioned edge after it keys them with a
function that reads only ``entry[0]`` (``entry_key``, ``lambda e: e[0][1]``, ``lambda e: e[0].lower()``), the
processor each entry goes to is known as soon as its key is, before any result exists, so the planner can route
the aggregator's input there in the first place and drop a shuffle. :func:`key_part` decides "reads only
``entry[0]``" from the function's bytecode, conservatively: it accepts a plain function of one argument whose every
use of the argument is ``argument[0]``, with no closure, no nested function and no global other than a few pure
builtins, and refuses (returns ``None``) everything else, including any opcode it does not know. A refusal only
means the shuffle stays.

>>> key_part(lambda e: e[0][1])(("doc-1", "word"))
'word'
>>> key_part(lambda e: e[1]) is None   # reads the value
True
"""

from __future__ import annotations

import builtins
import dis
import inspect
from collections.abc import Callable
from operator import itemgetter
from typing import Any

__all__ = ["key_part"]

_LOADS_LOCAL = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
_LOADS_CONST = frozenset({"LOAD_CONST", "LOAD_SMALL_INT"})
_PURE_OPS = frozenset({
    "RESUME", "NOP", "CACHE", "RETURN_VALUE", "RETURN_CONST", "POP_TOP", "COPY", "SWAP", "PUSH_NULL",
    "BINARY_SUBSCR", "BINARY_OP", "BUILD_SLICE", "BUILD_TUPLE", "BUILD_LIST", "BUILD_STRING", "FORMAT_VALUE",
    "COMPARE_OP", "IS_OP", "CONTAINS_OP", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT",
    "LOAD_ATTR", "LOAD_METHOD", "PRECALL", "CALL", "KW_NAMES", "STORE_FAST",
    "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE",
    "JUMP_FORWARD", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", *_LOADS_LOCAL, *_LOADS_CONST,
})
"""Opcodes a key-reading function may use (CPython 3.11 names; others refuse). Calls and attributes only ever
reach values derived from ``entry[0]``, constants or :data:`_PURE_BUILTINS`."""
_PURE_BUILTINS = frozenset({"str", "int", "float", "bool", "len", "tuple", "frozenset", "abs", "min", "max", "repr"})


def key_part(fn: Callable[[Any], Any]) -> Callable[[Any], Any] | None:
    """``g`` with ``fn(entry) == g(entry[0])`` for every 2-tuple ``entry``, or ``None`` when that is not proven.

    ``g(key)`` is ``fn((key, None))``: ``fn`` never looks at the second item, so the placeholder is never read.

    >>> from processors import entry_key
    >>> key_part(entry_key)("k")
    'k'
    >>> key_part(lambda e: e[0].lower())("Word")
    'word'
    >>> key_part(lambda e: (e[0], e[1])) is None
    True
    """
    from processors.aggregate.operation import identity
    from processors.api.functions import entry_key

    if fn is entry_key:
        return identity
    if getattr(fn, "__code__", None) is None or not inspect.isfunction(fn):
        return None
    instructions = [i for i in dis.get_instructions(fn) if i.opname != "CACHE"]
    if not _reads_only_entry_key(fn, instructions):
        return None
    item = _subscript_of_key(instructions)
    return _KeyPart(fn) if item is None else itemgetter(item)  # e[0][i]: one C call per key


class _KeyPart:
    """``fn((key, None))``, picklable when ``fn`` is (a task sends it with the edge's other functions)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any], Any]):
        self.fn = fn

    def __call__(self, key: Any) -> Any:
        return self.fn((key, None))

    def __reduce__(self) -> tuple:
        return (_KeyPart, (self.fn,))


def _reads_only_entry_key(fn: Any, instructions: list) -> bool:
    code = fn.__code__
    if fn.__closure__ or fn.__defaults__ or fn.__kwdefaults__:
        return False
    if (code.co_argcount != 1 or code.co_kwonlyargcount or code.co_freevars
            or code.co_cellvars or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
                                                    | inspect.CO_GENERATOR | inspect.CO_COROUTINE)):
        return False
    argument = code.co_varnames[0]
    for n, ins in enumerate(instructions):
        if ins.opname == "LOAD_GLOBAL":
            if not _pure_builtin(fn, ins.argval):
                return False
        elif ins.opname not in _PURE_OPS:
            return False
        elif ins.opname == "STORE_FAST" and ins.argval == argument:
            return False
        elif ins.opname in _LOADS_LOCAL and ins.argval == argument and not _is_subscript_zero(instructions, n):
            return False
    return True


def _subscript_of_key(instructions: list) -> Any:
    """``i`` when the function is exactly ``lambda e: e[0][i]`` with a constant int or str ``i``, else None."""
    ops = [(i.opname, i.argval) for i in instructions if i.opname not in ("RESUME", "NOP")]
    if len(ops) != 6 or [op for op, _ in ops] != ["LOAD_FAST", "LOAD_CONST", "BINARY_SUBSCR", "LOAD_CONST",
                                                  "BINARY_SUBSCR", "RETURN_VALUE"]:
        return None
    item = ops[3][1]
    return item if type(item) in (int, str) else None


def _is_subscript_zero(instructions: list, n: int) -> bool:
    """Instruction ``n`` (a load of the argument) is followed by ``[0]``."""
    if n + 2 >= len(instructions):
        return False
    index, subscript = instructions[n + 1], instructions[n + 2]
    return (index.opname in _LOADS_CONST and type(index.argval) is int and index.argval == 0
            and subscript.opname == "BINARY_SUBSCR")


def _pure_builtin(fn: Any, name: str) -> bool:
    return (name in _PURE_BUILTINS and name not in fn.__globals__
            and getattr(builtins, name, None) is _builtin(fn, name))


def _builtin(fn: Any, name: str) -> Any:
    table = fn.__globals__.get("__builtins__", builtins)
    return table.get(name) if isinstance(table, dict) else getattr(table, name, None)
