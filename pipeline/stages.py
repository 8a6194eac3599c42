"""Pipeline stages: thin handles over the pipeline's transform graph (Jet's ``BatchStage``, ``StreamStage``, ...).

A pipeline is built in layers, each module importing only the ones below it:

    handle (this module, pipeline.keyed_stages)  ->  operation (a free function)
        ->  transform (a node of the pipeline's graph)  ->  planner (vertices and edges of the DAG)

A stage is a handle on one :class:`~pipeline.transform_graph.Transform` of its pipeline. A method checks what
only a handle can check (that another stage is of the right kind and of this pipeline), calls an operation
(:mod:`pipeline.stateless_ops`, :mod:`pipeline.aggregate_ops`, :mod:`pipeline.stateful_ops`,
:mod:`pipeline.map_lookups`), which checks the user's arguments and adds one transform to the graph, and wraps
that transform in the handle of the right kind, so calls chain. The operations never import a handle; the
transforms never know an operation; ``p.to_dag()`` lowers the graph by Jet 4's planner rules
(:mod:`pipeline.planner`). Which operations a handle offers follows Jet 4.0:

- every compute stage (:class:`GeneralStage`): ``map``, ``filter``, ``flat_map``, the ``*_using_context`` and
  ``*_using_service`` forms, ``merge``, ``peek``, ``hash_join``/``hash_join2``/``hash_join_builder``,
  ``custom_transform``, ``rolling_aggregate``, ``grouping_key``, ``write_to`` (alias ``drain_to``), ``set_name``,
  ``set_local_parallelism``, and Jet 4.5's ``apply``, ``rebalance``, ``inner_hash_join``, stateful mapping and
  the async services;
- :class:`BatchStage` adds ``aggregate``, ``aggregate2``, ``aggregate3``, ``distinct``, ``sort`` and
  ``add_timestamps``;
- :class:`StreamStage` adds ``window`` and ``with_timestamps``; the batch-only operations raise a ``TypeError``
  that says to add ``window(...)`` first (the stream-source stage before the timestamp choice is
  :mod:`pipeline.stream_source_stage`);
- after ``grouping_key(key_fn)`` and ``window(...)``: the keyed and windowed handles of
  :mod:`pipeline.keyed_stages`, which return the plain stages of this module again.

>>> from pipeline import Pipeline, Sources, Sinks
>>> p = Pipeline.create()
>>> p.read_from(Sources.list("in")).map(str.upper).write_to(Sinks.list("out")).name
'listSink(out)'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Self, TypeVar

from jetspark_base.errors import DagValidationError
from pipeline import aggregate_ops, map_lookups, stateful_ops, stateless_ops
from pipeline.arg_checks import check_callable, check_same_pipeline, co_aggregate_args
from pipeline.async_service import DEFAULT_ASYNC_TIMEOUT_S
from pipeline.join import ItemsByTag, JoinClause, Tag
from pipeline.keyed_stages import BatchStageWithKey, NeedsWindow, StageWithWindow, StreamStageWithKey
from pipeline.transform_graph import Transform, TransformHandle
from pipeline.window_aggregate import WindowDefinition
from processors.aggregate.operation import AggregateOperation
from processors.api.context_factory import ContextFactory

__all__ = ["Stage", "GeneralStage", "BatchStage", "StreamStage", "SinkStage", "HashJoinBuilder"]

R = TypeVar("R")
S = TypeVar("S", bound="GeneralStage")


class Stage(TransformHandle):
    """Base of all stages: the handle on one transform; ``name``, ``set_name``, ``set_local_parallelism``."""

    def set_name(self, name: str) -> Self:
        """Name the stage (its vertex name); returns the stage."""
        if not isinstance(name, str) or not name:
            raise DagValidationError(f"stage '{self.name}': set_name(name) needs a non-empty str, got {name!r}")
        self._transform.name = name
        return self

    def set_local_parallelism(self, local_parallelism: int | None) -> Self:
        """Processors per member of the stage's vertex (``None`` or -1: the default); returns the stage."""
        lp = local_parallelism
        if lp == -1:
            lp = None
        if lp is not None and (isinstance(lp, bool) or not isinstance(lp, int) or lp < 1):
            raise DagValidationError(f"stage '{self.name}': set_local_parallelism({local_parallelism!r}) needs an "
                                     "int >= 1, or None (-1) for the default")
        self._transform.local_parallelism = lp
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class SinkStage(Stage):
    """The stage ``write_to`` returns; nothing can be attached to it."""


class GeneralStage(Stage):
    """The operations of every compute stage (batch or stream); each returns a stage of this stage's kind."""

    def _attach(self, transform: Transform) -> Self:
        return type(self)(transform)

    # ---------------------------------------------------------------- stateless
    def map(self, fn: Callable[[Any], Any]) -> Self:
        """``fn(item)`` for every item; a ``None`` result drops the item."""
        return self._attach(stateless_ops.stateless(self._transform, "map", fn))

    def filter(self, pred: Callable[[Any], Any]) -> Self:
        """The items for which ``pred(item)`` is true."""
        return self._attach(stateless_ops.stateless(self._transform, "filter", pred))

    def flat_map(self, fn: Callable[[Any], Any]) -> Self:
        """Every item of the iterable (or ``Traverser``) ``fn(item)`` returns."""
        return self._attach(stateless_ops.stateless(self._transform, "flat_map", fn))

    def map_using_service(self, service_factory: Any, fn: Callable[[Any, Any], Any]) -> Self:
        """``fn(service, item)`` with the service of ``service_factory`` (Jet 4); ``None`` drops the item.

        >>> rates = ServiceFactories.shared_service(lambda ctx: {"EUR": 1.1})  # doctest: +SKIP
        >>> stage.map_using_service(rates, lambda r, trade: trade.amount * r[trade.currency])  # doctest: +SKIP
        """
        return self._attach(stateless_ops.using_service(self._transform, "map", service_factory, fn))

    def filter_using_service(self, service_factory: Any, pred: Callable[[Any, Any], Any]) -> Self:
        """The items for which ``pred(service, item)`` is true."""
        return self._attach(stateless_ops.using_service(self._transform, "filter", service_factory, pred))

    def flat_map_using_service(self, service_factory: Any, fn: Callable[[Any, Any], Any]) -> Self:
        """Every item of ``fn(service, item)``."""
        return self._attach(stateless_ops.using_service(self._transform, "flat_map", service_factory, fn))

    def map_using_context(self, factory: ContextFactory, fn: Callable[[Any, Any], Any]) -> Self:
        """``fn(ctx, item)`` with the object ``factory`` creates for each processor; ``None`` drops the item."""
        return self._attach(stateless_ops.using_context(self._transform, "map", factory, fn))

    def filter_using_context(self, factory: ContextFactory, pred: Callable[[Any, Any], Any]) -> Self:
        """The items for which ``pred(ctx, item)`` is true."""
        return self._attach(stateless_ops.using_context(self._transform, "filter", factory, pred))

    def flat_map_using_context(self, factory: ContextFactory, fn: Callable[[Any, Any], Any]) -> Self:
        """Every item of ``fn(ctx, item)``."""
        return self._attach(stateless_ops.using_context(self._transform, "flat_map", factory, fn))

    def map_using_service_async(self, service_factory: Any, fn: Callable[[Any, Any], Any], *,
                                max_concurrent_ops: int = 4, timeout_s: float = DEFAULT_ASYNC_TIMEOUT_S) -> Self:
        """``fn(service, item)`` returns a ``concurrent.futures.Future`` of the result (``None`` drops the item);
        up to ``max_concurrent_ops`` calls in flight per processor; results in input order unless
        ``set_preserve_order(False)``. A failing future fails the job naming the item; one pending after
        ``timeout_s`` too (see :mod:`pipeline.async_service`).

        >>> pool = ServiceFactories.shared_service(lambda ctx: ThreadPoolExecutor(4),  # doctest: +SKIP
        ...                                        lambda e: e.shutdown())
        >>> stage.map_using_service_async(pool, lambda ex, x: ex.submit(lookup, x))  # doctest: +SKIP
        """
        return self._attach(stateful_ops.async_service(self._transform, "map-using-service-async", service_factory,
                                                       fn, None, max_concurrent_ops, timeout_s))

    def map_using_service_async_batched(self, service_factory: Any, max_batch_size: int,
                                        fn: Callable[[Any, list], Any], *, max_concurrent_ops: int = 4,
                                        timeout_s: float = DEFAULT_ASYNC_TIMEOUT_S) -> Self:
        """``fn(service, items)`` (at most ``max_batch_size`` items) returns a future of a list with one result
        per item, in order."""
        return self._attach(stateful_ops.async_service(self._transform, "map-using-service-async-batched",
                                                       service_factory, fn, max_batch_size, max_concurrent_ops,
                                                       timeout_s))

    def map_using_imap(self, map_or_name: Any, key_fn: Callable[[Any], Any],
                       map_fn: Callable[[Any, Any], Any]) -> Self:
        """``map_fn(item, value)`` with ``value`` the driver map's value of ``key_fn(item)`` when the item is
        processed (``None`` if missing); a ``None`` result drops the item (Jet's ``mapUsingIMap``).

        >>> trades.map_using_imap("stock-info", lambda t: t.ticker,  # doctest: +SKIP
        ...                       lambda t, info: (t, info))
        """
        return self._attach(map_lookups.map_using_imap(self._transform, map_or_name, key_fn, map_fn))

    def map_using_replicated_map(self, map_or_name: Any, key_fn: Callable[[Any], Any],
                                 map_fn: Callable[[Any, Any], Any]) -> Self:
        """``map_fn(item, value)`` with ``value`` from this processor's copy of
        ``engine.get_replicated_map(name)`` (refreshed as the map changes); ``None`` drops the item (Jet's
        ``mapUsingReplicatedMap``)."""
        return self._attach(map_lookups.map_using_replicated_map(self._transform, map_or_name, key_fn, map_fn))

    def merge(self, other: Self) -> Self:
        """All items of this stage and of ``other`` (a stage of the same kind)."""
        transform = check_same_pipeline(self._transform, other, "merge(other)", (GeneralStage,))
        events = self._transform.events
        if type(other) is not type(self) or transform.events != events:
            raise TypeError(f"stage '{self.name}': merge(other) needs a stage of the same kind "
                            f"({type(self).__name__}{', with timestamps' if events else ''}); "
                            f"stage '{other.name}' is a {type(other).__name__}"
                            f"{' with timestamps' if transform.events else ''}")
        return self._attach(stateless_ops.merge(self._transform, transform))

    def peek(self, to_string_fn: Callable[[Any], Any] = str,
             should_log_fn: Callable[[Any], Any] | None = None) -> Self:
        """Log the items this stage emits (``"Output to ordinal N: text"``); adds no vertex. Returns a stage
        with the same items."""
        return self._attach(stateless_ops.peek(self._transform, to_string_fn, should_log_fn))

    def custom_transform(self, name: str, processor_supplier: Any) -> Self:
        """A vertex named ``name`` running ``processor_supplier`` on this stage's items. Its processors get
        plain items (never the internal timestamp wrapper) and what they emit has no timestamps."""
        return self._attach(stateless_ops.custom_transform(self._transform, name, processor_supplier))

    def apply(self, transform_fn: Callable[[Self], R]) -> R:
        """``transform_fn(self)``: reusable pieces of a pipeline (and the testing API's assertions).

        >>> from pipeline import Pipeline, Sources
        >>> upper = lambda stage: stage.map(str.upper)
        >>> Pipeline.create().read_from(Sources.list("in")).apply(upper).name
        'map'
        """
        check_callable(self.name, "apply(transform_fn)", transform_fn)
        return transform_fn(self)

    def rebalance(self, key_fn: Callable[[Any], Any] | None = None) -> Self:
        """The same items, spread over all processors of the cluster for the next stage: round-robin, or
        partitioned by ``key_fn(item)`` (Jet's ``rebalance()``/``rebalance(keyFn)``); adds no vertex."""
        return self._attach(stateless_ops.rebalance(self._transform, key_fn))

    # ---------------------------------------------------------------- hash-join
    def hash_join(self, other: BatchStage, join_clause: JoinClause,
                  map_to_output_fn: Callable[[Any, Any], Any]) -> Self:
        """Join every item with the matching item of ``other``: ``map_to_output_fn(item, right)``.

        An item without a match is joined with ``None``; an item whose key matches several right items gives
        one output per match (Jet 4.1's many-to-many join), so joining with a stage that has duplicate keys
        multiplies the output. A ``None`` result drops the item.

        >>> trades.hash_join(stock_info, JoinClause.join_map_entries(ticker_of),
        ...                  lambda trade, info: (trade, info))  # doctest: +SKIP
        """
        joined = _joined(self._transform, other, join_clause, "hash_join(other, clause, fn)")
        check_callable(self.name, "hash_join map_to_output_fn", map_to_output_fn)
        return self._attach(stateless_ops.hash_join(self._transform, [joined], [join_clause], map_to_output_fn, "bi"))

    def inner_hash_join(self, other: BatchStage, join_clause: JoinClause,
                        map_to_output_fn: Callable[[Any, Any], Any]) -> Self:
        """As ``hash_join``, but a left item without a matching item of ``other`` is dropped (Jet 4.1)."""
        joined = _joined(self._transform, other, join_clause, "inner_hash_join(other, clause, fn)")
        check_callable(self.name, "inner_hash_join map_to_output_fn", map_to_output_fn)
        return self._attach(stateless_ops.hash_join(self._transform, [joined], [join_clause], map_to_output_fn, "bi",
                                                    inner=True))

    def hash_join2(self, stage1: BatchStage, join_clause1: JoinClause, stage2: BatchStage,
                   join_clause2: JoinClause, map_to_output_fn: Callable[[Any, Any, Any], Any]) -> Self:
        """Join with two stages: ``map_to_output_fn(item, right1, right2)``."""
        operation = "hash_join2(stage1, clause1, stage2, clause2, fn)"
        joined = [_joined(self._transform, stage1, join_clause1, operation),
                  _joined(self._transform, stage2, join_clause2, operation)]
        check_callable(self.name, "hash_join2 map_to_output_fn", map_to_output_fn)
        return self._attach(stateless_ops.hash_join(self._transform, joined, [join_clause1, join_clause2],
                                                    map_to_output_fn, "tri"))

    def hash_join_builder(self) -> HashJoinBuilder[Self]:
        """A builder joining any number of stages: ``.add(stage, clause) -> Tag``, ``.build(fn(item, ibt))``."""
        return HashJoinBuilder(self)

    # ---------------------------------------------------------------- rolling, stateful
    def rolling_aggregate(self, op: AggregateOperation) -> Self:
        """For every item, the result of ``op`` over all items so far (one processor in the whole job)."""
        return self._attach(aggregate_ops.rolling_aggregate(self._transform, op))

    def map_stateful(self, create_fn: Callable[[], Any], map_fn: Callable[[Any, Any], Any]) -> Self:
        """``map_fn(state, item)`` with one state for the whole job (``create_fn()``; Jet's global form, one
        processor); ``None`` drops the item. The state is saved in snapshots.

        >>> stage.map_stateful(lambda: [0], lambda s, x: s.__setitem__(0, s[0] + x) or s[0])  # doctest: +SKIP
        """
        return self._attach(stateful_ops.stateful(self._transform, "map", create_fn, map_fn))

    def filter_stateful(self, create_fn: Callable[[], Any], filter_fn: Callable[[Any, Any], Any]) -> Self:
        """The items for which ``filter_fn(state, item)`` is true (one state for the job)."""
        return self._attach(stateful_ops.stateful(self._transform, "filter", create_fn, filter_fn))

    def flat_map_stateful(self, create_fn: Callable[[], Any], flat_map_fn: Callable[[Any, Any], Any]) -> Self:
        """Every item of ``flat_map_fn(state, item)`` (one state for the job)."""
        return self._attach(stateful_ops.stateful(self._transform, "flat_map", create_fn, flat_map_fn))

    # ---------------------------------------------------------------- sinks
    def write_to(self, sink: Any) -> SinkStage:
        """Drain this stage's items into ``sink``; returns the sink stage (nothing attaches to it)."""
        return SinkStage(stateless_ops.write_to(self._transform, sink))

    drain_to = write_to


class BatchStage(GeneralStage):
    """A stage of a bounded pipeline branch."""

    def grouping_key(self, key_fn: Callable[[Any], Any]) -> BatchStageWithKey[BatchStage]:
        """The keyed form of this stage: aggregations per key, distinct by key, keyed context lookups."""
        check_callable(self.name, "grouping_key(key_fn)", key_fn)
        return BatchStageWithKey(self._transform, key_fn, BatchStage)

    def aggregate(self, op: AggregateOperation) -> BatchStage:
        """One item: ``op``'s result over all items."""
        return BatchStage(aggregate_ops.aggregate(self._transform, [], op))

    def aggregate2(self, *args: Any) -> BatchStage:
        """Co-aggregate with ``stage1``: ``aggregate2(op0, stage1, op1)`` gives one item ``(r0, r1)``;
        ``aggregate2(stage1, op2)`` (Jet 4) one item, the result of the two-input ``op2``.

        >>> counts = p.read_from(a).aggregate2(p.read_from(b), aggregate_operation2(counting(), counting()))
        ... # doctest: +SKIP
        """
        return self._aggregate_n("aggregate2", 2, args)

    def aggregate3(self, *args: Any) -> BatchStage:
        """``aggregate3(op0, stage1, op1, stage2, op2)`` gives ``(r0, r1, r2)``; ``aggregate3(stage1, stage2,
        op3)`` the result of the three-input ``op3``."""
        return self._aggregate_n("aggregate3", 3, args)

    def _aggregate_n(self, operation: str, inputs: int, args: tuple) -> BatchStage:
        stages, op, _ = co_aggregate_args(self.name, operation, inputs, args)
        others = []
        for stage in stages:
            transform = check_same_pipeline(self._transform, stage, operation, (GeneralStage,))
            if not isinstance(stage, BatchStage):
                raise TypeError(f"stage '{self.name}': {operation} needs BatchStages, got "
                                f"{type(stage).__name__} '{stage.name}'; add window(...) to aggregate streams")
            others.append(transform)
        return BatchStage(aggregate_ops.aggregate(self._transform, others, op))

    def distinct(self) -> BatchStage:
        """Each distinct item once."""
        return BatchStage(aggregate_ops.distinct(self._transform))

    def sort(self, key_fn: Callable[[Any], Any] | None = None) -> BatchStage:
        """All items in one total order (natural, or by ``key_fn(item)``), from one processor at the end."""
        return BatchStage(aggregate_ops.sort(self._transform, key_fn))

    def add_timestamps(self, timestamp_fn: Callable[[Any], int], allowed_lag: int) -> StreamStage:
        """A ``StreamStage`` of these items with timestamps ``timestamp_fn(item)``, so that windows work on
        bounded data (Jet's ``BatchStage.addTimestamps``): an ``add-timestamps`` vertex; when the input ends,
        the windows still open are emitted. The job runs on the pipelined runtime (it carries watermarks)."""
        return StreamStage(stateless_ops.add_timestamps(self._transform, timestamp_fn, allowed_lag, bounded=True))


class StreamStage(NeedsWindow, GeneralStage):
    """A stage of an unbounded pipeline branch. ``window(...)`` comes before any aggregation."""

    _WINDOW_EXAMPLE = "stage.window(WindowDefinition.tumbling(1000))"

    def grouping_key(self, key_fn: Callable[[Any], Any]) -> StreamStageWithKey[StreamStage]:
        """The keyed form of this stage: windowed aggregations per key, keyed stateful mapping and lookups."""
        check_callable(self.name, "grouping_key(key_fn)", key_fn)
        return StreamStageWithKey(self._transform, key_fn, StreamStage)

    def window(self, window_definition: WindowDefinition) -> StageWithWindow[StreamStage]:
        """The windowed form of this stage (needs timestamps): ``aggregate``, ``aggregate2/3``, ``distinct``."""
        return StageWithWindow(self._transform, None, aggregate_ops.check_window(self._transform, window_definition),
                               StreamStage)

    def with_timestamps(self, timestamp_fn: Callable[[Any], int], allowed_lag: int) -> StreamStage:
        """Timestamps from ``timestamp_fn(item)`` from here on; watermarks trail the top timestamp by
        ``allowed_lag``. Right after the source they are applied in the source's processors."""
        return StreamStage(stateless_ops.add_timestamps(self._transform, timestamp_fn, allowed_lag))

    add_timestamps = with_timestamps


class HashJoinBuilder(Generic[S]):
    """Joins the stage it was made from with any number of batch stages; tags name the joined items (Jet's
    ``HashJoinBuilder``).

    >>> from pipeline import Pipeline, Sources, JoinClause
    >>> p = Pipeline.create()
    >>> builder = p.read_from(Sources.list("trades")).hash_join_builder()
    >>> product_tag = builder.add(p.read_from(Sources.map("products")), JoinClause.join_map_entries(len))
    >>> builder.build(lambda trade, ibt: (trade, ibt.get(product_tag))).name
    'hash-join'
    """

    def __init__(self, stage: S):
        self._stage = stage
        self._joined: list[tuple[Transform, JoinClause]] = []
        self._built = False

    def add(self, stage: BatchStage, join_clause: JoinClause) -> Tag:
        """Add a joined (enriching) batch stage; returns the tag of its items in ``ItemsByTag``."""
        self._check_open()
        left = self._stage.transform
        self._joined.append((_joined(left, stage, join_clause, "hash_join_builder().add(stage, clause)"),
                             join_clause))
        return Tag(len(self._joined))

    def build(self, map_to_output_fn: Callable[[Any, ItemsByTag], Any]) -> S:
        """The joined stage: ``map_to_output_fn(item, items_by_tag)`` for every item of the left stage."""
        self._check_open()
        if not self._joined:
            raise DagValidationError(f"stage '{self._stage.name}': hash_join_builder().build() with no joined "
                                     "stage; add one with builder.add(stage, JoinClause...)")
        check_callable(self._stage.name, "hash_join_builder().build(map_to_output_fn)", map_to_output_fn)
        self._built = True
        tags = tuple(Tag(i) for i in range(1, len(self._joined) + 1))
        transform = stateless_ops.hash_join(self._stage.transform, [t for t, _ in self._joined],
                                            [clause for _, clause in self._joined], map_to_output_fn, "tags", tags)
        return type(self._stage)(transform)

    def _check_open(self) -> None:
        if self._built:
            raise DagValidationError(f"stage '{self._stage.name}': this hash-join builder was already built; "
                                     "start a new one with hash_join_builder()")


def _joined(left: Transform, stage: object, clause: object, operation: str) -> Transform:
    """The transform of the joined (enriching) ``stage``: a batch stage of ``left``'s pipeline."""
    transform = check_same_pipeline(left, stage, operation, (GeneralStage,))
    if not isinstance(stage, BatchStage):
        raise TypeError(
            f"stage '{left.name}': {operation} was given the {type(stage).__name__} '{transform.name}' as the "
            "joined (enriching) side; it must be a BatchStage, since hash-join reads it in full before the "
            "first item of this stage. Read the enriching data with a batch source (Sources.map, "
            "Sources.list), or swap the two stages")
    stateless_ops.check_join_clause(left.name, operation, clause)
    return transform
