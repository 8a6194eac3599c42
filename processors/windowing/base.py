"""What the windowing processors share: naming in errors, argument checks, the watermark order check, the
restore of broadcast positions and ``WindowingSupplier`` (a supplier that describes its
window for DOT, ``describe()`` and ``explain()``).

Snapshot keys (``processors.api.snapshot_keys``): a sliding window saves each (frame, grouping key) accumulator under
``SnapshotKey(frame_ts, key)``, routed on restore by the grouping key to the processor owning it; positions
(``next_win_to_emit``, a session processor's watermark) go under ``BroadcastKey``s, seen by every processor.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from jetspark_base.errors import DagValidationError, ProcessorContractError
from processors.aggregate.operation import AggregateOperation
from processors.execution.lifecycle import describe_processor
from processors.api.processor import AbstractProcessor
from processors.library.stateless import BuiltinSupplier, check_callable
from processors.windowing.definitions import MIN_WATERMARK, BroadcastKey

MAX_RESTORED = 2**63 - 1  # "no position restored" (above any real one)

__all__ = ["WindowingProcessor", "WindowingSupplier", "check_fns", "check_op", "diagnose_failure",
           "raise_diagnosed"]


class WindowingSupplier(BuiltinSupplier):
    """A ``BuiltinSupplier`` that also says what window it computes (``description``), e.g.
    ``sliding window 1000 by 100``; ``to_dot``, ``describe`` and ``explain`` show it."""

    __slots__ = ("description",)

    def __init__(self, processor_class: type, *args: Any, name: str, description: str):
        super().__init__(processor_class, *args, name=name)
        self.description = description

    def __reduce__(self):
        return (_make_windowing_supplier, (self.processor_class, self.args, self.name, self.description))


def _make_windowing_supplier(processor_class: type, args: tuple, name: str, description: str) -> WindowingSupplier:
    return WindowingSupplier(processor_class, *args, name=name, description=description)


def check_op(factory: str, op: Any, arity: int | None = None) -> AggregateOperation:
    """``op`` must be an ``AggregateOperation`` (with ``arity`` accumulate functions when given)."""
    if not isinstance(op, AggregateOperation):
        raise DagValidationError(
            f"{factory}: aggr_op must be an AggregateOperation (e.g. counting()), got {op!r:.80}"
        )
    if arity is not None and op.arity != arity:
        raise DagValidationError(
            f"{factory}: {arity} key function(s) provided for the {op.arity}-arity aggregate operation {op!r}; "
            f"give one key function and one timestamp function per inbound ordinal ({op.arity}), or an operation "
            f"of arity {arity} (aggregate_operation2(...) for two inputs)"
        )
    return op


def check_fns(factory: str, argument: str, fns: Any) -> tuple[Callable[[Any], Any], ...]:
    """A single callable or a sequence of them, as a tuple; each must be callable."""
    fns = tuple(fns) if isinstance(fns, (list, tuple)) else (fns,)
    if not fns:
        raise DagValidationError(f"{factory}: {argument} is empty; give one function per inbound ordinal")
    for i, fn in enumerate(fns):
        check_callable(factory, f"{argument}[{i}]", fn)
    return fns


def diagnose_failure(owner: str, ordinal: int, item: Any, fns: Sequence[tuple[str, Callable[[Any], Any]]],
                     error: BaseException) -> BaseException:
    """The error to raise when processing ``item`` failed with ``error``: re-run ``fns`` (name, fn) to find the
    user function at fault and name it (raise the result ``from error``); ``error`` itself when none of them fails
    (e.g. the aggregate operation did; it is re-raised as it is).
    """
    for argument, fn in fns:
        try:
            fn(item)
        except Exception as exc:
            return ProcessorContractError(
                f"{owner}: {argument}[{ordinal}] failed on item {item!r:.200} of inbound ordinal {ordinal}: "
                f"{type(exc).__name__}: {exc}; make the function handle every item it can receive"
            )
    return error


def raise_diagnosed(owner: str, ordinal: int, item: Any, fns: Sequence[tuple[str, Callable[[Any], Any]]],
                    error: BaseException) -> None:
    """Raise :func:`diagnose_failure`'s error, chained to ``error`` unless it is ``error`` itself."""
    culprit = diagnose_failure(owner, ordinal, item, fns, error)
    if culprit is error:
        raise error
    raise culprit from error


class WindowingProcessor(AbstractProcessor):
    """Base of the windowing processors: owner naming, the watermark order check, snapshot emission and the
    restore of the broadcast position (the minimum over all instances)."""

    _owner = "windowing processor"
    _last_wm_received = MIN_WATERMARK
    _exactly_once = False

    def init_processor(self, context: Any) -> None:
        self._owner = describe_processor(self, getattr(context, "vertex_name", None),
                                         getattr(context, "global_processor_index", None))
        guarantee = getattr(context, "processing_guarantee", None)
        self._exactly_once = getattr(guarantee, "value", guarantee) == "EXACTLY_ONCE"

    def _check_watermark(self, timestamp: int) -> None:
        """A watermark lower than the last one received in this execution is an error (after a restore the
        processor is new, so a lower one is legitimate)."""
        if timestamp < self._last_wm_received:
            raise ProcessorContractError(
                f"{self._owner}: received Watermark({timestamp}) after Watermark({self._last_wm_received}); "
                "watermarks must not go backwards within one execution: generate them in one place "
                "(one insert_watermarks_p or the source) and do not reorder them"
            )
        self._last_wm_received = timestamp

    # ------------------------------------------------------------------ snapshots
    # Subclasses set _position_key (the BroadcastKey of their position) and implement _snapshot_entries() (the
    # keyed entries, then the position) and _restore_keyed(key, value); _min_restored is the restored position.
    _position_key: BroadcastKey | None = None
    _snapshotting: Iterator | None = None
    _min_restored = MAX_RESTORED

    def _snapshot_entries(self) -> Iterator[tuple]:
        raise NotImplementedError

    def _restore_keyed(self, key: Any, value: Any) -> None:
        raise NotImplementedError

    def _emit_snapshot(self) -> bool:
        """Offer ``_snapshot_entries()`` to the snapshot; True when all are out."""
        if self._snapshotting is None:
            self._snapshotting = self._snapshot_entries()
        if not self.emit_from_traverser_to_snapshot(self._snapshotting):
            return False
        self._snapshotting = None
        return True

    def restore_from_snapshot_entry(self, key: Any, value: Any) -> None:
        if not isinstance(key, BroadcastKey):
            self._restore_keyed(key, value)
            return
        if key != self._position_key:
            raise ProcessorContractError(f"{self._owner}: Unexpected broadcast key in snapshot: {key!r}")
        current = self._min_restored
        if self._exactly_once and current != MAX_RESTORED and current != value:
            raise ProcessorContractError(
                f"{self._owner}: different values for {key.key} restored, before={current}, new={value}; "
                "under EXACTLY_ONCE every processor must have saved the same position"
            )
        self._min_restored = min(current, value)  # at-least-once: the most-behind instance's position is safe
