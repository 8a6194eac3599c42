"""Builders for joins of any number of stages: ``HashJoinBuilder`` and ``GroupAggregateBuilder`` (Jet's
``HashJoinBuilder`` and ``GroupAggregateBuilder``).

>>> from pipeline import Pipeline, Sources, JoinClause
>>> p = Pipeline.create()
>>> trades = p.read_from(Sources.list("trades"))
>>> builder = trades.hash_join_builder()
>>> product_tag = builder.add(p.read_from(Sources.map("products")), JoinClause.join_map_entries(len))
>>> joined = builder.build(lambda trade, ibt: (trade, ibt.get(product_tag)))
>>> joined.name
'hash-join'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.join import ItemsByTag, JoinClause, Tag
from pipeline.stages import BatchStage, BatchStageWithKey, GeneralStage, check_callable, check_op
from pipeline.transforms import AggregateTransform
from processors.aggregate.operation import AggregateOperation
from processors.aggregate.aggregations import _co_aggregate
from processors.api.functions import entry

__all__ = ["HashJoinBuilder", "GroupAggregateBuilder"]


class HashJoinBuilder:
    """Joins the stage it was made from with any number of batch stages; tags name the joined items."""

    def __init__(self, stage: GeneralStage):
        self._stage = stage
        self._joined: list[tuple[Any, JoinClause]] = []
        self._built = False

    def add(self, stage: BatchStage, join_clause: JoinClause) -> Tag:
        """Add a joined (enriching) batch stage; returns the tag of its items in ``ItemsByTag``."""
        self._check_open()
        self._stage._joined(stage, join_clause, "hash_join_builder().add(stage, clause)")  # noqa: SLF001
        self._joined.append((stage, join_clause))
        return Tag(len(self._joined))

    def build(self, map_to_output_fn: Callable[[Any, ItemsByTag], Any]) -> Any:
        """The joined stage: ``map_to_output_fn(item, items_by_tag)`` for every item of the left stage."""
        self._check_open()
        if not self._joined:
            raise DagValidationError(f"stage '{self._stage.name}': hash_join_builder().build() with no joined "
                                     "stage; add one with builder.add(stage, JoinClause...)")
        check_callable(self._stage.name, "hash_join_builder().build(map_to_output_fn)", map_to_output_fn)
        self._built = True
        transforms = [stage._transform for stage, _ in self._joined]  # noqa: SLF001
        clauses = [clause for _, clause in self._joined]
        tags = tuple(Tag(i) for i in range(1, len(clauses) + 1))
        return self._stage._hash_join(transforms, clauses, map_to_output_fn, "tags", tags)  # noqa: SLF001

    def _check_open(self) -> None:
        if self._built:
            raise DagValidationError(f"stage '{self._stage.name}': this hash-join builder was already built; "
                                     "start a new one with hash_join_builder()")


class GroupAggregateBuilder:
    """Co-groups keyed batch stages on their keys, one aggregate operation per stage (Jet's co-group builder)."""

    def __init__(self, stage: BatchStageWithKey, op0: AggregateOperation):
        self._stage = stage
        self._inputs: list[tuple[BatchStageWithKey, AggregateOperation]] = [(stage, op0)]
        self._built = False

    def tag0(self) -> Tag:
        """The tag of the first stage's result."""
        return Tag(0)

    def add(self, stage: BatchStageWithKey, op: AggregateOperation) -> Tag:
        """Add a keyed stage aggregated with ``op``; returns the tag of its result."""
        if self._built:
            raise DagValidationError(f"stage '{self._stage.name}': this aggregate builder was already built")
        if not isinstance(stage, BatchStageWithKey):
            raise TypeError(f"stage '{self._stage.name}': aggregate_builder().add(stage, op) needs a keyed batch "
                            f"stage (stage.grouping_key(key_fn)), got {stage!r:.80}")
        self._stage._stage._check_same_pipeline(stage._stage, "aggregate_builder().add(stage, op)")  # noqa: SLF001
        self._inputs.append((stage, check_op(self._stage.name, "aggregate_builder().add op", op)))
        return Tag(len(self._inputs) - 1)

    def build(self, map_to_output_fn: Callable[[Any, ItemsByTag], Any] = entry) -> BatchStage:
        """``map_to_output_fn(key, items_by_tag)`` per key (default: the entry ``(key, items_by_tag)``)."""
        check_callable(self._stage.name, "aggregate_builder().build(map_to_output_fn)", map_to_output_fn)
        self._built = True
        ops = tuple(op for _, op in self._inputs)
        tags = tuple(Tag(i) for i in range(len(ops)))
        op = _co_aggregate(ops, _ByTag(tags))
        upstream = [stage._transform for stage, _ in self._inputs]  # noqa: SLF001
        key_fns = [stage.key_fn for stage, _ in self._inputs]
        return BatchStage(AggregateTransform(self._stage.pipeline, "co-group-and-aggregate", upstream, op, key_fns,
                                             map_to_output_fn))


class _ByTag:
    """``(r0, r1, ...) -> ItemsByTag`` with the builder's tags."""

    def __init__(self, tags: tuple):
        self.tags = tags

    def __call__(self, *results: Any) -> ItemsByTag:
        return ItemsByTag(dict(zip(self.tags, results)))
