"""The library of aggregate operations, as Jet's ``AggregateOperations``.

Result on empty input in brackets, as Jet's:

===================================  ===================================================  =========  =======
operation                            result                                               combine    deduct
===================================  ===================================================  =========  =======
``counting()``                       number of items [0]                                   yes        yes
``summing(fn=None)``                 sum of ``fn(item)`` (or the items) [0]                yes        yes
``averaging(fn=None)``               mean as float [NaN]                                   yes        yes
``min_by(key=None)``                 smallest item, ties keep the earlier [None]           yes        no
``max_by(key=None)``                 largest item, ties keep the earlier [None]            yes        no
``to_list()`` / ``to_set()``         list / set of the items [[] / set()]                  yes        no
``to_map(key_fn, value_fn, merge)``  dict; duplicate key without ``merge_fn``: ValueError  yes        no
``all_of(*ops)``                     tuple of each op's result                             if all     if all
``mapping(fn, op)``                  ``op`` over ``fn(item)``, ``None`` values skipped     as op      as op
``reducing(identity, fn, comb, d)``  ``comb(...comb(identity, fn(i0))..., fn(in))``        yes        if given
``pick_any()``                       some non-None item [None]                             yes        yes
``sorting(key=None)``                sorted list [[]]                                      yes        no
``concatenating(d, prefix, suffix)`` ``prefix + d.join(non-empty items) + suffix``         yes        no
``grouping_by(key_fn, op=None)``     dict key -> op result (default op: to_list) [{}]      as op      no
``top_n(n, key=None)``               the n largest, largest first [[]]                     yes        no
``bottom_n(n, key=None)``            the n smallest, smallest first [[]]                   yes        no
===================================  ===================================================  =========  =======

Multi-input operations (one accumulate function per inbound ordinal), as Jet's ``aggregateOperation2/3``:
``aggregate_operation2(op0, op1)`` and ``aggregate_operation3(op0, op1, op2)`` aggregate ordinal i with op i and
give a tuple (or ``export_finish_fn(r0, r1[, r2])``).

Mutable accumulators (lists, dicts) are mutated in place and returned; ``export`` copies, ``finish`` may hand
the accumulator over. ``key`` arguments work as in ``sorted``; ``None`` means the item itself.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from processors.aggregate.operation import AggregateOperation

__all__ = [
    "counting", "summing", "averaging", "min_by", "max_by", "to_list", "to_set", "to_map", "all_of", "mapping",
    "reducing", "pick_any", "sorting", "concatenating", "grouping_by", "top_n", "bottom_n",
    "aggregate_operation2", "aggregate_operation3",
]

_MISSING = object()


def _add(a: Any, b: Any) -> Any:
    return a + b


def _sub(a: Any, b: Any) -> Any:
    return a - b


def counting() -> AggregateOperation:
    """Counts the items [0].

    >>> op = counting(); op.finish(op.accumulate(op.accumulate(op.create(), "a"), "b"))
    2
    """
    return AggregateOperation(lambda: 0, lambda acc, _item: acc + 1, _add, _sub,
                              name="counting()", fast_path=("counting",))


def summing(fn: Callable[[Any], Any] | None = None) -> AggregateOperation:
    """Sums ``fn(item)`` (the items themselves when ``fn`` is None) [0]."""
    if fn is None:
        accumulate = _add
    else:
        def accumulate(acc: Any, item: Any) -> Any:
            return acc + fn(item)
    return AggregateOperation(lambda: 0, accumulate, _add, _sub, name="summing()", fast_path=("summing", fn))


def averaging(fn: Callable[[Any], Any] | None = None) -> AggregateOperation:
    """The arithmetic mean of ``fn(item)`` (or the items) as a float [NaN]. Accumulator: ``[count, sum]``."""
    value = fn if fn is not None else (lambda item: item)

    def accumulate(acc: list, item: Any) -> list:
        acc[0] += 1
        acc[1] += value(item)
        return acc

    def combine(left: list, right: list) -> list:
        left[0] += right[0]
        left[1] += right[1]
        return left

    def deduct(left: list, right: list) -> list:
        left[0] -= right[0]
        left[1] -= right[1]
        return left

    def export(acc: list) -> float:
        return acc[1] / acc[0] if acc[0] else float("nan")

    return AggregateOperation(lambda: [0, 0], accumulate, combine, deduct, export, name="averaging()")


def max_by(key: Callable[[Any], Any] | None = None) -> AggregateOperation:
    """The item with the largest ``key(item)``; on ties the earlier item stays [None]. No deduct."""
    return _extreme_by(key, largest=True, name="max_by()")


def min_by(key: Callable[[Any], Any] | None = None) -> AggregateOperation:
    """The item with the smallest ``key(item)``; on ties the earlier item stays [None]. No deduct."""
    return _extreme_by(key, largest=False, name="min_by()")


def _extreme_by(key: Callable[[Any], Any] | None, *, largest: bool, name: str) -> AggregateOperation:
    # accumulator: [] when empty, else [item, key(item)]
    key_of = key if key is not None else (lambda item: item)

    def better(new_key: Any, old_key: Any) -> bool:
        return new_key > old_key if largest else new_key < old_key

    def accumulate(acc: list, item: Any) -> list:
        k = key_of(item)
        if not acc:
            acc.extend((item, k))
        elif better(k, acc[1]):
            acc[0], acc[1] = item, k
        return acc

    def combine(left: list, right: list) -> list:
        if right and (not left or better(right[1], left[1])):
            left[:] = right
        return left

    return AggregateOperation(list, accumulate, combine, None, lambda acc: acc[0] if acc else None, name=name)


def _collection(create: Callable[[], Any], add: Callable[[Any, Any], Any], merge: Callable[[Any, Any], Any],
                name: str) -> AggregateOperation:
    def accumulate(acc: Any, item: Any) -> Any:
        add(acc, item)
        return acc

    def combine(left: Any, right: Any) -> Any:
        merge(left, right)
        return left

    return AggregateOperation(create, accumulate, combine, None, create, lambda acc: acc, name=name)


def to_list() -> AggregateOperation:
    """All items in a list, in arrival order [[]]."""
    return _collection(list, list.append, list.extend, "to_list()")


def to_set() -> AggregateOperation:
    """All distinct items in a set [set()]."""
    return _collection(set, set.add, set.update, "to_set()")


def to_map(key_fn: Callable[[Any], Any], value_fn: Callable[[Any], Any],
           merge_fn: Callable[[Any, Any], Any] | None = None) -> AggregateOperation:
    """A dict ``key_fn(item) -> value_fn(item)`` [{}].

    Two items with the same key are merged with ``merge_fn(old, new)``; without ``merge_fn`` a duplicate key
    raises ``ValueError`` naming the key (on accumulate and on combine), as Jet's ``toMap``.
    """
    def put(acc: dict, k: Any, v: Any) -> None:
        old = acc.get(k, _MISSING)
        if old is _MISSING:
            acc[k] = v
        elif merge_fn is not None:
            acc[k] = merge_fn(old, v)
        else:
            raise ValueError(
                f"to_map: duplicate key {k!r} (values {old!r} and {v!r}); "
                "pass merge_fn to to_map() to say how values with the same key combine"
            )

    def accumulate(acc: dict, item: Any) -> dict:
        put(acc, key_fn(item), value_fn(item))
        return acc

    def combine(left: dict, right: dict) -> dict:
        for k, v in right.items():
            put(left, k, v)
        return left

    return AggregateOperation(dict, accumulate, combine, None, dict, lambda acc: acc, name="to_map()")


def all_of(*ops: AggregateOperation) -> AggregateOperation:
    """Runs several single-input operations over the same items; the result is a tuple of their results.

    ``combine``/``deduct`` exist only when every component has them.

    >>> op = all_of(counting(), summing())
    >>> acc = op.create()
    >>> for x in [1, 2, 3]:
    ...     acc = op.accumulate(acc, x)
    >>> op.finish(acc)
    (3, 6)
    """
    if not ops:
        raise DagValidationError("all_of() needs at least one aggregate operation, e.g. all_of(counting(), summing())")
    for i, op in enumerate(ops):
        _check_op(f"all_of() argument {i}", op)
        if op.arity != 1:
            raise DagValidationError(f"all_of() argument {i} ({op!r}) has arity {op.arity}; all_of needs arity 1")
    fns = [op.accumulate_fn for op in ops]

    def accumulate(acc: list, item: Any) -> list:
        for i, fn in enumerate(fns):
            acc[i] = fn(acc[i], item)
        return acc

    return _composite(ops, accumulate, None, "all_of(" + ", ".join(map(_label, ops)) + ")")


def aggregate_operation2(op0: AggregateOperation, op1: AggregateOperation,
                         export_finish_fn: Callable[..., Any] | None = None) -> AggregateOperation:
    """A 2-input operation: items of ordinal 0 go to ``op0``, of ordinal 1 to ``op1`` (Jet's aggregateOperation2).

    The result is ``(r0, r1)`` or ``export_finish_fn(r0, r1)``.
    """
    return _co_aggregate((op0, op1), export_finish_fn)


def aggregate_operation3(op0: AggregateOperation, op1: AggregateOperation, op2: AggregateOperation,
                         export_finish_fn: Callable[..., Any] | None = None) -> AggregateOperation:
    """A 3-input operation: ordinal i goes to ``op_i``; the result is ``(r0, r1, r2)`` or ``export_finish_fn(...)``."""
    return _co_aggregate((op0, op1, op2), export_finish_fn)


def _co_aggregate(ops: tuple[AggregateOperation, ...], export_finish_fn: Callable[..., Any] | None
                  ) -> AggregateOperation:
    for i, op in enumerate(ops):
        _check_op(f"aggregate_operation{len(ops)}() argument {i}", op)
        if op.arity != 1:
            raise DagValidationError(f"aggregate_operation{len(ops)}() argument {i} ({op!r}) has arity {op.arity}; "
                                     "each input needs an arity-1 operation")

    def accumulator_for(i: int, fn: Callable[[Any, Any], Any]) -> Callable[[list, Any], list]:
        def accumulate(acc: list, item: Any) -> list:
            acc[i] = fn(acc[i], item)
            return acc
        return accumulate

    accumulates = [accumulator_for(i, op.accumulate_fn) for i, op in enumerate(ops)]
    return _composite(ops, accumulates, export_finish_fn, f"aggregate_operation{len(ops)}()")


def _composite(ops: tuple[AggregateOperation, ...], accumulate: Any,
               export_finish_fn: Callable[..., Any] | None, name: str) -> AggregateOperation:
    """An operation whose accumulator is the list of the components' accumulators."""
    def pairwise(fns: list) -> Callable[[list, list], list]:
        def apply(left: list, right: list) -> list:
            for i, fn in enumerate(fns):
                left[i] = fn(left[i], right[i])
            return left
        return apply

    def results(fns: list) -> Callable[[list], Any]:
        if export_finish_fn is None:
            return lambda acc: tuple([fn(a) for fn, a in zip(fns, acc)])
        return lambda acc: export_finish_fn(*[fn(a) for fn, a in zip(fns, acc)])

    combines = [op.combine_fn for op in ops]
    deducts = [op.deduct_fn for op in ops]
    return AggregateOperation(
        lambda: [op.create_fn() for op in ops],
        accumulate,
        pairwise(combines) if all(f is not None for f in combines) else None,
        pairwise(deducts) if all(f is not None for f in deducts) else None,
        results([op.export_fn for op in ops]),
        results([op.finish_fn for op in ops]),
        name=name,
    )


def mapping(fn: Callable[[Any], Any], op: AggregateOperation) -> AggregateOperation:
    """``op`` applied to ``fn(item)``; items whose mapped value is None are skipped. Inherits op's other primitives.

    >>> m = mapping(len, summing()); m.finish(m.accumulate(m.create(), "abc"))
    3
    """
    _check_op("mapping() operation", op)
    downstream = op.accumulate_fn

    def accumulate(acc: Any, item: Any) -> Any:
        value = fn(item)
        return acc if value is None else downstream(acc, value)

    return AggregateOperation(op.create_fn, accumulate, op.combine_fn, op.deduct_fn, op.export_fn, op.finish_fn,
                              name=f"mapping({_label(op)})")


def reducing(identity: Any, fn: Callable[[Any], Any], combine_fn: Callable[[Any, Any], Any],
             deduct_fn: Callable[[Any, Any], Any] | None = None) -> AggregateOperation:
    """Reduces ``fn(item)`` values with ``combine_fn``, starting from ``identity`` [identity].

    ``identity`` is reused by every accumulator, so it should be immutable (a number, a string, a tuple).

    >>> op = reducing(1, lambda x: x, lambda a, b: a * b); op.finish(op.accumulate(op.accumulate(op.create(), 3), 4))
    12
    """
    return AggregateOperation(lambda: identity, lambda acc, item: combine_fn(acc, fn(item)), combine_fn, deduct_fn,
                              name="reducing()")


def pick_any() -> AggregateOperation:
    """Some item of the input; None items are ignored [None]. Accumulator ``[item, count]``; deduct to 0 resets."""
    def accumulate(acc: list, item: Any) -> list:
        if item is not None:
            if acc[0] is None:
                acc[0] = item
            acc[1] += 1
        return acc

    def combine(left: list, right: list) -> list:
        if left[0] is None:
            left[0] = right[0]
        left[1] += right[1]
        return left

    def deduct(left: list, right: list) -> list:
        left[1] -= right[1]
        if left[1] <= 0:
            left[0], left[1] = None, 0
        return left

    return AggregateOperation(lambda: [None, 0], accumulate, combine, deduct, lambda acc: acc[0], name="pick_any()")


def sorting(key: Callable[[Any], Any] | None = None) -> AggregateOperation:
    """All items in a list sorted by ``key`` (stable: equal items keep arrival order) [[]]. No deduct."""
    def accumulate(acc: list, item: Any) -> list:
        acc.append(item)
        return acc

    def combine(left: list, right: list) -> list:
        left.extend(right)
        return left

    def finish(acc: list) -> list:
        acc.sort(key=key)
        return acc

    return AggregateOperation(list, accumulate, combine, None, lambda acc: sorted(acc, key=key), finish,
                              name="sorting()")


def concatenating(delimiter: str = "", prefix: str = "", suffix: str = "") -> AggregateOperation:
    """The string items joined: ``prefix + delimiter.join(items) + suffix`` [``prefix + suffix``].

    Empty strings add nothing, not even a delimiter, as in Jet. Items must be ``str``
    (use ``mapping(str, concatenating(...))`` for other types).

    >>> op = concatenating(",", "(", ")"); acc = op.create()
    >>> for s in ["a", "", "b"]:
    ...     acc = op.accumulate(acc, s)
    >>> op.finish(acc)
    '(a,b)'
    """
    def accumulate(acc: list, item: Any) -> list:
        if not isinstance(item, str):
            raise TypeError(f"concatenating() accepts str items, got {item!r} ({type(item).__name__}); "
                            "use mapping(str, concatenating(...)) to convert them")
        if item:
            acc.append(item)
        return acc

    def combine(left: list, right: list) -> list:
        left.extend(right)
        return left

    return AggregateOperation(list, accumulate, combine, None, lambda acc: prefix + delimiter.join(acc) + suffix,
                              name="concatenating()")


def grouping_by(key_fn: Callable[[Any], Any], op: AggregateOperation | None = None) -> AggregateOperation:
    """A dict ``key_fn(item) -> result of op over the items with that key`` (default op: ``to_list()``) [{}].

    Combine exists when ``op`` has one; no deduct.

    >>> g = grouping_by(len, counting()); acc = g.create()
    >>> for w in ["a", "bb", "c"]:
    ...     acc = g.accumulate(acc, w)
    >>> g.finish(acc)
    {1: 2, 2: 1}
    """
    op = op if op is not None else to_list()
    _check_op("grouping_by() operation", op)
    create, downstream, op_combine = op.create_fn, op.accumulate_fn, op.combine_fn
    export_fn, finish_fn = op.export_fn, op.finish_fn

    def accumulate(acc: dict, item: Any) -> dict:
        k = key_fn(item)
        current = acc.get(k, _MISSING)
        acc[k] = downstream(create() if current is _MISSING else current, item)
        return acc

    def combine(left: dict, right: dict) -> dict:
        for k, v in right.items():
            current = left.get(k, _MISSING)
            left[k] = v if current is _MISSING else op_combine(current, v)
        return left

    return AggregateOperation(
        dict, accumulate, combine if op_combine is not None else None, None,
        lambda acc: {k: export_fn(v) for k, v in acc.items()},
        lambda acc: {k: finish_fn(v) for k, v in acc.items()},
        name=f"grouping_by({_label(op)})",
    )


class _Reversed:
    """Inverts the order of a key, so one min-heap serves both top_n and bottom_n."""

    __slots__ = ("key",)

    def __init__(self, key: Any):
        self.key = key

    def __lt__(self, other: _Reversed) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and self.key == other.key


def top_n(n: int, key: Callable[[Any], Any] | None = None) -> AggregateOperation:
    """The ``n`` largest items by ``key``, largest first [[]]; among equals the earlier stays. No deduct.

    >>> op = top_n(2); acc = op.create()
    >>> for x in [3, 1, 4, 1, 5]:
    ...     acc = op.accumulate(acc, x)
    >>> op.finish(acc)
    [5, 4]
    """
    return _n_extremes(n, key, reverse=False, name=f"top_n({n})")


def bottom_n(n: int, key: Callable[[Any], Any] | None = None) -> AggregateOperation:
    """The ``n`` smallest items by ``key``, smallest first [[]]; among equals the earlier stays. No deduct."""
    return _n_extremes(n, key, reverse=True, name=f"bottom_n({n})")


def _n_extremes(n: int, key: Callable[[Any], Any] | None, *, reverse: bool, name: str) -> AggregateOperation:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise DagValidationError(f"{name.split('(')[0]}(n) needs a positive int n, got {n!r}")
    key_of = key if key is not None else (lambda item: item)
    # accumulator: [next_seq, heap]; heap entries (ordered_key, -seq, item): the root is the weakest kept item,
    # and among equal keys the latest arrival is the weakest, so earlier items survive ties
    ordered = (lambda item: _Reversed(key_of(item))) if reverse else key_of

    def accumulate(acc: list, item: Any) -> list:
        entry = (ordered(item), -acc[0], item)
        acc[0] += 1
        heap = acc[1]
        if len(heap) < n:
            heapq.heappush(heap, entry)
        elif heap[0][0] < entry[0]:
            heapq.heapreplace(heap, entry)
        return acc

    def combine(left: list, right: list) -> list:
        for _key, _seq, item in sorted(right[1], key=lambda e: -e[1]):  # right's items in their arrival order
            accumulate(left, item)
        return left

    def export(acc: list) -> list:
        return [e[2] for e in sorted(acc[1], reverse=True)]

    return AggregateOperation(lambda: [0, []], accumulate, combine, None, export, name=name)


def _label(op: AggregateOperation) -> str:
    return op.name or repr(op)


def _check_op(label: str, op: Any) -> None:
    if not isinstance(op, AggregateOperation):
        raise DagValidationError(f"{label} must be an AggregateOperation, got {op!r} ({type(op).__name__})")
