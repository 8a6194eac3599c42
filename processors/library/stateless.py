"""Stateless one-to-many processors: ``noop_p``, ``map_p``, ``filter_p``, ``flat_map_p`` and their
``*_using_context_p`` variants (Jet's ``Processors.mapP`` ... and Jet 3's ``mapUsingContextP`` ...).

All are ``BatchTransform`` subclasses: their whole behaviour is ``transform_batch(items) -> list``, one tight
list comprehension per inbound batch, which the driver calls directly (see "Fast paths" in
docs/architecture.md) through ``transform_chunks(items, size)``: the flat-maps cut their output into lists of
about ``size`` items as they go, so a batch of documents expanding into millions of words never exists as one
list (memory is bounded by the edge's queue size, not by the input). They emit to every outbound edge, keep
no state between items, save nothing to snapshots and forward watermarks.

=============================  ==============================================================================
factory                        emits, for each item
=============================  ==============================================================================
``noop_p()``                   nothing (drains its input)
``map_p(fn)``                  ``fn(item)``; a ``None`` result drops the item
``filter_p(pred)``             the item when ``pred(item)`` is truthy
``flat_map_p(fn)``             every item of ``fn(item)`` (an iterable or a ``Traverser``; ``None`` is an error,
                               as Jet's null traverser: return ``[]`` for nothing)
``map_using_context_p(f, fn)`` ``fn(ctx, item)`` (``None`` drops the item), ``ctx = f.create(context)``
``filter_using_context_p``     the item when ``pred(ctx, item)`` is truthy
``flat_map_using_context_p``   every item of ``fn(ctx, item)``
=============================  ==============================================================================

The context object is created in ``init`` from the ``ContextFactory`` (once per processor) and destroyed in
``close``; the processor is non-cooperative when the factory is.

Factories return a ``BuiltinSupplier``: a zero-argument callable making a new processor, which also tells
planners and describers which processor class it makes (``processor_class``) and with what (``args``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from typing import Any

from jetspark_base.errors import DagValidationError, ProcessorContractError
from processors.api.context_factory import ContextFactory
from processors.api.processor import BatchTransform, Processor

__all__ = [
    "BuiltinSupplier", "noop_p", "map_p", "filter_p", "flat_map_p", "map_using_context_p",
    "filter_using_context_p", "flat_map_using_context_p",
    "NoopP", "MapP", "FilterP", "FlatMapP", "MapUsingContextP", "FilterUsingContextP", "FlatMapUsingContextP",
]


class BuiltinSupplier:
    """Zero-argument processor supplier of the library: ``supplier()`` returns ``processor_class(*args)``.

    >>> s = map_p(str.upper); s
    map_p(upper)
    >>> s.processor_class.__name__, s().transform_batch(["a"])
    ('MapP', ['A'])
    """

    __slots__ = ("processor_class", "args", "name")

    def __init__(self, processor_class: type[Processor], *args: Any, name: str):
        self.processor_class = processor_class
        self.args = args
        self.name = name

    def __call__(self) -> Processor:
        return self.processor_class(*self.args)

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self):  # __slots__ without __dict__: pickle through the constructor
        return (_make_builtin_supplier, (self.processor_class, self.args, self.name))


def _make_builtin_supplier(processor_class: type[Processor], args: tuple, name: str) -> BuiltinSupplier:
    return BuiltinSupplier(processor_class, *args, name=name)


def fn_name(fn: Any) -> str:
    """A short name of a user function for reprs and messages."""
    return getattr(fn, "__name__", None) or type(fn).__name__


def check_callable(factory: str, label: str, fn: Any) -> None:
    """Raise a ``DagValidationError`` naming ``factory(label)`` when ``fn`` is not callable."""
    if not callable(fn):
        raise DagValidationError(f"{factory}: {label} must be callable, got {fn!r} ({type(fn).__name__})")


def _flatten(processor: Processor, fn: Any, results: Iterable[Any], size: int = sys.maxsize) -> Iterator[list]:
    """Concatenate flat-map ``results`` (iterables or Traversers) with Jet's checks, cut into lists of
    at least ``size`` items (the last may be shorter; one result is never split), each list yielded as soon
    as it is full, so only one list and the current result are held at a time."""
    out: list = []
    extend = out.extend
    for result in results:
        try:
            extend(result)
        except TypeError:
            if result is None:
                raise _none_result_error(processor, fn) from None
            if hasattr(result, "__iter__"):
                raise  # raised while iterating: the user's own error
            raise ProcessorContractError(
                f"{_owner(processor)}: the function {fn_name(fn)} must return an iterable or a Traverser, got "
                f"{type(result).__name__} {result!r:.80}"
            ) from None
        if len(out) >= size:
            yield _checked(processor, fn, out)
            out = []
            extend = out.extend
    if out:
        yield _checked(processor, fn, out)


def _checked(processor: Processor, fn: Any, out: list) -> list:
    if None in out:
        raise ProcessorContractError(
            f"{_owner(processor)}: the function {fn_name(fn)} returned an iterable holding None; None is "
            "not an item: leave it out (or return a Traverser, which ends at its first None)"
        )
    return out


def _owner(processor: Processor) -> str:
    """``FlatMapP of vertex 'v'`` (the vertex once the processor was initialised)."""
    vertex = getattr(processor, "_vertex", None)
    return f"{type(processor).__name__} of vertex '{vertex}'" if vertex else type(processor).__name__


def _none_result_error(processor: Processor, fn: Any) -> ProcessorContractError:
    return ProcessorContractError(
        f"{_owner(processor)}: the function {fn_name(fn)} returned None instead of a traverser (Jet fails on a "
        "null traverser too); return an empty list or traverser.empty() for no output"
    )


def _flat(chunks: Iterator[list]) -> list:
    """The only list of an unbounded ``_flatten`` (or an empty one)."""
    return next(chunks, [])


class NoopP(BatchTransform):
    """Drains its input and emits nothing; forwards watermarks and drains a restored snapshot. Stateless."""

    def transform_batch(self, items: list) -> list:
        return []

    def restore_from_snapshot(self, inbox: Any) -> None:
        inbox.clear()


class MapP(BatchTransform):
    """Emits ``fn(item)`` per item; ``None`` results are dropped. Stateless."""

    def __init__(self, fn: Callable[[Any], Any]):
        self.fn = fn

    def transform_batch(self, items: list) -> list:
        return [y for y in map(self.fn, items) if y is not None]


class FilterP(BatchTransform):
    """Emits the items for which ``pred(item)`` is truthy. Stateless."""

    def __init__(self, pred: Callable[[Any], Any]):
        self.pred = pred

    def transform_batch(self, items: list) -> list:
        return list(filter(self.pred, items))


class FlatMapP(BatchTransform):
    """Emits every item of ``fn(item)`` (an iterable or a ``Traverser``; ``None`` is an error). Stateless."""

    def __init__(self, fn: Callable[[Any], Iterable[Any] | None]):
        self.fn = fn

    def transform_batch(self, items: list) -> list:
        return _flat(_flatten(self, self.fn, map(self.fn, items)))

    def transform_chunks(self, items: list, size: int) -> Iterator[list]:
        return _flatten(self, self.fn, map(self.fn, items), size)


class _UsingContext(BatchTransform):
    """Base of the ``*_using_context_p`` processors: creates the context object in ``init``, destroys it in
    ``close``; cooperative as its ``ContextFactory``."""

    _ctx: Any = None
    _has_ctx: bool = False

    def __init__(self, factory: ContextFactory, fn: Callable[..., Any]):
        self.factory = factory
        self.fn = fn

    def is_cooperative(self) -> bool:
        return self.factory.is_cooperative

    def init(self, outbox: Any, context: Any) -> None:
        super().init(outbox, context)
        self._ctx = self.factory.create(context)
        self._has_ctx = True

    def close(self) -> None:
        if self._has_ctx:
            self._has_ctx = False
            ctx, self._ctx = self._ctx, None
            self.factory.destroy(ctx)


class MapUsingContextP(_UsingContext):
    """Emits ``fn(ctx, item)`` per item; ``None`` results are dropped. Stateless apart from the context object."""

    def transform_batch(self, items: list) -> list:
        return [y for y in map(self.fn, repeat(self._ctx, len(items)), items) if y is not None]


class FilterUsingContextP(_UsingContext):
    """Emits the items for which ``pred(ctx, item)`` is truthy. Stateless apart from the context object."""

    def transform_batch(self, items: list) -> list:
        pred, ctx = self.fn, self._ctx
        return [x for x in items if pred(ctx, x)]


class FlatMapUsingContextP(_UsingContext):
    """Emits every item of ``fn(ctx, item)``. Stateless apart from the context object."""

    def transform_batch(self, items: list) -> list:
        return _flat(_flatten(self, self.fn, map(self.fn, repeat(self._ctx, len(items)), items)))

    def transform_chunks(self, items: list, size: int) -> Iterator[list]:
        return _flatten(self, self.fn, map(self.fn, repeat(self._ctx, len(items)), items), size)


def noop_p() -> BuiltinSupplier:
    """A processor that consumes its input and emits nothing (a sink that discards). Stateless.

    >>> noop_p()().transform_batch([1, 2])
    []
    """
    return BuiltinSupplier(NoopP, name="noop_p()")


def map_p(fn: Callable[[Any], Any]) -> BuiltinSupplier:
    """Emits ``fn(item)`` for each item, at once; a ``None`` result drops the item. Stateless.

    >>> map_p(lambda x: x * 2 if x > 1 else None)().transform_batch([1, 2, 3])
    [4, 6]
    """
    check_callable("map_p(fn)", "fn", fn)
    return BuiltinSupplier(MapP, fn, name=f"map_p({fn_name(fn)})")


def filter_p(pred: Callable[[Any], Any]) -> BuiltinSupplier:
    """Emits each item for which ``pred(item)`` is truthy, at once. Stateless.

    >>> filter_p(str.isalpha)().transform_batch(["a", "1", "b"])
    ['a', 'b']
    """
    check_callable("filter_p(pred)", "pred", pred)
    return BuiltinSupplier(FilterP, pred, name=f"filter_p({fn_name(pred)})")


def flat_map_p(fn: Callable[[Any], Any]) -> BuiltinSupplier:
    """Emits every item of ``fn(item)``, at once; ``fn`` returns an iterable or a ``Traverser`` (``[]`` for
    nothing). A ``None`` result, like Jet's null traverser, and an iterable holding ``None`` are a
    ``ProcessorContractError`` naming the vertex and the function. Stateless.

    >>> flat_map_p(str.split)().transform_batch(["to be", "or"])
    ['to', 'be', 'or']
    """
    check_callable("flat_map_p(fn)", "fn", fn)
    return BuiltinSupplier(FlatMapP, fn, name=f"flat_map_p({fn_name(fn)})")


def _check_factory(name: str, factory: Any, fn: Any) -> None:
    if not isinstance(factory, ContextFactory):
        raise DagValidationError(
            f"{name}(factory, fn): factory must be a ContextFactory, got {factory!r:.80} ({type(factory).__name__}); "
            "make one with ContextFactory.with_create_fn(create_fn)"
        )
    check_callable(f"{name}(factory, fn)", "fn", fn)


def map_using_context_p(factory: ContextFactory, fn: Callable[[Any, Any], Any]) -> BuiltinSupplier:
    """Emits ``fn(ctx, item)`` for each item, at once (``None`` drops the item); ``ctx`` is created by
    ``factory`` when the processor initialises and destroyed when it closes. Stateless apart from ``ctx``;
    non-cooperative when the factory is.
    """
    _check_factory("map_using_context_p", factory, fn)
    return BuiltinSupplier(MapUsingContextP, factory, fn, name=f"map_using_context_p({fn_name(fn)})")


def filter_using_context_p(factory: ContextFactory, pred: Callable[[Any, Any], Any]) -> BuiltinSupplier:
    """Emits each item for which ``pred(ctx, item)`` is truthy, at once; ``ctx`` as in ``map_using_context_p``."""
    _check_factory("filter_using_context_p", factory, pred)
    return BuiltinSupplier(FilterUsingContextP, factory, pred, name=f"filter_using_context_p({fn_name(pred)})")


def flat_map_using_context_p(factory: ContextFactory, fn: Callable[[Any, Any], Any]) -> BuiltinSupplier:
    """Emits every item of ``fn(ctx, item)`` (an iterable or a ``Traverser``; ``None`` is an error, as in
    ``flat_map_p``), at once; ``ctx`` as in
    ``map_using_context_p``.
    """
    _check_factory("flat_map_using_context_p", factory, fn)
    return BuiltinSupplier(FlatMapUsingContextP, factory, fn, name=f"flat_map_using_context_p({fn_name(fn)})")
