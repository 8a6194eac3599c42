"""Checks of the arguments the pipeline's operations get: each error names the stage and shows what it got.

The operations (:mod:`pipeline.stateless_ops`, :mod:`pipeline.aggregate_ops`, :mod:`pipeline.stateful_ops`)
and the stage handles (:mod:`pipeline.stages`) call these before they add a transform, so a wrong argument
fails where the pipeline is built, not when the job runs.

>>> check_callable("map", "map(fn)", len)
>>> check_callable("map", "map(fn)", 3)
Traceback (most recent call last):
...
TypeError: stage 'map': map(fn) must be callable, got 3 (int)
"""

from __future__ import annotations

from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.services import ServiceFactory
from pipeline.transform_graph import Transform
from processors.aggregate.operation import AggregateOperation
from processors.aggregate.aggregations import _co_aggregate
from processors.api.context_factory import ContextFactory

__all__ = ["check_callable", "check_op", "check_single_input_op", "co_aggregate_args", "check_service_factory",
           "check_context_factory", "check_lag", "check_same_pipeline"]


def check_callable(stage: str, label: str, fn: Any) -> None:
    """A ``TypeError`` naming ``stage`` and ``label`` unless ``fn`` is callable."""
    if not callable(fn):
        raise TypeError(f"stage '{stage}': {label} must be callable, got {fn!r:.80} ({type(fn).__name__})")


def check_op(stage: str, label: str, op: Any) -> AggregateOperation:
    """``op``, or a ``TypeError`` naming ``stage`` when it is not an ``AggregateOperation``."""
    if not isinstance(op, AggregateOperation):
        raise TypeError(f"stage '{stage}': {label} must be an AggregateOperation (counting(), to_list(), ...), "
                        f"got {op!r:.80} ({type(op).__name__})")
    return op


def check_single_input_op(stage: str, label: str, op: Any) -> AggregateOperation:
    """``op`` checked as an operation of one input (``aggregate(op)`` and its windowed and keyed forms)."""
    check_op(stage, label, op)
    if op.arity != 1:
        raise DagValidationError(
            f"stage '{stage}': {label} got an operation for {op.arity} inputs ({op!r}), but this aggregation has "
            f"one input; co-aggregate with aggregate{op.arity}(stage1{', stage2' if op.arity > 2 else ''}, op) "
            "instead, or give an operation with one accumulate function")
    return op


def co_aggregate_args(stage: str, operation: str, inputs: int, args: tuple) -> tuple[list, AggregateOperation,
                                                                                    bool]:
    """The arguments of ``aggregate2``/``aggregate3`` in either of Jet's forms: one operation per input
    (``aggregate2(op0, stage1, op1)``, result a tuple of the results) or one multi-input operation
    (``aggregate2(stage1, op2)``, Jet 4). Returns ``(other stages, combined operation, per_input)``."""
    per_input = len(args) == 2 * inputs - 1 and all(isinstance(a, AggregateOperation) for a in args[0::2])
    multi = len(args) == inputs and isinstance(args[-1], AggregateOperation) and not any(
        isinstance(a, AggregateOperation) for a in args[:-1])
    if per_input:
        ops = [check_single_input_op(stage, f"{operation} op{i}", op) for i, op in enumerate(args[0::2])]
        return list(args[1::2]), _co_aggregate(tuple(ops), None), True
    if multi:
        op = args[-1]
        if op.arity != inputs:
            raise DagValidationError(
                f"stage '{stage}': {operation}(..., op) needs an operation for {inputs} inputs (one accumulate "
                f"function per input), got {op!r} with {op.arity}; build it with aggregate_operation{inputs}(...) "
                f"or AggregateOperation.with_create(fn).and_accumulate0(fn)...and_accumulate{inputs - 1}(fn)")
        return list(args[:-1]), op, False
    others = ", ".join(f"stage{i}" for i in range(1, inputs))
    per = ", ".join(f"{'stage%d, ' % i if i else ''}op{i}" for i in range(inputs))
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(
        f"stage '{stage}': {operation} takes ({per}) (one operation per input; the result is a tuple of "
        f"{inputs} results) or ({others}, op{inputs}) (one operation for {inputs} inputs, Jet 4's form); "
        f"got ({got})")


def check_service_factory(stage: str, operation: str, factory: Any) -> ContextFactory:
    """The context factory of a ``ServiceFactory`` (a ``TypeError`` naming the stage for anything else)."""
    if not isinstance(factory, ServiceFactory):
        hint = " (a ContextFactory goes to map_using_context)" if isinstance(factory, ContextFactory) else ""
        raise TypeError(f"stage '{stage}': {operation} needs a ServiceFactory (ServiceFactories.shared_service("
                        f"create_fn) or .non_shared_service(create_fn)), got {factory!r:.80}{hint}")
    return factory.to_context_factory()


def check_context_factory(stage: str, operation: str, factory: Any) -> ContextFactory:
    """``factory``, or a ``TypeError`` naming the stage when it is not a ``ContextFactory``."""
    if not isinstance(factory, ContextFactory):
        raise TypeError(f"stage '{stage}': {operation} needs a ContextFactory "
                        f"(ContextFactory.with_create_fn(fn)), got {factory!r:.80}")
    return factory


def check_lag(stage: str, allowed_lag: Any) -> int:
    """``allowed_lag`` (milliseconds, an int >= 0), or a ``DagValidationError`` naming the stage."""
    if isinstance(allowed_lag, bool) or not isinstance(allowed_lag, int) or allowed_lag < 0:
        raise DagValidationError(f"stage '{stage}': allowed_lag must be an int >= 0 (milliseconds), got "
                                 f"{allowed_lag!r}")
    return allowed_lag


def check_same_pipeline(mine: Transform, other: object, operation: str, kinds: tuple[type, ...]) -> Transform:
    """The transform of the stage handle ``other`` given to an operation of the stage of ``mine``: a
    ``TypeError`` unless it is one of ``kinds``, a ``DagValidationError`` unless it is of the same pipeline."""
    if not isinstance(other, kinds):
        raise TypeError(f"stage '{mine.name}': {operation} needs a compute stage of this pipeline, got "
                        f"{other!r:.80} ({type(other).__name__})")
    transform: Transform = getattr(other, "transform")
    if transform.graph is not mine.graph:
        raise DagValidationError(
            f"stage '{mine.name}': {operation} was given stage '{transform.name}' of another pipeline; build both "
            "stages from the same Pipeline (p.read_from(...) on the pipeline you lower)")
    return transform
