"""``AggregateOperation``: the primitives of an aggregation, as in Jet's ``AggregateOperation``.

An aggregate operation is five functions over a mutable or immutable *accumulator*:

=============  ==============================  =====================================================
primitive      signature                       role
=============  ==============================  =====================================================
create_fn      ``() -> acc``                   a new, empty accumulator
accumulate_fn  ``(acc, item) -> acc``          fold one item in (one function per input ordinal)
combine_fn     ``(left, right) -> acc``        merge ``right`` into ``left`` (optional)
deduct_fn      ``(left, right) -> acc``        undo ``combine`` (optional)
export_fn      ``(acc) -> result``             a result, leaving ``acc`` usable (must not mutate it)
finish_fn      ``(acc) -> result``             the final result; may reuse ``acc`` (default: export)
=============  ==============================  =====================================================

Unlike Jet's Java primitives, which mutate the accumulator in place, every Python primitive *returns* the
accumulator. A function may mutate its argument and return it (``list.append`` style) or return a new value,
so immutable accumulators such as ``int`` work: counting is ``create_fn=lambda: 0``,
``accumulate_fn=lambda acc, _: acc + 1``.

Operations with arity > 1 take one accumulate function per inbound ordinal (Jet's ``aggregateOperation2``):
pass a sequence as ``accumulate_fn``. Processors call ``accumulate_fns[ordinal]``.

``fast_path`` is a hint for the built-in processors: the library's ``counting()`` and ``summing()`` set it
(``("counting",)`` and ``("summing", value_fn_or_None)``) so ``accumulate_by_key_p`` and friends can run a
specialised loop. It describes ``create_fn`` and ``accumulate_fn`` only, so derived operations that keep
those two (``and_then``, ``with_identity_finish``) keep it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = ["AggregateOperation", "AggregateOperationBuilder"]


def identity(value: Any) -> Any:
    """The identity function: the default ``export_fn`` and ``with_identity_finish``'s ``finish_fn`` (processors
    test ``fn is identity`` to skip the call)."""
    return value



class AggregateOperation:
    """The primitives of an aggregation; immutable (``with_*``/``and_then`` return new operations).

    Example, a sum of string lengths::

        >>> op = AggregateOperation(lambda: 0, lambda acc, s: acc + len(s), combine_fn=lambda a, b: a + b)
        >>> acc = op.create()
        >>> for word in ["to", "be"]:
        ...     acc = op.accumulate(acc, word)
        >>> op.finish(acc)
        4

    Args:
        create_fn: ``() -> acc``.
        accumulate_fn: ``(acc, item) -> acc``, or a sequence of them, one per input ordinal (arity = its length).
        combine_fn: ``(left, right) -> acc`` or ``None`` when accumulators cannot be merged.
        deduct_fn: ``(left, right) -> acc``, the inverse of combine, or ``None``.
        export_fn: ``(acc) -> result`` (default: the accumulator itself); must not change ``acc``.
        finish_fn: ``(acc) -> result`` (default: ``export_fn``); may reuse ``acc``.
        name: a short description shown in ``repr`` and plans (the library sets e.g. ``"counting()"``).
        fast_path: hint for built-in processors, see the module docstring; leave ``None`` for your own ops.
    """

    __slots__ = (
        "_create_fn", "_accumulate_fns", "_combine_fn", "_deduct_fn", "_export_fn", "_finish_fn",
        "_name", "_fast_path",
    )

    def __init__(
        self,
        create_fn: Callable[[], Any],
        accumulate_fn: Callable[[Any, Any], Any] | Sequence[Callable[[Any, Any], Any]],
        combine_fn: Callable[[Any, Any], Any] | None = None,
        deduct_fn: Callable[[Any, Any], Any] | None = None,
        export_fn: Callable[[Any], Any] | None = None,
        finish_fn: Callable[[Any], Any] | None = None,
        *,
        name: str | None = None,
        fast_path: tuple | None = None,
    ):
        fns = tuple(accumulate_fn) if isinstance(accumulate_fn, (list, tuple)) else (accumulate_fn,)
        if not fns:
            raise DagValidationError("AggregateOperation needs at least one accumulate function, got an empty sequence")
        _check_callable("create_fn", create_fn)
        for i, fn in enumerate(fns):
            _check_callable(f"accumulate_fn[{i}]" if len(fns) > 1 else "accumulate_fn", fn)
        for label, fn in (("combine_fn", combine_fn), ("deduct_fn", deduct_fn),
                          ("export_fn", export_fn), ("finish_fn", finish_fn)):
            if fn is not None:
                _check_callable(label, fn)
        self._create_fn = create_fn
        self._accumulate_fns = fns
        self._combine_fn = combine_fn
        self._deduct_fn = deduct_fn
        self._export_fn = export_fn if export_fn is not None else identity
        self._finish_fn = finish_fn if finish_fn is not None else self._export_fn
        self._name = name
        self._fast_path = fast_path

    # --- the primitives as attributes (processors cache these in locals for their loops) ---
    @property
    def create_fn(self) -> Callable[[], Any]:
        return self._create_fn

    @property
    def accumulate_fns(self) -> tuple[Callable[[Any, Any], Any], ...]:
        """One accumulate function per input ordinal."""
        return self._accumulate_fns

    @property
    def accumulate_fn(self) -> Callable[[Any, Any], Any]:
        """The accumulate function of a single-input (arity 1) operation."""
        if len(self._accumulate_fns) != 1:
            raise DagValidationError(
                f"{self!r} has {self.arity} accumulate functions, one per input ordinal; "
                "use accumulate_fns[ordinal] instead of accumulate_fn"
            )
        return self._accumulate_fns[0]

    @property
    def combine_fn(self) -> Callable[[Any, Any], Any] | None:
        return self._combine_fn

    @property
    def deduct_fn(self) -> Callable[[Any, Any], Any] | None:
        return self._deduct_fn

    @property
    def export_fn(self) -> Callable[[Any], Any]:
        return self._export_fn

    @property
    def finish_fn(self) -> Callable[[Any], Any]:
        return self._finish_fn

    @property
    def arity(self) -> int:
        """The number of inputs (inbound ordinals) this operation accumulates."""
        return len(self._accumulate_fns)

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def fast_path(self) -> tuple | None:
        return self._fast_path

    # --- convenience calls ---
    def create(self) -> Any:
        """A new empty accumulator."""
        return self._create_fn()

    def accumulate(self, acc: Any, item: Any, ordinal: int = 0) -> Any:
        """Fold ``item``, received on input ``ordinal``, into ``acc``; returns the accumulator."""
        if not 0 <= ordinal < len(self._accumulate_fns):
            raise DagValidationError(
                f"{self!r} has {self.arity} accumulating functions, but was asked for the function at index "
                f"{ordinal}; use an operation with one accumulate function per inbound ordinal"
            )
        return self._accumulate_fns[ordinal](acc, item)

    def combine(self, left: Any, right: Any) -> Any:
        """Merge ``right`` into ``left``; returns the accumulator."""
        if self._combine_fn is None:
            raise DagValidationError(f"{self!r} has no combine_fn; pass combine_fn= to AggregateOperation")
        return self._combine_fn(left, right)

    def deduct(self, left: Any, right: Any) -> Any:
        """Undo ``combine(left, right)``; returns the accumulator."""
        if self._deduct_fn is None:
            raise DagValidationError(f"{self!r} has no deduct_fn; pass deduct_fn= to AggregateOperation")
        return self._deduct_fn(left, right)

    def export(self, acc: Any) -> Any:
        """The current result; ``acc`` stays usable."""
        return self._export_fn(acc)

    def finish(self, acc: Any) -> Any:
        """The final result; ``acc`` must not be used afterwards."""
        return self._finish_fn(acc)

    # --- derived operations ---
    def _copy(self, **changes: Any) -> AggregateOperation:
        args = dict(
            create_fn=self._create_fn, accumulate_fn=self._accumulate_fns, combine_fn=self._combine_fn,
            deduct_fn=self._deduct_fn, export_fn=self._export_fn, finish_fn=self._finish_fn,
            name=self._name, fast_path=self._fast_path,
        )
        args.update(changes)
        return AggregateOperation(**args)

    @staticmethod
    def with_create(create_fn: Callable[[], Any]) -> AggregateOperationBuilder:
        """Jet's fluent builder, first step: ``with_create(fn).and_accumulate(fn).and_combine(fn)
        .and_export_finish(fn)`` (see "The fluent builder" below).

        >>> op = AggregateOperation.with_create(list).and_accumulate(list.append).and_export_finish(len)
        >>> op.finish(op.accumulate(op.create(), "x"))
        1
        """

        _check_callable("with_create(create_fn)", create_fn)
        return AggregateOperationBuilder(create_fn)

    def with_identity_finish(self) -> AggregateOperation:
        """The same operation whose ``finish`` returns the accumulator itself (``accumulate_p`` emits this).

        ``export`` on the result raises, as in Jet: an exported accumulator would be shared with the operation.
        """
        return self._copy(export_fn=_export_forbidden, finish_fn=identity,
                          name=f"{self._label()}.with_identity_finish()")

    def and_then(self, fn: Callable[[Any], Any]) -> AggregateOperation:
        """The same operation with ``fn`` applied to the result of export and finish.

        >>> from processors.aggregate.aggregations import counting
        >>> op = counting().and_then(str)
        >>> op.finish(op.accumulate(op.create(), "x"))
        '1'
        """
        _check_callable("and_then(fn)", fn)
        export_fn, finish_fn = self._export_fn, self._finish_fn
        return self._copy(export_fn=lambda acc: fn(export_fn(acc)), finish_fn=lambda acc: fn(finish_fn(acc)),
                          name=f"{self._label()}.and_then({_fn_name(fn)})")

    def with_accumulate_fns(self, *fns: Callable[[Any, Any], Any]) -> AggregateOperation:
        """The same operation with other accumulate functions (one per input ordinal)."""
        return self._copy(accumulate_fn=fns, fast_path=None)

    def with_combining_accumulate_fn(self, get_acc_fn: Callable[[Any], Any]) -> AggregateOperation:
        """An operation whose input items carry accumulators:
        ``accumulate(acc, item) = combine(acc, get_acc_fn(item))``.

        ``combine_p`` uses it with the identity. Needs a ``combine_fn``.
        """
        combine_fn = self._combine_fn
        if combine_fn is None:
            raise DagValidationError(
                f"{self!r} has no combine_fn, so it cannot combine accumulators; "
                "pass combine_fn= to AggregateOperation"
            )
        return self._copy(accumulate_fn=lambda acc, item: combine_fn(acc, get_acc_fn(item)), fast_path=None)

    def _label(self) -> str:
        return self._name or "AggregateOperation"

    def __repr__(self) -> str:
        return f"AggregateOperation({self._label()}, arity={self.arity})"


def _export_forbidden(acc: Any) -> Any:
    raise TypeError(
        "can't use export on an aggregate operation with identity finish (made by with_identity_finish()); "
        "call finish() instead, or export on the original operation"
    )


def _check_callable(label: str, fn: Any) -> None:
    if not callable(fn):
        raise DagValidationError(f"AggregateOperation {label} must be callable, got {fn!r} ({type(fn).__name__})")


def _fn_name(fn: Any) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


# --- The fluent builder ------------------------------------------------------------------------------------
#Jet's fluent builder of aggregate operations: ``AggregateOperation.with_create(fn).and_accumulate(fn)...``.
#
# Jet 4.5's documentation builds custom operations this way (how-to "custom aggregate operation")::
#
#     op = (AggregateOperation.with_create(lambda: [0])
#           .and_accumulate(lambda acc, item: acc.__setitem__(0, acc[0] + item))
#           .and_combine(lambda left, right: left.__setitem__(0, left[0] + right[0]))
#           .and_deduct(lambda left, right: left.__setitem__(0, left[0] - right[0]))
#           .and_export_finish(lambda acc: acc[0]))
#
# The steps, in order: ``with_create(create_fn)``; then ``and_accumulate(fn)`` (one input) or
# ``and_accumulate0(fn)``, ``and_accumulate1(fn)``, ``and_accumulate2(fn)`` (one per input of a co-group, in this
# order); then optionally ``and_combine(fn)`` and ``and_deduct(fn)``; last ``and_export_finish(fn)`` (export and
# finish the same) or ``and_export(fn).and_finish(fn)``. Each step returns a new builder; the last gives an
# :class:`~processors.aggregate.operation.AggregateOperation`.
#
# **Jet's functions mutate the accumulator and return nothing**; jetspark's primitives return it. The builder
# takes both: when ``accumulate``, ``combine`` or ``deduct`` returns ``None`` the (mutated) accumulator is kept,
# otherwise its result is the new accumulator (so ``lambda acc, x: acc + x`` works for an ``int``).
# 



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
