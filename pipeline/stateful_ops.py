"""The operations with state or with calls in flight: stateful mapping and the async services.

Free functions that check their arguments and add one transform (see :mod:`pipeline.more_transforms` for how
they lower): ``map_stateful``/``filter_stateful``/``flat_map_stateful`` with one state for the job or, keyed,
one per key (with an optional event-time ``ttl``, :mod:`pipeline.stateful`), and
``map_using_service_async(_batched)`` (:mod:`pipeline.async_service`).

>>> from pipeline import Pipeline, Sources
>>> source = Pipeline.create().read_from(Sources.list("in")).transform
>>> stateful(source, "map", list, lambda state, item: item)
StatefulTransform('map-stateful-global')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.arg_checks import check_callable, check_service_factory
from pipeline.more_transforms import AsyncServiceTransform, StatefulTransform
from pipeline.transform_graph import Transform

__all__ = ["stateful", "keyed_stateful", "async_service"]


def _stateful_args(stage: str, operation: str, create_fn: Any, fn: Any) -> None:
    check_callable(stage, f"{operation} create_fn", create_fn)
    check_callable(stage, f"{operation} fn", fn)


def stateful(upstream: Transform, kind: str, create_fn: Any, fn: Any) -> Transform:
    """``{kind}_stateful(create_fn, fn)`` with one state for the whole job (one processor)."""
    _stateful_args(upstream.name, f"{kind}_stateful(create_fn, fn)", create_fn, fn)
    return StatefulTransform(upstream.graph, upstream, kind, create_fn, fn)


def keyed_stateful(upstream: Transform, key_fn: Callable[[Any], Any], kind: str, args: tuple,
                   kwargs: dict) -> Transform:
    """``{kind}_stateful`` with one state per key, in either form: ``(create_fn, fn)`` or ``(ttl, create_fn,
    fn[, on_evict_fn])``. A ``filter`` function takes ``(state, item)`` and has no ``on_evict_fn`` (as Jet's)."""
    operation = f"{kind}_stateful"
    ttl, create_fn, fn, on_evict_fn = _keyed_stateful_args(upstream.name, operation, args, kwargs)
    if kind == "filter":
        fn, on_evict_fn = _IgnoreKey(fn), None
    if ttl is not None and not upstream.events:
        raise DagValidationError(
            f"stage '{upstream.name}': {operation}(ttl, ...) evicts state by event time, but this stage has no "
            "timestamps; use it on a stream stage with timestamps, or leave out ttl and on_evict_fn")
    return StatefulTransform(upstream.graph, upstream, kind, create_fn, fn, key_fn, ttl, on_evict_fn)


class _IgnoreKey:
    """``fn(state, item)`` called as ``fn(state, key, item)``."""

    def __init__(self, fn: Callable[[Any, Any], Any]):
        self.fn = fn

    def __call__(self, state: Any, key: Any, item: Any) -> Any:
        return self.fn(state, item)


def _keyed_stateful_args(stage: str, operation: str, args: tuple, kwargs: dict) -> tuple:
    """``(ttl, create_fn, fn, on_evict_fn)`` from either form; errors name the stage and the forms."""
    names = ("ttl", "create_fn", "fn", "on_evict_fn")
    if args and not callable(args[0]) and "ttl" not in kwargs:
        values = dict(zip(names, args))
    else:
        values = dict(zip(names[1:], args))
    values.update(kwargs)
    unknown = set(values) - set(names)
    if unknown or "create_fn" not in values or "fn" not in values:
        raise TypeError(f"stage '{stage}': {operation} takes (create_fn, fn) or (ttl, create_fn, fn[, "
                        f"on_evict_fn]); got {len(args)} positional argument(s) and {sorted(kwargs)}")
    ttl = values.get("ttl")
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0):
        raise DagValidationError(f"stage '{stage}': {operation}(ttl, ...) needs a ttl in milliseconds > 0, got "
                                 f"{ttl!r}; leave it out to keep every key's state")
    _stateful_args(stage, operation, values["create_fn"], values["fn"])
    if values.get("on_evict_fn") is not None:
        check_callable(stage, f"{operation} on_evict_fn", values["on_evict_fn"])
    return ttl, values["create_fn"], values["fn"], values.get("on_evict_fn")


def async_service(upstream: Transform, name: str, factory: Any, fn: Any, batch_size: int | None,
                  max_concurrent_ops: Any, timeout_s: Any, key_fn: Callable | None = None) -> Transform:
    """The ``name`` vertex (``map-using-service-async``, ``...-batched``, ``map-using-imap``) calling
    ``fn(service, item)`` (batched: ``fn(service, items)``; keyed: with the key(s) after the service), which
    returns a future; at most ``max_concurrent_ops`` in flight per processor, each for ``timeout_s``."""
    operation = f"{name.replace('-', '_')}(service_factory, {'max_batch_size, ' if batch_size else ''}fn)"
    context_factory = check_service_factory(upstream.name, operation, factory)
    check_callable(upstream.name, operation, fn)
    for label, value in (("max_concurrent_ops", max_concurrent_ops), ("max_batch_size", batch_size)):
        if (value is not None or label == "max_concurrent_ops") and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise DagValidationError(f"stage '{upstream.name}': {operation} needs {label} >= 1 (an int), got "
                                     f"{value!r}")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
        raise DagValidationError(f"stage '{upstream.name}': {operation} needs timeout_s > 0, got {timeout_s!r}")
    return AsyncServiceTransform(upstream.graph, upstream, name, context_factory, fn, max_concurrent_ops, batch_size,
                                 key_fn, float(timeout_s))
