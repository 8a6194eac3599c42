"""Accumulating processors: batch aggregation, grouping by key and sorting (Jet's ``Processors.aggregateP``,
``accumulateByKeyP`` ..., ``sortP``).

All are stateful and emit only from ``complete()``, once every inbound edge is exhausted:

=========================================  ==============================================  ===================
factory                                    emits in ``complete()``                         input ordinal i
=========================================  ==============================================  ===================
``aggregate_p(op)``                        ``op.finish(acc)`` (even for no input), unless   ``op.accumulate_fns[i]``
                                           None
``accumulate_p(op)``                       the accumulator itself                           idem
``combine_p(op)``                          ``op.finish(acc)``; items are accumulators       ``op.combine_fn``
``aggregate_by_key_p(key_fns, op, out)``   ``out(key, op.finish(acc))`` per key, None       ``key_fns[i]``, then op
                                           skipped (default ``out``: entry = 2-tuple)
``accumulate_by_key_p(key_fns, op)``       ``(key, acc)`` per key                           idem
``combine_by_key_p(op, out)``              ``out(key, op.finish(acc))``; items are          ``op.combine_fn``
                                           ``(key, acc)`` entries
``sort_p(key=None)``                       all items, sorted by ``key`` (stable)            any
=========================================  ==============================================  ===================

``key_fns`` is one callable or a list with one per inbound ordinal; its length must equal ``op.arity``.
Keys and results are emitted in first-seen order of the keys.

Fast paths: ``process()`` takes the whole inbox (``inbox.take_all()``) and runs one tight loop. When the
operation is the library's ``counting()`` (``op.fast_path``) the by-key loop counts with CPython's C helper
behind ``collections.Counter``; ``summing()`` gets a loop without accumulate calls; combining counts/sums
just adds.

Snapshots: before ``complete()`` the state is saved; the by-key processors save ``key -> acc`` entries under
the raw grouping key (as Jet's), so on restore each key's accumulator reaches the processor that owns the key
under the partitioned inbound edge (restoring several entries of one key combines them); ``aggregate_p`` and
friends save one accumulator, ``sort_p`` its items, under private keys. Once ``complete()`` has started, the
outputs not yet emitted are saved instead (private keys); a restored processor emits them before its own
results, and a non-keyed aggregator restored mid-emission does not emit a fresh empty result again.

The classes ``AggregateP``, ``AggregateByKeyP``, ``AccumulateByKeyP``, ``CombineByKeyP`` expose
``aggregate_operation``, ``key_fns`` and ``map_to_output_fn`` so the planner can recognise them (and, e.g.,
pre-aggregate on the sending side of ``accumulate_by_key_p -> partitioned -> combine_by_key_p``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import starmap
from typing import Any

from jetspark_base.errors import DagValidationError
from processors.aggregate.operation import AggregateOperation, identity
from processors.api.functions import entry, entry_key, whole_item
from processors.api.inbox import Inbox
from processors.api.outbox import contains_none
from processors.api.processor import Processor
from processors.library.stateless import BuiltinSupplier, check_callable, fn_name

try:  # the C loop behind collections.Counter.update: mapping[x] = mapping.get(x, 0) + 1
    from _collections import _count_elements
except ImportError:  # pragma: no cover - other Pythons
    def _count_elements(mapping: dict, iterable: Iterable[Any]) -> None:
        get = mapping.get
        for element in iterable:
            mapping[element] = get(element, 0) + 1

__all__ = [
    "aggregate_p", "accumulate_p", "combine_p", "aggregate_by_key_p", "accumulate_by_key_p", "combine_by_key_p",
    "sort_p", "AggregateP", "AggregateByKeyP", "AccumulateByKeyP", "CombineByKeyP", "SortP",
]

_MISSING = object()
_OUTPUT, _EMITTING, _ACC, _ITEM = "output", "emitting", "acc", "item"


class _InternalKey(tuple):
    """A snapshot key of the library's own bookkeeping (never equal to a user's grouping key, which is saved raw).

    Routes on restore by the plain tuple ``(kind, index)`` (default partitioner)."""

    __slots__ = ()

    def __new__(cls, kind: str, index: int = 0) -> "_InternalKey":
        return tuple.__new__(cls, (kind, index))

    def __eq__(self, other: object) -> bool:
        return type(other) is _InternalKey and tuple.__eq__(self, other)

    def __hash__(self) -> int:
        return tuple.__hash__(self)

    def partition_key(self) -> tuple:
        return tuple(self)

    def __reduce__(self):
        return (_InternalKey, tuple(self))


class _Accumulating(Processor):
    """Base: gather state while processing, emit ``_results()`` in ``complete()``; snapshot support for both phases.

    Subclasses implement ``process``, ``_results()`` (an iterable; ``None`` results are skipped),
    ``_state_entries()`` and ``_restore_state(key, value)``.
    """

    _outbox: Any = None
    _outputs: list | None = None  # set when complete() first runs
    _position: int = 0
    _restored_outputs: list | None = None  # (index, item) of outputs a processor restored mid-emission saved
    _leftover: tuple | list = ()  # restored outputs, emitted before this processor's own results
    _restored_emitting: bool = False  # a snapshot taken mid-emission was restored here
    _snapshot: Iterator | None = None
    _snapshot_pending: Any = _MISSING

    def init(self, outbox: Any, context: Any) -> None:
        self._outbox = outbox

    def try_process_watermark(self, watermark: Any) -> bool:
        """Forward the watermark (Jet 4's aggregating processors are ``AbstractProcessor``s, which forward it)."""
        return self._outbox.offer(watermark)

    def complete(self) -> bool:
        outputs = self._outputs
        if outputs is None:
            results = without_none(self._results())
            outputs = self._outputs = [*self._leftover, *results] if self._leftover else results
            self._leftover = ()
            self._position = 0
        self._position = self._outbox.offer_many(outputs, self._position, no_none=True)  # None dropped above
        return self._position == len(outputs)

    def save_to_snapshot(self) -> bool:
        if self._snapshot is None:
            self._snapshot = iter(self._snapshot_entries())
            self._snapshot_pending = next(self._snapshot, _MISSING)
        offer, entries = self._outbox.offer_to_snapshot, self._snapshot
        pending = self._snapshot_pending
        while pending is not _MISSING:
            if not offer(pending[0], pending[1]):
                self._snapshot_pending = pending
                return False
            pending = next(entries, _MISSING)
        self._snapshot = None
        self._snapshot_pending = _MISSING
        return True

    def _snapshot_entries(self) -> Iterator[tuple]:
        outputs = self._outputs
        if outputs is None:
            yield from self._state_entries()
            return
        yield _InternalKey(_EMITTING), (True,)
        for i in range(self._position, len(outputs)):
            yield _InternalKey(_OUTPUT, i), (outputs[i],)

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        for key, value in inbox.take_all():
            kind = key[0] if type(key) is _InternalKey else None
            if kind == _EMITTING:
                self._restored_emitting = True
            elif kind == _OUTPUT:
                self._restored_outputs = self._restored_outputs or []
                self._restored_outputs.append((key[1], value[0]))
            else:
                self._restore_state(key, value)

    def finish_snapshot_restore(self) -> bool:
        restored = self._restored_outputs
        if restored is not None:
            self._leftover = [*self._leftover, *(item for _i, item in sorted(restored, key=lambda e: e[0]))]
            self._restored_outputs = None
        return True

    def _results(self) -> Iterable[Any]:
        raise NotImplementedError

    def _state_entries(self) -> Iterator[tuple]:
        raise NotImplementedError

    def _restore_state(self, key: tuple, value: tuple) -> None:
        raise NotImplementedError


def _combine_restored(op: AggregateOperation, owner: str, current: Any, restored: Any) -> Any:
    if current is _MISSING:
        return restored
    if op.combine_fn is None:
        raise DagValidationError(
            f"{owner}: the snapshot being restored holds two accumulators for one key, but {op!r} has no "
            "combine_fn to merge them; give the aggregate operation a combine_fn"
        )
    return op.combine_fn(current, restored)


def _bad_ordinal(owner: str, ordinal: int, op: AggregateOperation) -> DagValidationError:
    return DagValidationError(
        f"{owner} received items on inbound ordinal {ordinal}, but its aggregate operation {op!r} has arity "
        f"{op.arity} (inbound ordinals 0..{op.arity - 1}); connect at most {op.arity} inbound edge(s) or use an "
        "aggregate operation with one accumulate function per inbound ordinal"
    )


class AggregateP(_Accumulating):
    """All input (inbound ordinal i accumulated with ``accumulate_fns[i]``) into one accumulator; emits
    ``finish(acc)`` in ``complete()`` unless it is None. Stateful."""

    def __init__(self, aggregate_operation: AggregateOperation, emitted_operation: AggregateOperation | None = None,
                 combining: bool = False):
        self.aggregate_operation = aggregate_operation
        self.key_fns = ()
        op = emitted_operation if emitted_operation is not None else aggregate_operation
        self._op = op
        self._combining = combining
        self._acc = op.create_fn()

    _restored: bool = False
    _touched: bool = False  # processed input or restored an accumulator

    def process(self, ordinal: int, inbox: Inbox) -> None:
        op = self._op
        self._touched = True
        if self._combining:
            combine, acc = op.combine_fn, self._acc
            for item in inbox.take_all():
                acc = combine(acc, item)
            self._acc = acc
            return
        if ordinal >= op.arity:
            raise _bad_ordinal(type(self).__name__, ordinal, op)
        if op.fast_path == ("counting",):
            self._acc += len(inbox.take_all())
            return
        accumulate, acc = op.accumulate_fns[ordinal], self._acc
        for item in inbox.take_all():
            acc = accumulate(acc, item)
        self._acc = acc

    def _results(self) -> Iterable[Any]:
        if self._restored_emitting and not self._touched:
            return ()  # this processor's result went out (or is in the restored leftover) before the snapshot
        return (self._op.finish_fn(self._acc),)

    def _state_entries(self) -> Iterator[tuple]:
        yield _InternalKey(_ACC), (self._acc,)

    def _restore_state(self, key: tuple, value: tuple) -> None:
        # the first restored accumulator replaces the fresh one, later ones are combined into it
        current = self._acc if self._restored else _MISSING
        self._acc = _combine_restored(self._op, type(self).__name__, current, value[0])
        self._restored = self._touched = True


class AggregateByKeyP(_Accumulating):
    """Groups items by ``key_fns[ordinal](item)`` and accumulates each group; emits
    ``map_to_output_fn(key, op.finish(acc))`` per key in ``complete()`` (None skipped). Stateful.

    Attributes for planners: ``aggregate_operation``, ``key_fns`` (tuple, one per ordinal), ``map_to_output_fn``.
    """

    def __init__(self, key_fns: Sequence[Callable[[Any], Any]], aggregate_operation: AggregateOperation,
                 map_to_output_fn: Callable[[Any, Any], Any] = entry):
        self.aggregate_operation = aggregate_operation
        self.key_fns = tuple(key_fns)
        self.map_to_output_fn = map_to_output_fn
        self._op = self._emitting_operation()
        self._groups: dict = {}

    def _emitting_operation(self) -> AggregateOperation:
        return self.aggregate_operation

    def process(self, ordinal: int, inbox: Inbox) -> None:
        op = self._op
        if ordinal >= len(self.key_fns):
            raise _bad_ordinal(type(self).__name__, ordinal, op)
        key_fn = self.key_fns[ordinal]
        items = inbox.take_all()
        groups = self._groups
        fast_path = op.fast_path
        if fast_path == ("counting",):
            _count_elements(groups, items if key_fn is whole_item else map(key_fn, items))
            return
        get = groups.get
        if fast_path is not None and fast_path[0] == "summing":
            value_fn = fast_path[1]
            if value_fn is None:
                for item in items:
                    key = key_fn(item)
                    groups[key] = get(key, 0) + item
            else:
                for item in items:
                    key = key_fn(item)
                    groups[key] = get(key, 0) + value_fn(item)
            return
        create, accumulate = op.create_fn, op.accumulate_fns[ordinal]
        for item in items:
            key = key_fn(item)
            acc = get(key, _MISSING)
            groups[key] = accumulate(create() if acc is _MISSING else acc, item)

    def _results(self) -> Iterable[Any]:
        return grouped_outputs(self._groups, self._op.finish_fn, self.map_to_output_fn)

    def _state_entries(self) -> Iterator[tuple]:
        return iter(self._groups.items())  # the raw grouping key: restore routes it to the key's owner

    def _restore_state(self, key: Any, value: Any) -> None:
        groups = self._groups
        groups[key] = _combine_restored(self._op, type(self).__name__, groups.get(key, _MISSING), value)


class AccumulateByKeyP(AggregateByKeyP):
    """Groups and accumulates as ``AggregateByKeyP``; emits ``(key, acc)`` entries (the raw accumulators). Stateful.

    ``aggregate_operation`` is the operation as given (its finish is not applied).
    """

    def __init__(self, key_fns: Sequence[Callable[[Any], Any]], aggregate_operation: AggregateOperation):
        super().__init__(key_fns, aggregate_operation, entry)

    def _emitting_operation(self) -> AggregateOperation:
        return self.aggregate_operation.with_identity_finish()


class CombineByKeyP(AggregateByKeyP):
    """Combines ``(key, acc)`` entries by key with ``combine_fn``; emits ``map_to_output_fn(key, finish(acc))``
    per key in ``complete()`` (None skipped). Stateful. ``key_fns`` is ``(entry_key,)``.
    """

    def __init__(self, aggregate_operation: AggregateOperation, map_to_output_fn: Callable[[Any, Any], Any] = entry):
        super().__init__((entry_key,), aggregate_operation, map_to_output_fn)

    def process(self, ordinal: int, inbox: Inbox) -> None:
        items = inbox.take_all()
        groups = self._groups
        get = groups.get
        fast_path = self._op.fast_path
        if fast_path is not None and fast_path[0] in ("counting", "summing"):
            for key, acc in items:
                groups[key] = get(key, 0) + acc
            return
        combine = self._op.combine_fn
        for key, acc in items:
            current = get(key, _MISSING)
            groups[key] = acc if current is _MISSING else combine(current, acc)


class SortP(_Accumulating):
    """Collects all items; emits them sorted by ``key`` (stable; None = the items' natural order) in
    ``complete()``. Stateful."""

    def __init__(self, key: Callable[[Any], Any] | None = None):
        self.key = key
        self._items: list = []

    def process(self, ordinal: int, inbox: Inbox) -> None:
        self._items.extend(inbox.take_all())

    def _results(self) -> Iterable[Any]:
        self._items.sort(key=self.key)
        return self._items

    def _state_entries(self) -> Iterator[tuple]:
        for i, item in enumerate(self._items):
            yield _InternalKey(_ITEM, i), (item,)

    def _restore_state(self, key: tuple, value: tuple) -> None:
        self._items.append(value[0])


def grouped_outputs(groups: dict, finish: Callable[[Any], Any], to_output: Callable[[Any, Any], Any]) -> list:
    """``[to_output(key, finish(acc)) for key, acc in groups.items()]``, without a Python call per key for the
    common ``entry`` output of an operation whose finish is the identity (``counting()``, ``summing()``, ...).

    >>> grouped_outputs({"a": 2, "b": 1}, identity, entry)
    [('a', 2), ('b', 1)]
    >>> grouped_outputs({"a": 2}, lambda acc: acc * 10, lambda key, result: f"{key}={result}")
    ['a=20']
    """
    if finish is identity:
        return list(groups.items()) if to_output is entry else list(starmap(to_output, groups.items()))
    return [to_output(key, finish(acc)) for key, acc in groups.items()]


def without_none(results: Iterable[Any]) -> list:
    """``results`` as a list without its ``None`` items; one C-level scan when there are none (the usual case).

    >>> without_none(iter([1, None, 2]))
    [1, 2]
    """
    results = results if results.__class__ is list else list(results)  # type: ignore[assignment]
    return [r for r in results if r is not None] if contains_none(results) else results  # type: ignore[return-value]


def _check_op(factory: str, op: Any) -> None:
    if not isinstance(op, AggregateOperation):
        raise DagValidationError(
            f"{factory}: expected an AggregateOperation, got {op!r:.80} ({type(op).__name__}); "
            "use one of the library's (counting(), summing(), to_list(), ...) or build one with AggregateOperation"
        )


def _normalise_key_fns(factory: str, key_fns: Any, op: AggregateOperation) -> tuple:
    fns = tuple(key_fns) if isinstance(key_fns, (list, tuple)) else (key_fns,)
    for i, fn in enumerate(fns):
        check_callable(factory, f"key function {i}", fn)
    if len(fns) != op.arity:
        raise DagValidationError(
            f"{factory}: {len(fns)} key function(s) provided for the {op.arity}-arity aggregate operation {op!r}; "
            "pass one key function per inbound ordinal (a single callable for an arity-1 operation)"
        )
    return fns


def aggregate_p(op: AggregateOperation) -> BuiltinSupplier:
    """Aggregates all input into one accumulator; in ``complete()`` emits ``op.finish(acc)`` once (also for no
    input; nothing if it is None). Inbound ordinal i uses ``op.accumulate_fns[i]``. Stateful.

    >>> from processors.aggregate.aggregations import counting
    >>> aggregate_p(counting())
    aggregate_p(counting())
    """
    _check_op("aggregate_p(op)", op)
    return BuiltinSupplier(AggregateP, op, name=f"aggregate_p({_label(op)})")


def accumulate_p(op: AggregateOperation) -> BuiltinSupplier:
    """As ``aggregate_p`` but emits the accumulator itself (``op.with_identity_finish()``). Stateful."""
    _check_op("accumulate_p(op)", op)
    return BuiltinSupplier(AggregateP, op, op.with_identity_finish(), name=f"accumulate_p({_label(op)})")


def combine_p(op: AggregateOperation) -> BuiltinSupplier:
    """Combines input accumulators (e.g. from ``accumulate_p``) with ``op.combine_fn``; in ``complete()`` emits
    ``op.finish(acc)`` once. Stateful. ``op`` must have a ``combine_fn``.
    """
    _check_op("combine_p(op)", op)
    if op.combine_fn is None:
        raise DagValidationError(f"combine_p(op): {op!r} has no combine_fn, so it cannot combine accumulators; "
                                 "give it a combine_fn")
    return BuiltinSupplier(AggregateP, op, None, True, name=f"combine_p({_label(op)})")


def aggregate_by_key_p(key_fns: Callable[[Any], Any] | Sequence[Callable[[Any], Any]], op: AggregateOperation,
                       map_to_output_fn: Callable[[Any, Any], Any] = entry) -> BuiltinSupplier:
    """Groups items by key (``key_fns[i]`` for inbound ordinal i) and aggregates each group; in ``complete()``
    emits ``map_to_output_fn(key, op.finish(acc))`` per key (``(key, result)`` by default; None skipped). Stateful.

    >>> from processors.aggregate.aggregations import counting
    >>> aggregate_by_key_p(len, counting())
    aggregate_by_key_p(len, counting())
    """
    _check_op("aggregate_by_key_p(key_fns, op)", op)
    fns = _normalise_key_fns("aggregate_by_key_p(key_fns, op)", key_fns, op)
    check_callable("aggregate_by_key_p(key_fns, op, map_to_output_fn)", "map_to_output_fn", map_to_output_fn)
    return BuiltinSupplier(AggregateByKeyP, fns, op, map_to_output_fn,
                           name=f"aggregate_by_key_p({_names(fns)}, {_label(op)})")


def accumulate_by_key_p(key_fns: Callable[[Any], Any] | Sequence[Callable[[Any], Any]],
                        op: AggregateOperation) -> BuiltinSupplier:
    """Groups items by key and accumulates each group; in ``complete()`` emits ``(key, acc)`` per key (the raw
    accumulator, for a downstream ``combine_by_key_p``). Stateful."""
    _check_op("accumulate_by_key_p(key_fns, op)", op)
    fns = _normalise_key_fns("accumulate_by_key_p(key_fns, op)", key_fns, op)
    return BuiltinSupplier(AccumulateByKeyP, fns, op, name=f"accumulate_by_key_p({_names(fns)}, {_label(op)})")


def combine_by_key_p(op: AggregateOperation, map_to_output_fn: Callable[[Any, Any], Any] = entry) -> BuiltinSupplier:
    """Combines ``(key, acc)`` entries (from ``accumulate_by_key_p``) by key with ``op.combine_fn``; in
    ``complete()`` emits ``map_to_output_fn(key, op.finish(acc))`` per key (None skipped). Stateful.
    """
    _check_op("combine_by_key_p(op)", op)
    if op.combine_fn is None:
        raise DagValidationError(f"combine_by_key_p(op): {op!r} has no combine_fn, so it cannot combine "
                                 "accumulators; give it a combine_fn")
    check_callable("combine_by_key_p(op, map_to_output_fn)", "map_to_output_fn", map_to_output_fn)
    return BuiltinSupplier(CombineByKeyP, op, map_to_output_fn, name=f"combine_by_key_p({_label(op)})")


def sort_p(key: Callable[[Any], Any] | None = None) -> BuiltinSupplier:
    """Collects all items; in ``complete()`` emits them sorted by ``key`` (stable; None = natural order).
    Stateful. Route its input through an all-to-one edge for one total order.
    """
    if key is not None:
        check_callable("sort_p(key)", "key", key)
    return BuiltinSupplier(SortP, key, name=f"sort_p({fn_name(key) if key is not None else ''})")


def _label(op: AggregateOperation) -> str:
    return op.name or repr(op)


def _names(fns: tuple) -> str:
    return fn_name(fns[0]) if len(fns) == 1 else "[" + ", ".join(fn_name(f) for f in fns) + "]"
