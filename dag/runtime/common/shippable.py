"""Checking on the driver, before Spark runs, that every user function of a DAG can travel to the workers.

Spark pickles each vertex's processor supplier (and each partitioned edge's key function and partitioner)
with pyspark's cloudpickle to send them to the Python workers. A supplier that captures a lock, a socket or
an open file cannot be pickled; Spark would report that at ``join()`` as "Could not serialize object" without
saying which vertex or object. :func:`check_shippable` pickles them at ``new_job`` instead and, on failure,
:func:`find_unpicklable` walks the object graph (closure variables, globals a function uses, defaults,
attributes, container elements, a bound method's object, a supplier's arguments) down to the innermost
object that cannot be pickled, so the message names the vertex, the function and that object.

Runtime-bound suppliers (driver collections, Spark text I/O) never travel and are not checked.

>>> import threading
>>> lock = threading.Lock()
>>> path, culprit, _ = find_unpicklable(lambda x: lock.acquire() and x)
>>> path, type(culprit).__name__
('<lambda> -> global lock', 'lock')
>>> find_unpicklable(len) is None
True
"""

from __future__ import annotations

import functools
import types
from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = ["check_shippable", "find_unpicklable"]

_MAX_DEPTH = 12


def _dumps(obj: Any) -> BaseException | None:
    """The exception pickling ``obj`` with cloudpickle raises, or None when it pickles."""
    from pyspark import cloudpickle

    try:
        cloudpickle.dumps(obj)
    except Exception as exc:  # noqa: BLE001 - any pickling failure is what we look for
        return exc
    return None


def _label(obj: Any) -> str:
    """How a path step shows a callable: its name (or repr, e.g. ``map_p(work)``)."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return name if isinstance(name, str) else f"{obj!r:.60}"


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _function_parts(fn: types.FunctionType) -> list[tuple[str, Any]]:
    parts: list[tuple[str, Any]] = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            parts.append((f"captured variable {name}", cell.cell_contents))
        except ValueError:  # an empty cell
            continue
    for name in sorted(_code_names(fn.__code__)):
        if name in fn.__globals__:
            parts.append((f"global {name}", fn.__globals__[name]))
    parts += [(f"default #{i}", d) for i, d in enumerate(fn.__defaults__ or ())]
    parts += [(f"default {k}", d) for k, d in (fn.__kwdefaults__ or {}).items()]
    return parts


def _parts(obj: Any) -> list[tuple[str, Any]]:
    """The objects ``obj`` holds that pickling it pickles too, each with a label for the path."""
    if isinstance(obj, types.FunctionType):
        return _function_parts(obj)
    if isinstance(obj, types.MethodType):
        return [("its object", obj.__self__), ("function", obj.__func__)]
    if isinstance(obj, functools.partial):
        return ([("function", obj.func)] + [(f"argument #{i}", a) for i, a in enumerate(obj.args)]
                + [(f"argument {k}", v) for k, v in obj.keywords.items()])
    if isinstance(obj, dict):
        return [(f"[{k!r:.40}]", v) for k, v in obj.items()] + [("a key", k) for k in obj]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    parts: list[tuple[str, Any]] = []
    args = getattr(obj, "args", None)  # a library supplier: BuiltinSupplier(processor_class, *args)
    if isinstance(args, tuple):
        parts += [(f"argument #{i}", a) for i, a in enumerate(args)]
    for name, value in getattr(obj, "__dict__", {}).items():
        parts.append((f"attribute {name}", value))
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if isinstance(name, str) and hasattr(obj, name) and name not in ("__dict__", "__weakref__"):
                parts.append((f"attribute {name}", getattr(obj, name)))
    return parts


def find_unpicklable(obj: Any) -> tuple[str, Any, BaseException] | None:
    """``(path, culprit, error)``: the innermost object under ``obj`` that cannot be pickled, with the path to it
    (``"work -> captured variable lock"``) and its pickling error; None when ``obj`` pickles."""
    error = _dumps(obj)
    if error is None:
        return None
    path, seen = [_label(obj)], {id(obj)}
    for _ in range(_MAX_DEPTH):
        for label, part in _parts(obj):
            if id(part) in seen:
                continue
            seen.add(id(part))
            part_error = _dumps(part)
            if part_error is not None:
                path.append(f"{label} ({_label(part)})" if callable(part) else label)
                obj, error = part, part_error
                break
        else:
            break
    return " -> ".join(path), obj, error


def _unpicklable_error(what: str, *holders: Any) -> DagValidationError | None:
    """The error for the first of ``holders`` that cannot be pickled (the user's own object first)."""
    found = next((f for f in map(find_unpicklable, holders) if f is not None), None)
    if found is None:
        return None
    path, culprit, error = found
    return DagValidationError(
        f"{what} cannot be sent to Spark's workers: {path} is {type(culprit).__name__} {culprit!r:.80}, which "
        f"cannot be pickled ({type(error).__name__}: {str(error)[:200]}). Create such objects on the worker "
        "instead of capturing them: in the processor's init_processor(context), with a ContextFactory, or in "
        "a ProcessorSupplier's init(context)"
    )


def check_shippable(dag: Any) -> None:
    """Raise a ``DagValidationError`` naming the vertex (or edge), the function and the object when a
    processor supplier, key function or partitioner of ``dag`` cannot be pickled (see the module docstring).

    Each supplier is pickled once; the search for the culprit runs only after a failure.
    """
    from processors.api.suppliers import RuntimeBound

    for vertex in dag.vertices:
        meta = vertex.meta_supplier
        if isinstance(meta, RuntimeBound) or _dumps(meta) is None:
            continue
        error = _unpicklable_error(f"the processor supplier of vertex '{vertex.name}'", vertex.supplier, meta)
        if error is not None:
            raise error
    for edge in dag.edges:
        for role, fn in (("key function", edge.key_fn), ("partitioner", edge.partitioner)):
            error = None if fn is None else _unpicklable_error(f"the {role} of edge {edge}", fn)
            if error is not None:
                raise error
