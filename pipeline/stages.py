"""Pipeline stages: ``BatchStage``, ``StreamStage``, their keyed forms, the stream-source stage and ``SinkStage``.

A stage is a handle on one :class:`~pipeline.transforms.Transform` of its pipeline; every operation adds a
transform and returns the stage for it, so calls chain. Which operations a stage offers follows Jet 4.0:

- every compute stage (:class:`GeneralStage`): ``map``, ``filter``, ``flat_map``, the ``*_using_context``
  forms, ``merge``, ``peek``, ``hash_join``/``hash_join2``/``hash_join_builder``, ``custom_transform``,
  ``rolling_aggregate``, ``grouping_key``, ``write_to`` (alias ``drain_to``), ``set_name``,
  ``set_local_parallelism``;
- :class:`BatchStage` adds ``aggregate``, ``aggregate2``, ``aggregate3``, ``distinct``;
- :class:`StreamStage` adds ``window`` and the timestamp operations (see :mod:`pipeline.stream_stages`); the
  batch-only operations raise a ``TypeError`` that says to add ``window(...)`` first;
- after ``grouping_key(key_fn)`` (:class:`BatchStageWithKey`, :class:`StreamStageWithKey`): the keyed
  aggregations (``aggregate`` emits ``(key, result)``), ``aggregate_builder``, ``distinct``,
  ``rolling_aggregate`` and the keyed ``*_using_context`` forms, whose function gets ``(ctx, key, item)`` and
  whose items are routed by key (Jet's data locality).

Once a stream stage has timestamps its transform is marked ``events``: items travel as ``JetEvent`` and the
stateless operations adapt the user's functions so they see plain items and outputs keep the timestamp.

>>> from pipeline import Pipeline, Sources, Sinks
>>> p = Pipeline.create()
>>> p.read_from(Sources.list("in")).map(str.upper).write_to(Sinks.list("out")).name
'listSink(out)'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jetspark_base.errors import DagValidationError
from pipeline import internal
from pipeline.connectors import as_sink
from pipeline.map_lookups import KeyedMapLookupOps, MapLookupOps
from pipeline.more_stages import MoreBatchOps, MoreKeyedOps, MoreStageOps
from pipeline.services import KeyedServiceFn, ServiceFactory
from pipeline.transforms import (
    AggregateTransform,
    DistinctTransform,
    HashJoinTransform,
    PeekTransform,
    RollingAggregateTransform,
    SinkTransform,
    StatelessTransform,
    Transform,
)
from processors.aggregate.operation import AggregateOperation
from processors.aggregate.aggregations import _co_aggregate
from processors.api.context_factory import ContextFactory
from processors.api.functions import entry, whole_item
from processors.library.stateless import (
    filter_p,
    filter_using_context_p,
    flat_map_p,
    flat_map_using_context_p,
    map_p,
    map_using_context_p,
)

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.builders import GroupAggregateBuilder, HashJoinBuilder
    from pipeline.join import JoinClause

__all__ = [
    "Stage", "GeneralStage", "BatchStage", "StreamStage", "StageWithKey", "BatchStageWithKey",
    "StreamStageWithKey", "SinkStage",
]


def check_callable(stage: str, label: str, fn: Any) -> None:
    if not callable(fn):
        raise TypeError(f"stage '{stage}': {label} must be callable, got {fn!r:.80} ({type(fn).__name__})")


def check_op(stage: str, label: str, op: Any) -> AggregateOperation:
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


_USING_P = {"map": map_using_context_p, "filter": filter_using_context_p, "flat_map": flat_map_using_context_p}


class Stage:
    """Base of all stages: the transform, its pipeline, ``name``, ``set_name``, ``set_local_parallelism``."""

    def __init__(self, transform: Transform):
        self._transform = transform

    @property
    def name(self) -> str:
        """The stage's name (its vertex name, before ``-2``/``-3`` for repeated names)."""
        return self._transform.name

    @property
    def pipeline(self) -> Any:
        return self._transform.pipeline

    def set_name(self, name: str) -> Stage:
        """Name the stage (its vertex name); returns the stage."""
        if not isinstance(name, str) or not name:
            raise DagValidationError(f"stage '{self.name}': set_name(name) needs a non-empty str, got {name!r}")
        self._transform.name = name
        return self

    def set_local_parallelism(self, local_parallelism: int | None) -> Stage:
        """Processors per member of the stage's vertex (``None`` or -1: the default); returns the stage."""
        lp = local_parallelism
        if lp == -1:
            lp = None
        if lp is not None and (isinstance(lp, bool) or not isinstance(lp, int) or lp < 1):
            raise DagValidationError(f"stage '{self.name}': set_local_parallelism({local_parallelism!r}) needs an "
                                     "int >= 1, or None (-1) for the default")
        self._transform.local_parallelism = lp
        return self

    def _check_same_pipeline(self, other: Any, operation: str) -> Transform:
        transform = getattr(other, "_transform", None)
        if not isinstance(other, GeneralStage) or transform is None:
            raise TypeError(f"stage '{self.name}': {operation} needs a compute stage of this pipeline, got "
                            f"{other!r:.80} ({type(other).__name__})")
        if transform.pipeline is not self._transform.pipeline:
            raise DagValidationError(
                f"stage '{self.name}': {operation} was given stage '{other.name}' of another pipeline; build both "
                "stages from the same Pipeline (p.read_from(...) on the pipeline you lower)")
        return transform

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class SinkStage(Stage):
    """The stage ``write_to`` returns; nothing can be attached to it."""


class GeneralStage(MapLookupOps, MoreStageOps, Stage):
    """The operations of every compute stage (batch or stream)."""

    @property
    def _events(self) -> bool:
        return self._transform.events

    def _attach(self, transform: Transform) -> Any:
        return type(self)(transform)

    def _stateless(self, name: str, supplier: Any, *, events: bool | None = None) -> Any:
        events = self._events if events is None else events
        return self._attach(StatelessTransform(self.pipeline, name, supplier, [self._transform], events))

    # ---------------------------------------------------------------- stateless
    def map(self, fn: Callable[[Any], Any]) -> Any:
        """``fn(item)`` for every item; a ``None`` result drops the item."""
        check_callable(self.name, "map(fn)", fn)
        return self._stateless("map", map_p(internal.EventMap(fn) if self._events else fn))

    def filter(self, pred: Callable[[Any], Any]) -> Any:
        """The items for which ``pred(item)`` is true."""
        check_callable(self.name, "filter(pred)", pred)
        return self._stateless("filter", filter_p(internal.EventFilter(pred) if self._events else pred))

    def flat_map(self, fn: Callable[[Any], Any]) -> Any:
        """Every item of the iterable (or ``Traverser``) ``fn(item)`` returns."""
        check_callable(self.name, "flat_map(fn)", fn)
        return self._stateless("flat-map", flat_map_p(internal.EventFlatMap(fn) if self._events else fn))

    def _using_context(self, kind: str, factory: ContextFactory, fn: Callable) -> Any:
        if not isinstance(factory, ContextFactory):
            raise TypeError(f"stage '{self.name}': {kind}_using_context(factory, fn) needs a ContextFactory "
                            f"(ContextFactory.with_create_fn(fn)), got {factory!r:.80}")
        check_callable(self.name, f"{kind}_using_context(factory, fn)", fn)
        return self._using(kind, factory, fn, "context")

    def _using(self, kind: str, factory: ContextFactory, fn: Callable, what: str) -> Any:
        adapted = internal.EventUsingContext(fn, kind) if self._events else fn
        return self._stateless(f"{kind.replace('_', '-')}-using-{what}", _USING_P[kind](factory, adapted))

    def _using_service(self, kind: str, factory: Any, fn: Callable) -> Any:
        operation = f"{kind}_using_service(service_factory, fn)"
        context_factory = check_service_factory(self.name, operation, factory)
        check_callable(self.name, operation, fn)
        return self._using(kind, context_factory, fn, "service")

    def map_using_service(self, service_factory: Any, fn: Callable[[Any, Any], Any]) -> Any:
        """``fn(service, item)`` with the service of ``service_factory`` (Jet 4); ``None`` drops the item.

        >>> rates = ServiceFactories.shared_service(lambda ctx: {"EUR": 1.1})  # doctest: +SKIP
        >>> stage.map_using_service(rates, lambda r, trade: trade.amount * r[trade.currency])  # doctest: +SKIP
        """
        return self._using_service("map", service_factory, fn)

    def filter_using_service(self, service_factory: Any, pred: Callable[[Any, Any], Any]) -> Any:
        """The items for which ``pred(service, item)`` is true."""
        return self._using_service("filter", service_factory, pred)

    def flat_map_using_service(self, service_factory: Any, fn: Callable[[Any, Any], Any]) -> Any:
        """Every item of ``fn(service, item)``."""
        return self._using_service("flat_map", service_factory, fn)

    def map_using_context(self, factory: ContextFactory, fn: Callable[[Any, Any], Any]) -> Any:
        """``fn(ctx, item)`` with the object ``factory`` creates for each processor; ``None`` drops the item."""
        return self._using_context("map", factory, fn)

    def filter_using_context(self, factory: ContextFactory, pred: Callable[[Any, Any], Any]) -> Any:
        """The items for which ``pred(ctx, item)`` is true."""
        return self._using_context("filter", factory, pred)

    def flat_map_using_context(self, factory: ContextFactory, fn: Callable[[Any, Any], Any]) -> Any:
        """Every item of ``fn(ctx, item)``."""
        return self._using_context("flat_map", factory, fn)

    def merge(self, other: GeneralStage) -> Any:
        """All items of this stage and of ``other`` (a stage of the same kind)."""
        transform = self._check_same_pipeline(other, "merge(other)")
        if type(other) is not type(self) or transform.events != self._events:
            raise TypeError(f"stage '{self.name}': merge(other) needs a stage of the same kind "
                            f"({type(self).__name__}{', with timestamps' if self._events else ''}); "
                            f"stage '{other.name}' is a {type(other).__name__}"
                            f"{' with timestamps' if transform.events else ''}")
        return self._attach(StatelessTransform(self.pipeline, "merge", map_p(whole_item),
                                               [self._transform, transform], self._events))

    def peek(self, to_string_fn: Callable[[Any], Any] = str,
             should_log_fn: Callable[[Any], Any] | None = None) -> Any:
        """Log the items this stage emits (``"Output to ordinal N: text"``); adds no vertex. Returns a stage
        with the same items."""
        check_callable(self.name, "peek(to_string_fn)", to_string_fn)
        if should_log_fn is not None:
            check_callable(self.name, "peek(should_log_fn)", should_log_fn)
        return self._attach(PeekTransform(self.pipeline, self._transform, to_string_fn, should_log_fn))

    def custom_transform(self, name: str, processor_supplier: Any) -> Any:
        """A vertex named ``name`` running ``processor_supplier`` on this stage's items. Its processors get
        plain items (never the internal timestamp wrapper) and what they emit has no timestamps."""
        if not isinstance(name, str) or not name:
            raise DagValidationError(f"stage '{self.name}': custom_transform(name, supplier) needs a name")
        if self._events:
            processor_supplier = internal.MappedMetaSupplier(processor_supplier, internal.unwrap_events)
        return self._stateless(name, processor_supplier, events=False)

    # ---------------------------------------------------------------- hash-join
    def _joined(self, stage: Any, clause: Any, operation: str) -> Transform:
        from pipeline.join import JoinClause

        transform = self._check_same_pipeline(stage, operation)
        if not isinstance(stage, BatchStage):
            raise TypeError(
                f"stage '{self.name}': {operation} was given the {type(stage).__name__} '{stage.name}' as the "
                "joined (enriching) side; it must be a BatchStage, since hash-join reads it in full before the "
                "first item of this stage. Read the enriching data with a batch source (Sources.map, "
                "Sources.list), or swap the two stages")
        if not isinstance(clause, JoinClause):
            raise TypeError(f"stage '{self.name}': {operation} needs a JoinClause (JoinClause.join_map_entries("
                            f"key_fn) or JoinClause.on_keys(...)), got {clause!r:.80}")
        return transform

    def _hash_join(self, joined: list, clauses: list, fn: Callable, mode: str, tags: tuple = (),
                   inner: bool = False) -> Any:
        return self._attach(HashJoinTransform(self.pipeline, [self._transform, *joined], clauses, fn, mode, tags,
                                              inner))

    def hash_join(self, other: BatchStage, join_clause: JoinClause,
                  map_to_output_fn: Callable[[Any, Any], Any]) -> Any:
        """Join every item with the matching item of ``other``: ``map_to_output_fn(item, right)``.

        An item without a match is joined with ``None``; an item whose key matches several right items gives
        one output per match (Jet 4.1's many-to-many join), so joining with a stage that has duplicate keys
        multiplies the output. A ``None`` result drops the item.

        >>> trades.hash_join(stock_info, JoinClause.join_map_entries(ticker_of),
        ...                  lambda trade, info: (trade, info))  # doctest: +SKIP
        """
        joined = self._joined(other, join_clause, "hash_join(other, clause, fn)")
        check_callable(self.name, "hash_join map_to_output_fn", map_to_output_fn)
        return self._hash_join([joined], [join_clause], map_to_output_fn, "bi")

    def hash_join2(self, stage1: BatchStage, join_clause1: JoinClause, stage2: BatchStage,
                   join_clause2: JoinClause, map_to_output_fn: Callable[[Any, Any, Any], Any]) -> Any:
        """Join with two stages: ``map_to_output_fn(item, right1, right2)``."""
        operation = "hash_join2(stage1, clause1, stage2, clause2, fn)"
        joined = [self._joined(stage1, join_clause1, operation), self._joined(stage2, join_clause2, operation)]
        check_callable(self.name, "hash_join2 map_to_output_fn", map_to_output_fn)
        return self._hash_join(joined, [join_clause1, join_clause2], map_to_output_fn, "tri")

    def hash_join_builder(self) -> HashJoinBuilder:
        """A builder joining any number of stages: ``.add(stage, clause) -> Tag``, ``.build(fn(item, ibt))``."""
        from pipeline.builders import HashJoinBuilder

        return HashJoinBuilder(self)

    # ---------------------------------------------------------------- keyed and rolling
    def grouping_key(self, key_fn: Callable[[Any], Any]) -> Any:
        """The keyed form of this stage: aggregations per key, distinct by key, keyed context lookups."""
        check_callable(self.name, "grouping_key(key_fn)", key_fn)
        return self._keyed_class()(self, key_fn)

    def _keyed_class(self) -> type:
        raise NotImplementedError

    def rolling_aggregate(self, op: AggregateOperation) -> Any:
        """For every item, the result of ``op`` over all items so far (one processor in the whole job)."""
        check_op(self.name, "rolling_aggregate(op)", op)
        return self._attach(RollingAggregateTransform(self.pipeline, self._transform, op, None))

    # ---------------------------------------------------------------- sinks
    def write_to(self, sink: Any) -> SinkStage:
        """Drain this stage's items into ``sink``; returns the sink stage (nothing attaches to it)."""
        descriptor = as_sink(sink)
        return SinkStage(SinkTransform(self.pipeline, descriptor.name, descriptor.supplier, self._transform))

    drain_to = write_to


class BatchStage(MoreBatchOps, GeneralStage):
    """A stage of a bounded pipeline branch."""

    def _keyed_class(self) -> type:
        return BatchStageWithKey

    def aggregate(self, op: AggregateOperation) -> BatchStage:
        """One item: ``op``'s result over all items."""
        check_single_input_op(self.name, "aggregate(op)", op)
        return BatchStage(AggregateTransform(self.pipeline, "aggregate", [self._transform], op))

    def aggregate2(self, *args: Any) -> BatchStage:
        """Co-aggregate with ``stage1``: ``aggregate2(op0, stage1, op1)`` gives one item ``(r0, r1)``;
        ``aggregate2(stage1, op2)`` (Jet 4) one item, the result of the two-input ``op2``.

        >>> counts = p.read_from(a).aggregate2(p.read_from(b), aggregate_operation2(counting(), counting()))
        ... # doctest: +SKIP
        """
        return self._aggregate_n("aggregate2", *co_aggregate_args(self.name, "aggregate2", 2, args)[:2])

    def aggregate3(self, *args: Any) -> BatchStage:
        """``aggregate3(op0, stage1, op1, stage2, op2)`` gives ``(r0, r1, r2)``; ``aggregate3(stage1, stage2,
        op3)`` the result of the three-input ``op3``."""
        return self._aggregate_n("aggregate3", *co_aggregate_args(self.name, "aggregate3", 3, args)[:2])

    def _aggregate_n(self, operation: str, stages: list, op: AggregateOperation) -> BatchStage:
        upstream = [self._transform]
        for stage in stages:
            transform = self._check_same_pipeline(stage, operation)
            if not isinstance(stage, BatchStage):
                raise TypeError(f"stage '{self.name}': {operation} needs BatchStages, got "
                                f"{type(stage).__name__} '{stage.name}'; add window(...) to aggregate streams")
            upstream.append(transform)
        return BatchStage(AggregateTransform(self.pipeline, "aggregate", upstream, op))

    def distinct(self) -> BatchStage:
        """Each distinct item once."""
        return BatchStage(DistinctTransform(self.pipeline, self._transform, whole_item))


class _NeedsWindow:
    """The batch-only operations of a stream stage: each raises a ``TypeError`` saying to add ``window(...)``."""

    name: str
    _WINDOW_EXAMPLE = ""

    def _batch_only(self, operation: str) -> Any:
        raise TypeError(
            f"stage '{self.name}' is a stream stage: {operation} needs a window, since a stream has no end to "
            f"aggregate at. Add window(...) first, e.g. {self._WINDOW_EXAMPLE}.{operation}")

    def aggregate(self, *args: Any, **kwargs: Any) -> Any:
        return self._batch_only("aggregate(op)")

    def aggregate2(self, *args: Any, **kwargs: Any) -> Any:
        return self._batch_only("aggregate2(...)")

    def aggregate3(self, *args: Any, **kwargs: Any) -> Any:
        return self._batch_only("aggregate3(...)")

    def distinct(self) -> Any:
        return self._batch_only("distinct()")


class StreamStage(_NeedsWindow, GeneralStage):
    """A stage of an unbounded pipeline branch. ``window(...)`` comes before any aggregation."""

    def _keyed_class(self) -> type:
        return StreamStageWithKey

    _WINDOW_EXAMPLE = "stage.window(WindowDefinition.tumbling(1000))"

    def window(self, window_definition: Any) -> Any:
        """The windowed form of this stage (needs timestamps): ``aggregate``, ``aggregate2/3``, ``distinct``."""
        from pipeline.windows import StageWithWindow

        return StageWithWindow(self, None, window_definition)

    def with_timestamps(self, timestamp_fn: Callable[[Any], int], allowed_lag: int) -> StreamStage:
        """Timestamps from ``timestamp_fn(item)`` from here on; watermarks trail the top timestamp by
        ``allowed_lag``. Right after the source they are applied in the source's processors."""
        from pipeline.stream_stages import add_timestamps

        return add_timestamps(self, timestamp_fn, allowed_lag)

    add_timestamps = with_timestamps


class StageWithKey(KeyedMapLookupOps, MoreKeyedOps):
    """Base of the keyed stages: the stage it came from and ``key_fn``."""

    def __init__(self, stage: GeneralStage, key_fn: Callable[[Any], Any]):
        self._stage = stage
        self.key_fn = key_fn

    @property
    def name(self) -> str:
        return self._stage.name

    @property
    def _transform(self) -> Transform:
        return self._stage._transform  # noqa: SLF001

    @property
    def pipeline(self) -> Any:
        return self._stage.pipeline

    def _keyed_using_context(self, kind: str, factory: ContextFactory, fn: Callable) -> Any:
        if not isinstance(factory, ContextFactory):
            raise TypeError(f"stage '{self.name}': {kind}_using_context(factory, fn) needs a ContextFactory, got "
                            f"{factory!r:.80}")
        check_callable(self.name, f"{kind}_using_context(factory, fn)", fn)
        return self._keyed_using(kind, factory, _KeyedContextFn(fn, self.key_fn), "context")

    def _keyed_using(self, kind: str, factory: ContextFactory, keyed: Callable, what: str) -> Any:
        stage = self._stage
        adapted = internal.EventUsingContext(keyed, kind) if stage._events else keyed  # noqa: SLF001
        transform = StatelessTransform(self.pipeline, f"{kind.replace('_', '-')}-using-{what}",
                                       _USING_P[kind](factory, adapted), [self._transform],
                                       stage._events, partition_key=self.key_fn)  # noqa: SLF001
        return stage._attach(transform)  # noqa: SLF001

    def _keyed_using_service(self, kind: str, factory: Any, fn: Callable) -> Any:
        operation = f"{kind}_using_service(service_factory, fn)"
        context_factory = check_service_factory(self.name, operation, factory)
        check_callable(self.name, operation, fn)
        return self._keyed_using(kind, context_factory, KeyedServiceFn(fn, self.key_fn), "service")

    def map_using_service(self, service_factory: Any, fn: Callable[[Any, Any, Any], Any]) -> Any:
        """``fn(service, key, item)``; items of one key always meet the same processor (Jet 4's keyed form)."""
        return self._keyed_using_service("map", service_factory, fn)

    def filter_using_service(self, service_factory: Any, pred: Callable[[Any, Any, Any], Any]) -> Any:
        """The items for which ``pred(service, key, item)`` is true (routed by key)."""
        return self._keyed_using_service("filter", service_factory, pred)

    def flat_map_using_service(self, service_factory: Any, fn: Callable[[Any, Any, Any], Any]) -> Any:
        """Every item of ``fn(service, key, item)`` (routed by key)."""
        return self._keyed_using_service("flat_map", service_factory, fn)

    def map_using_context(self, factory: ContextFactory, fn: Callable[[Any, Any, Any], Any]) -> Any:
        """``fn(ctx, key, item)``; items of one key always meet the same context object."""
        return self._keyed_using_context("map", factory, fn)

    def filter_using_context(self, factory: ContextFactory, pred: Callable[[Any, Any, Any], Any]) -> Any:
        """The items for which ``pred(ctx, key, item)`` is true (routed by key)."""
        return self._keyed_using_context("filter", factory, pred)

    def flat_map_using_context(self, factory: ContextFactory, fn: Callable[[Any, Any, Any], Any]) -> Any:
        """Every item of ``fn(ctx, key, item)`` (routed by key)."""
        return self._keyed_using_context("flat_map", factory, fn)

    def rolling_aggregate(self, op: AggregateOperation) -> Any:
        """For every item, ``(key, result of op over the key's items so far)``."""
        check_op(self.name, "rolling_aggregate(op)", op)
        return self._stage._attach(  # noqa: SLF001
            RollingAggregateTransform(self.pipeline, self._transform, op, self.key_fn))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class _KeyedContextFn:
    """``fn(ctx, key_fn(item), item)`` as a two-argument context function."""

    def __init__(self, fn: Callable[[Any, Any, Any], Any], key_fn: Callable[[Any], Any]):
        self.fn = fn
        self.key_fn = key_fn

    def __call__(self, ctx: Any, item: Any) -> Any:
        return self.fn(ctx, self.key_fn(item), item)


class BatchStageWithKey(StageWithKey):
    """A batch stage with a grouping key."""

    def aggregate(self, op: AggregateOperation) -> BatchStage:
        """``(key, result)`` per key."""
        check_single_input_op(self.name, "aggregate(op)", op)
        return BatchStage(AggregateTransform(self.pipeline, "group-and-aggregate", [self._transform], op,
                                             [self.key_fn]))

    def aggregate2(self, *args: Any, map_to_output_fn: Callable[..., Any] | None = None) -> BatchStage:
        """Co-group with ``stage1`` on the key. ``aggregate2(op0, stage1, op1)``: ``(key, (r0, r1))`` or
        ``map_to_output_fn(key, r0, r1)``; ``aggregate2(stage1, op2)`` (Jet 4): ``(key, result)`` or
        ``map_to_output_fn(key, result)``. (A trailing callable is taken as ``map_to_output_fn``.)"""
        return self._co_group("aggregate2", 2, args, map_to_output_fn)

    def aggregate3(self, *args: Any, map_to_output_fn: Callable[..., Any] | None = None) -> BatchStage:
        """Co-group with two stages: ``aggregate3(op0, stage1, op1, stage2, op2)`` gives ``(key, (r0, r1,
        r2))``; ``aggregate3(stage1, stage2, op3)`` gives ``(key, result)``."""
        return self._co_group("aggregate3", 3, args, map_to_output_fn)

    def _co_group(self, operation: str, inputs: int, args: tuple, map_to_output_fn: Callable | None) -> BatchStage:
        if map_to_output_fn is None and args and callable(args[-1]) and not isinstance(
                args[-1], (AggregateOperation, StageWithKey)):
            args, map_to_output_fn = args[:-1], args[-1]
        stages, op, per_input = co_aggregate_args(self.name, operation, inputs, args)
        if map_to_output_fn is not None:
            check_callable(self.name, f"{operation} map_to_output_fn", map_to_output_fn)
        upstream, key_fns = [self._transform], [self.key_fn]
        for stage in stages:
            if not isinstance(stage, BatchStageWithKey):
                raise TypeError(f"stage '{self.name}': {operation} co-groups keyed batch stages; give "
                                f"stage.grouping_key(key_fn), got {stage!r:.80}")
            upstream.append(self._stage._check_same_pipeline(stage._stage, operation))  # noqa: SLF001
            key_fns.append(stage.key_fn)
        out = entry if map_to_output_fn is None else (
            _SpreadResults(map_to_output_fn) if per_input else map_to_output_fn)
        return BatchStage(AggregateTransform(self.pipeline, "co-group-and-aggregate", upstream, op, key_fns, out))

    def aggregate_builder(self, op0: AggregateOperation) -> GroupAggregateBuilder:
        """A co-group builder: ``.tag0()``, ``.add(stage_with_key, op) -> Tag``, ``.build(fn(key, ibt))``."""
        from pipeline.builders import GroupAggregateBuilder

        return GroupAggregateBuilder(self, check_op(self.name, "aggregate_builder(op0)", op0))

    def distinct(self) -> BatchStage:
        """The first item of every key."""
        return BatchStage(DistinctTransform(self.pipeline, self._transform, self.key_fn))


class StreamStageWithKey(_NeedsWindow, StageWithKey):
    """A stream stage with a grouping key; aggregations need ``window(...)``."""

    _WINDOW_EXAMPLE = "stage.grouping_key(fn).window(WindowDefinition.sliding(60_000, 1_000))"

    def aggregate_builder(self, *args: Any, **kwargs: Any) -> Any:
        return self._batch_only("aggregate_builder(op0)")

    def window(self, window_definition: Any) -> Any:
        """The windowed keyed form of this stage: ``aggregate``, ``aggregate2/3``, ``distinct``."""
        from pipeline.windows import StageWithWindow

        return StageWithWindow(self._stage, self.key_fn, window_definition)


class _SpreadResults:
    """``fn(key, *results)`` as a ``map_to_output_fn(key, results_tuple)``."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn

    def __call__(self, key: Any, results: tuple) -> Any:
        return self.fn(key, *results)
