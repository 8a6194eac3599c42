"""The keyed and windowed stages: handles for ``grouping_key(...)`` and ``window(...)`` (Jet's
``BatchStageWithKey``, ``StreamStageWithKey``, ``StageWithWindow``, ``GroupAggregateBuilder``).

They are handles like the stages of :mod:`pipeline.stages` (read its docstring first): each holds the
transform of the stage it came from plus a key function and/or a window definition, and its methods call the
operations (:mod:`pipeline.stateless_ops`, :mod:`pipeline.aggregate_ops`, :mod:`pipeline.stateful_ops`,
:mod:`pipeline.map_lookups`). What they return is a plain stage again, of the kind they were made from: the
handle passes its class in (``plain``), so this module sits below :mod:`pipeline.stages` and the types still
say it, e.g. ``BatchStageWithKey[BatchStage].aggregate(op) -> BatchStage``.

- after ``grouping_key(key_fn)``: the keyed aggregations (``aggregate`` emits ``(key, result)``),
  ``aggregate_builder``, ``distinct``, ``rolling_aggregate``, keyed stateful mapping and the keyed
  ``*_using_*`` forms, whose function gets the key too and whose items are routed by key (Jet's data
  locality); a stream's aggregations need ``window(...)`` first (:class:`NeedsWindow`);
- after ``window(wdef)``: ``aggregate``, ``aggregate2``, ``aggregate3`` and ``distinct`` per window (and key).

>>> from pipeline import Pipeline, Sources, Sinks
>>> from processors import counting
>>> words = Pipeline.create().read_from(Sources.list("words"))
>>> words.grouping_key(len).aggregate(counting())
BatchStage('group-and-aggregate')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, NoReturn, TypeVar

from jetspark_base.errors import DagValidationError
from pipeline import aggregate_ops, map_lookups, stateful_ops, stateless_ops
from pipeline.arg_checks import check_op, check_same_pipeline, check_single_input_op, co_aggregate_args
from pipeline.async_service import DEFAULT_ASYNC_TIMEOUT_S
from pipeline.join import ItemsByTag, Tag
from pipeline.transform_graph import Transform, TransformHandle
from pipeline.window_aggregate import WindowDefinition
from processors.aggregate.operation import AggregateOperation
from processors.api.context_factory import ContextFactory
from processors.api.functions import entry

__all__ = ["NeedsWindow", "StageWithKey", "BatchStageWithKey", "StreamStageWithKey", "StageWithWindow",
           "GroupAggregateBuilder"]

S = TypeVar("S")
"""The kind of plain stage a keyed or windowed stage returns (``BatchStage`` or ``StreamStage``)."""


class NeedsWindow:
    """The batch-only operations of a stream stage: each raises a ``TypeError`` saying to add ``window(...)``."""

    name: str
    _WINDOW_EXAMPLE = ""

    def _batch_only(self, operation: str) -> NoReturn:
        raise TypeError(
            f"stage '{self.name}' is a stream stage: {operation} needs a window, since a stream has no end to "
            f"aggregate at. Add window(...) first, e.g. {self._WINDOW_EXAMPLE}.{operation}")

    def aggregate(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises: a stream aggregates per window (``window(...).aggregate(op)``)."""
        self._batch_only("aggregate(op)")

    def aggregate2(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises: a stream co-aggregates per window (``window(...).aggregate2(...)``)."""
        self._batch_only("aggregate2(...)")

    def aggregate3(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises: a stream co-aggregates per window (``window(...).aggregate3(...)``)."""
        self._batch_only("aggregate3(...)")

    def distinct(self) -> NoReturn:
        """Raises: a stream's distinct items are per window (``window(...).distinct()``)."""
        self._batch_only("distinct()")


class StageWithKey(TransformHandle, Generic[S]):
    """Base of the keyed stages: the transform of the stage it came from, ``key_fn``, and the kind of that
    stage (``S``, e.g. ``BatchStage``), which the keyed operations return."""

    def __init__(self, transform: Transform, key_fn: Callable[[Any], Any], plain: type[S]):
        super().__init__(transform)
        self.key_fn = key_fn
        self._plain = plain

    def map_using_service(self, service_factory: Any, fn: Callable[[Any, Any, Any], Any]) -> S:
        """``fn(service, key, item)``; items of one key always meet the same processor (Jet 4's keyed form)."""
        return self._plain(stateless_ops.using_service(self._transform, "map", service_factory, fn, self.key_fn))

    def filter_using_service(self, service_factory: Any, pred: Callable[[Any, Any, Any], Any]) -> S:
        """The items for which ``pred(service, key, item)`` is true (routed by key)."""
        return self._plain(stateless_ops.using_service(self._transform, "filter", service_factory, pred, self.key_fn))

    def flat_map_using_service(self, service_factory: Any, fn: Callable[[Any, Any, Any], Any]) -> S:
        """Every item of ``fn(service, key, item)`` (routed by key)."""
        return self._plain(stateless_ops.using_service(self._transform, "flat_map", service_factory, fn,
                                                       self.key_fn))

    def map_using_context(self, factory: ContextFactory, fn: Callable[[Any, Any, Any], Any]) -> S:
        """``fn(ctx, key, item)``; items of one key always meet the same context object."""
        return self._plain(stateless_ops.using_context(self._transform, "map", factory, fn, self.key_fn))

    def filter_using_context(self, factory: ContextFactory, pred: Callable[[Any, Any, Any], Any]) -> S:
        """The items for which ``pred(ctx, key, item)`` is true (routed by key)."""
        return self._plain(stateless_ops.using_context(self._transform, "filter", factory, pred, self.key_fn))

    def flat_map_using_context(self, factory: ContextFactory, fn: Callable[[Any, Any, Any], Any]) -> S:
        """Every item of ``fn(ctx, key, item)`` (routed by key)."""
        return self._plain(stateless_ops.using_context(self._transform, "flat_map", factory, fn, self.key_fn))

    def map_using_service_async(self, service_factory: Any, fn: Callable[[Any, Any, Any], Any], *,
                                max_concurrent_ops: int = 4, timeout_s: float = DEFAULT_ASYNC_TIMEOUT_S) -> S:
        """``fn(service, key, item)`` returns a future of the result; items routed by key (Jet 4's keyed form)."""
        return self._plain(stateful_ops.async_service(self._transform, "map-using-service-async", service_factory,
                                                      fn, None, max_concurrent_ops, timeout_s, self.key_fn))

    def map_using_service_async_batched(self, service_factory: Any, max_batch_size: int,
                                        fn: Callable[[Any, list, list], Any], *, max_concurrent_ops: int = 4,
                                        timeout_s: float = DEFAULT_ASYNC_TIMEOUT_S) -> S:
        """``fn(service, keys, items)`` (at most ``max_batch_size`` items and their keys, in order) returns a
        future of a list with one result per item; items routed by key (Jet 4's keyed form).

        >>> stage.grouping_key(user).map_using_service_async_batched(  # doctest: +SKIP
        ...     pool, 16, lambda ex, users, items: ex.submit(lookup_all, users, items))
        """
        return self._plain(stateful_ops.async_service(self._transform, "map-using-service-async-batched",
                                                      service_factory, fn, max_batch_size, max_concurrent_ops,
                                                      timeout_s, self.key_fn))

    def map_using_imap(self, map_or_name: Any, map_fn: Callable[[Any, Any], Any]) -> S:
        """``map_fn(item, value)`` with the driver map's value of the item's grouping key."""
        return self._plain(map_lookups.map_using_imap(self._transform, map_or_name, self.key_fn, map_fn))

    def map_using_replicated_map(self, map_or_name: Any, map_fn: Callable[[Any, Any], Any]) -> S:
        """``map_fn(item, value)`` with the replicated map's value of the item's grouping key."""
        return self._plain(map_lookups.map_using_replicated_map(self._transform, map_or_name, self.key_fn, map_fn))

    def rolling_aggregate(self, op: AggregateOperation) -> S:
        """For every item, ``(key, result of op over the key's items so far)``."""
        return self._plain(aggregate_ops.rolling_aggregate(self._transform, op, self.key_fn))

    def map_stateful(self, *args: Any, **kwargs: Any) -> S:
        """``map_fn(state, key, item)`` with one state per key. Forms: ``map_stateful(create_fn, map_fn)`` and,
        on a stream stage, ``map_stateful(ttl, create_fn, map_fn, on_evict_fn)``: a key's state is dropped
        once the watermark passes its last event time + ``ttl`` ms, and ``on_evict_fn(state, key, watermark)``'s
        non-``None`` result is emitted. States are saved in snapshots.

        >>> stage.grouping_key(user).map_stateful(60_000, list, track, on_evict)  # doctest: +SKIP
        """
        return self._plain(stateful_ops.keyed_stateful(self._transform, self.key_fn, "map", args, kwargs))

    def filter_stateful(self, *args: Any, **kwargs: Any) -> S:
        """The items for which ``filter_fn(state, item)`` is true, one state per key (``filter_stateful(
        create_fn, filter_fn)`` or ``filter_stateful(ttl, create_fn, filter_fn)``; Jet's filter function has no
        key argument)."""
        return self._plain(stateful_ops.keyed_stateful(self._transform, self.key_fn, "filter", args, kwargs))

    def flat_map_stateful(self, *args: Any, **kwargs: Any) -> S:
        """Every item of ``flat_map_fn(state, key, item)``, one state per key (forms as ``map_stateful``)."""
        return self._plain(stateful_ops.keyed_stateful(self._transform, self.key_fn, "flat_map", args, kwargs))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class BatchStageWithKey(StageWithKey[S]):
    """A batch stage with a grouping key (``S``: ``BatchStage``)."""

    def aggregate(self, op: AggregateOperation) -> S:
        """``(key, result)`` per key."""
        return self._plain(aggregate_ops.group_aggregate(self._transform, self.key_fn, op))

    def aggregate2(self, *args: Any, map_to_output_fn: Callable[..., Any] | None = None) -> S:
        """Co-group with ``stage1`` on the key. ``aggregate2(op0, stage1, op1)``: ``(key, (r0, r1))`` or
        ``map_to_output_fn(key, r0, r1)``; ``aggregate2(stage1, op2)`` (Jet 4): ``(key, result)`` or
        ``map_to_output_fn(key, result)``. (A trailing callable is taken as ``map_to_output_fn``.)"""
        return self._co_group("aggregate2", 2, args, map_to_output_fn)

    def aggregate3(self, *args: Any, map_to_output_fn: Callable[..., Any] | None = None) -> S:
        """Co-group with two stages: ``aggregate3(op0, stage1, op1, stage2, op2)`` gives ``(key, (r0, r1,
        r2))``; ``aggregate3(stage1, stage2, op3)`` gives ``(key, result)``."""
        return self._co_group("aggregate3", 3, args, map_to_output_fn)

    def _co_group(self, operation: str, inputs: int, args: tuple, map_to_output_fn: Callable | None) -> S:
        if map_to_output_fn is None and args and callable(args[-1]) and not isinstance(
                args[-1], (AggregateOperation, StageWithKey)):
            args, map_to_output_fn = args[:-1], args[-1]
        stages, op, per_input = co_aggregate_args(self.name, operation, inputs, args)
        upstream, key_fns = [self._transform], [self.key_fn]
        for stage in stages:
            if not isinstance(stage, BatchStageWithKey):
                raise TypeError(f"stage '{self.name}': {operation} co-groups keyed batch stages; give "
                                f"stage.grouping_key(key_fn), got {stage!r:.80}")
            upstream.append(check_same_pipeline(self._transform, stage, operation, (BatchStageWithKey,)))
            key_fns.append(stage.key_fn)
        return self._plain(aggregate_ops.co_group(upstream, key_fns, op, map_to_output_fn, operation, per_input))

    def aggregate_builder(self, op0: AggregateOperation) -> GroupAggregateBuilder[S]:
        """A co-group builder: ``.tag0()``, ``.add(stage_with_key, op) -> Tag``, ``.build(fn(key, ibt))``."""
        return GroupAggregateBuilder(self, check_op(self.name, "aggregate_builder(op0)", op0), self._plain)

    def distinct(self) -> S:
        """The first item of every key."""
        return self._plain(aggregate_ops.distinct(self._transform, self.key_fn))


class StreamStageWithKey(NeedsWindow, StageWithKey[S]):
    """A stream stage with a grouping key (``S``: ``StreamStage``); aggregations need ``window(...)``."""

    _WINDOW_EXAMPLE = "stage.grouping_key(fn).window(WindowDefinition.sliding(60_000, 1_000))"

    def aggregate_builder(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises: a stream co-groups per window (``window(...).aggregate2/3(...)``)."""
        self._batch_only("aggregate_builder(op0)")

    def window(self, window_definition: WindowDefinition) -> StageWithWindow[S]:
        """The windowed keyed form of this stage: ``aggregate``, ``aggregate2/3``, ``distinct``."""
        return StageWithWindow(self._transform, self.key_fn,
                               aggregate_ops.check_window(self._transform, window_definition), self._plain)


class StageWithWindow(Generic[S]):
    """A stream stage (keyed when ``key_fn`` is set) with a window definition: ``aggregate``, ``aggregate2``,
    ``aggregate3``, ``distinct``, which return a stream stage (``S``: ``StreamStage``). Results travel on with
    the window's end as their timestamp (see :mod:`pipeline.window_aggregate` for what they are and how they
    lower)."""

    def __init__(self, transform: Transform, key_fn: Callable[[Any], Any] | None,
                 window_definition: WindowDefinition, plain: type[S]):
        self._transform = transform
        self.key_fn = key_fn
        self.window_definition = window_definition
        self._plain = plain

    @property
    def name(self) -> str:
        """The name of the windowed stage."""
        return self._transform.name

    def grouping_key(self, key_fn: Callable[[Any], Any]) -> StageWithWindow[S]:
        """The manual's (0.7.1) order, ``window(...).grouping_key(fn)``: the same as
        ``grouping_key(fn).window(...)``."""
        if self.key_fn is not None:
            raise DagValidationError(f"stage '{self.name}': this windowed stage already has a grouping key")
        if not callable(key_fn):
            raise TypeError(f"stage '{self.name}': grouping_key(key_fn) needs a callable, got {key_fn!r:.80}")
        return StageWithWindow(self._transform, key_fn, self.window_definition, self._plain)

    def aggregate(self, op: AggregateOperation, map_to_output_fn: Callable[..., Any] | None = None) -> S:
        """``op`` over each window: keyed ``TimestampedEntry(end, key, result)`` (session windows
        ``WindowResult(start, end, key, result)``), un-keyed ``TimestampedItem(end, result)``; or
        ``map_to_output_fn(start, end, key, result)`` (un-keyed ``(start, end, result)``)."""
        check_single_input_op(self.name, "window aggregate(op)", op)
        return self._window(op, [], map_to_output_fn, "aggregate")

    def aggregate2(self, *args: Any, map_to_output_fn: Callable[..., Any] | None = None) -> S:
        """Co-aggregate with ``stage1`` per window (and key): ``aggregate2(op0, stage1, op1)`` (the result is
        ``(r0, r1)``) or ``aggregate2(stage1, op2)`` (the two-input ``op2``'s result, Jet 4)."""
        return self._co_aggregate("aggregate2", 2, args, map_to_output_fn)

    def aggregate3(self, *args: Any, map_to_output_fn: Callable[..., Any] | None = None) -> S:
        """Co-aggregate with two stages per window (and key): ``aggregate3(op0, stage1, op1, stage2, op2)``
        (``(r0, r1, r2)``) or ``aggregate3(stage1, stage2, op3)``."""
        return self._co_aggregate("aggregate3", 3, args, map_to_output_fn)

    def _co_aggregate(self, operation: str, inputs: int, args: tuple,
                      map_to_output_fn: Callable | None) -> S:
        if map_to_output_fn is None and args and callable(args[-1]) and not isinstance(args[-1], AggregateOperation):
            args, map_to_output_fn = args[:-1], args[-1]
        others, op, _ = co_aggregate_args(self.name, f"window {operation}", inputs, args)
        return self._window(op, others, map_to_output_fn, operation)

    def _window(self, op: AggregateOperation, others: list, map_to_output_fn: Callable | None,
                operation: str) -> S:
        upstream, key_fns = [self._transform], [self.key_fn]
        for other in others:
            if self.key_fn is not None and not isinstance(other, StreamStageWithKey):
                raise TypeError(f"stage '{self.name}': windowed {operation} of a keyed stage needs keyed stream "
                                f"stages (stage.grouping_key(key_fn)), got {other!r:.80}")
            if self.key_fn is None and not isinstance(other, self._plain):
                raise TypeError(f"stage '{self.name}': windowed {operation} needs stream stages, got {other!r:.80}")
            upstream.append(check_same_pipeline(self._transform, other, f"window {operation}",
                                                (self._plain, StreamStageWithKey)))
            key_fns.append(other.key_fn if isinstance(other, StreamStageWithKey) else None)
        keys = None if self.key_fn is None else key_fns
        return self._plain(aggregate_ops.window_aggregate(upstream, keys, self.window_definition, op,
                                                          map_to_output_fn, operation))

    def distinct(self) -> S:
        """The distinct items (keyed: one item per key) of each window."""
        return self._plain(aggregate_ops.window_distinct(self._transform, self.key_fn, self.window_definition))

    def __repr__(self) -> str:
        return f"StageWithWindow({self.name!r}, {self.window_definition!r})"


class GroupAggregateBuilder(Generic[S]):
    """Co-groups keyed batch stages on their keys, one aggregate operation per stage (Jet's
    ``GroupAggregateBuilder``); ``build`` returns a batch stage (``S``)."""

    def __init__(self, stage: BatchStageWithKey[S], op0: AggregateOperation, plain: type[S]):
        self._stage = stage
        self._plain = plain
        self._inputs: list[tuple[Transform, Callable[[Any], Any], AggregateOperation]] = [
            (stage.transform, stage.key_fn, op0)]
        self._built = False

    def tag0(self) -> Tag:
        """The tag of the first stage's result."""
        return Tag(0)

    def add(self, stage: BatchStageWithKey[S], op: AggregateOperation) -> Tag:
        """Add a keyed stage aggregated with ``op``; returns the tag of its result."""
        if self._built:
            raise DagValidationError(f"stage '{self._stage.name}': this aggregate builder was already built")
        if not isinstance(stage, BatchStageWithKey):
            raise TypeError(f"stage '{self._stage.name}': aggregate_builder().add(stage, op) needs a keyed batch "
                            f"stage (stage.grouping_key(key_fn)), got {stage!r:.80}")
        transform = check_same_pipeline(self._stage.transform, stage, "aggregate_builder().add(stage, op)",
                                        (BatchStageWithKey,))
        self._inputs.append((transform, stage.key_fn, check_op(self._stage.name, "aggregate_builder().add op", op)))
        return Tag(len(self._inputs) - 1)

    def build(self, map_to_output_fn: Callable[[Any, ItemsByTag], Any] = entry) -> S:
        """``map_to_output_fn(key, items_by_tag)`` per key (default: the entry ``(key, items_by_tag)``)."""
        upstream, key_fns, ops = zip(*self._inputs)
        stage = self._plain(aggregate_ops.group_by_tags(upstream, key_fns, ops, map_to_output_fn))
        self._built = True
        return stage
