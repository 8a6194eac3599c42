"""Jet's fluent builder of aggregate operations: ``AggregateOperation.with_create(fn).and_accumulate(fn)...``.

Jet 4.5's documentation builds custom operations this way (how-to "custom aggregate operation")::

    op = (AggregateOperation.with_create(lambda: [0])
          .and_accumulate(lambda acc, item: acc.__setitem__(0, acc[0] + item))
          .and_combine(lambda left, right: left.__setitem__(0, left[0] + right[0]))
          .and_deduct(lambda left, right: left.__setitem__(0, left[0] - right[0]))
          .and_export_finish(lambda acc: acc[0]))

The steps, in order: ``with_create(create_fn)``; then ``and_accumulate(fn)`` (one input) or
``and_accumulate0(fn)``, ``and_accumulate1(fn)``, ``and_accumulate2(fn)`` (one per input of a co-group, in this
order); then optionally ``and_combine(fn)`` and ``and_deduct(fn)``; last ``and_export_finish(fn)`` (export and
finish the same) or ``and_export(fn).and_finish(fn)``. Each step returns a new builder; the last gives an
:class:`~processors.aggregate.AggregateOperation`.

**Jet's functions mutate the accumulator and return nothing**; jetspark's primitives return it. The builder
takes both: when ``accumulate``, ``combine`` or ``deduct`` returns ``None`` the (mutated) accumulator is kept,
otherwise its result is the new accumulator (so ``lambda acc, x: acc + x`` works for an ``int``).

>>> op = AggregateOperation.with_create(lambda: 0).and_accumulate(lambda acc, x: acc + x).and_export_finish(str)
>>> op.finish(op.accumulate(op.accumulate(op.create(), 2), 3))
'5'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dag.errors import DagValidationError
from processors.aggregate import AggregateOperation

__all__ = ["AggregateOperationBuilder"]


class InPlace:
    """``fn(acc, x)`` returning the accumulator: ``fn``'s result, or ``acc`` itself when ``fn`` returned
    ``None`` (Jet's mutating ``BiConsumer``)."""

    def __init__(self, fn: Callable[[Any, Any], Any]):
        self.fn = fn

    def __call__(self, acc: Any, item: Any) -> Any:
        out = self.fn(acc, item)
        return acc if out is None else out


def _checked(step: str, fn: Any) -> Any:
    if not callable(fn):
        raise DagValidationError(f"AggregateOperation builder: {step}(fn) needs a callable, got {fn!r:.80} "
                                 f"({type(fn).__name__})")
    return fn


class AggregateOperationBuilder:
    """One step of the builder (see the module docstring); immutable."""

    def __init__(self, create_fn: Callable[[], Any], accumulate_fns: tuple = (), combine_fn: Any = None,
                 deduct_fn: Any = None, export_fn: Any = None, one_input: bool = False):
        self._create_fn = create_fn
        self._one_input = one_input
        self._accumulate_fns = accumulate_fns
        self._combine_fn = combine_fn
        self._deduct_fn = deduct_fn
        self._export_fn = export_fn

    def _with(self, **changes: Any) -> AggregateOperationBuilder:
        args = dict(create_fn=self._create_fn, accumulate_fns=self._accumulate_fns, combine_fn=self._combine_fn,
                    deduct_fn=self._deduct_fn, export_fn=self._export_fn, one_input=self._one_input)
        args.update(changes)
        return AggregateOperationBuilder(**args)

    def _accumulate(self, index: int | None, fn: Any) -> AggregateOperationBuilder:
        step = "and_accumulate" if index is None else f"and_accumulate{index}"
        _checked(step, fn)
        expected = 0 if index is None else index
        one_input_done = index is not None and index > 0 and self._one_input
        if len(self._accumulate_fns) != expected or one_input_done or self._combine_fn or self._export_fn:
            have = len(self._accumulate_fns)
            raise DagValidationError(
                f"AggregateOperation builder: {step}(fn) called after {have} accumulate function(s); call "
                "and_accumulate(fn) once for one input, or and_accumulate0, and_accumulate1[, and_accumulate2] in "
                "this order for a co-group, before and_combine/and_export")
        return self._with(accumulate_fns=(*self._accumulate_fns, InPlace(fn)), one_input=index is None)

    def and_accumulate(self, accumulate_fn: Callable[[Any, Any], Any]) -> AggregateOperationBuilder:
        """The accumulate function of a one-input operation: ``fn(acc, item)``."""
        return self._accumulate(None, accumulate_fn)

    def and_accumulate0(self, accumulate_fn: Callable[[Any, Any], Any]) -> AggregateOperationBuilder:
        """The accumulate function of input 0 of a co-group."""
        return self._accumulate(0, accumulate_fn)

    def and_accumulate1(self, accumulate_fn: Callable[[Any, Any], Any]) -> AggregateOperationBuilder:
        """The accumulate function of input 1 of a co-group (after ``and_accumulate0``)."""
        return self._accumulate(1, accumulate_fn)

    def and_accumulate2(self, accumulate_fn: Callable[[Any, Any], Any]) -> AggregateOperationBuilder:
        """The accumulate function of input 2 of a co-group (after ``and_accumulate1``)."""
        return self._accumulate(2, accumulate_fn)

    def _after_accumulate(self, step: str) -> None:
        if not self._accumulate_fns:
            raise DagValidationError(f"AggregateOperation builder: {step}(fn) before any accumulate function; "
                                     "call and_accumulate(fn) first")

    def and_combine(self, combine_fn: Callable[[Any, Any], Any]) -> AggregateOperationBuilder:
        """``fn(left, right)`` merging ``right`` into ``left`` (needed to run in two stages)."""
        self._after_accumulate("and_combine")
        return self._with(combine_fn=InPlace(_checked("and_combine", combine_fn)))

    def and_deduct(self, deduct_fn: Callable[[Any, Any], Any]) -> AggregateOperationBuilder:
        """``fn(left, right)`` undoing ``combine`` (sliding windows use it)."""
        self._after_accumulate("and_deduct")
        return self._with(deduct_fn=InPlace(_checked("and_deduct", deduct_fn)))

    def and_export_finish(self, export_finish_fn: Callable[[Any], Any]) -> AggregateOperation:
        """The result function, both export and finish; gives the operation."""
        self._after_accumulate("and_export_finish")
        fn = _checked("and_export_finish", export_finish_fn)
        return self._build(fn, fn)

    def and_export(self, export_fn: Callable[[Any], Any]) -> AggregateOperationBuilder:
        """The export function (must leave the accumulator usable); follow with ``and_finish(fn)``."""
        self._after_accumulate("and_export")
        return self._with(export_fn=_checked("and_export", export_fn))

    def and_finish(self, finish_fn: Callable[[Any], Any]) -> AggregateOperation:
        """The finish function (after ``and_export``); gives the operation."""
        if self._export_fn is None:
            raise DagValidationError("AggregateOperation builder: and_finish(fn) needs and_export(fn) before it "
                                     "(or use and_export_finish(fn) for one function)")
        return self._build(self._export_fn, _checked("and_finish", finish_fn))

    def _build(self, export_fn: Callable, finish_fn: Callable) -> AggregateOperation:
        return AggregateOperation(self._create_fn, list(self._accumulate_fns), self._combine_fn, self._deduct_fn, export_fn,
                                  finish_fn, name="AggregateOperation.with_create(...)")
