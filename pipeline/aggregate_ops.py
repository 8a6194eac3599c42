"""The aggregating operations: free functions that check their arguments and add one aggregating transform.

``aggregate``/``aggregate2``/``aggregate3`` (un-keyed and keyed, i.e. co-group), ``distinct``,
``rolling_aggregate``, ``sort`` and the windowed aggregations. Each takes the transforms of the stages it
aggregates (the stage handles of :mod:`pipeline.stages` have checked that those are stages of the right
kind and of this pipeline) and returns the transform it added; how each lowers is told in
:mod:`pipeline.transforms`, :mod:`pipeline.more_transforms` and :mod:`pipeline.window_aggregate`.

>>> from pipeline import Pipeline, Sources
>>> from processors import counting
>>> source = Pipeline.create().read_from(Sources.list("in")).transform
>>> aggregate(source, [], counting())
AggregateTransform('aggregate')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.arg_checks import check_callable, check_op, check_single_input_op
from pipeline.join import ItemsByTag, Tag
from pipeline.more_transforms import SortTransform
from pipeline.transform_graph import Transform
from pipeline.transforms import AggregateTransform, DistinctTransform, RollingAggregateTransform
from pipeline.window_aggregate import WindowAggregateTransform, WindowDefinition, first_item
from processors.aggregate.operation import AggregateOperation
from processors.aggregate.aggregations import _co_aggregate, pick_any
from processors.api.functions import entry, whole_item

__all__ = ["aggregate", "group_aggregate", "co_group", "group_by_tags", "distinct", "rolling_aggregate", "sort",
           "check_window", "window_aggregate", "window_distinct"]


def aggregate(upstream: Transform, others: Sequence[Transform], op: Any) -> Transform:
    """``aggregate(op)`` (no ``others``: ``op`` of one input) or the co-aggregation of ``upstream`` and
    ``others`` by a combined operation: one item, the result."""
    if not others:
        check_single_input_op(upstream.name, "aggregate(op)", op)
    return AggregateTransform(upstream.graph, "aggregate", [upstream, *others], op)


def group_aggregate(upstream: Transform, key_fn: Callable[[Any], Any], op: Any) -> Transform:
    """The keyed ``aggregate(op)``: ``(key, result)`` per key."""
    check_single_input_op(upstream.name, "aggregate(op)", op)
    return AggregateTransform(upstream.graph, "group-and-aggregate", [upstream], op, [key_fn])


def co_group(upstream: Sequence[Transform], key_fns: Sequence[Callable[[Any], Any]], op: AggregateOperation,
             map_to_output_fn: Callable[..., Any] | None, operation: str, per_input: bool) -> Transform:
    """The keyed ``aggregate2/3`` of the ``upstream`` transforms, each grouped by its key function:
    ``(key, result)`` or ``map_to_output_fn(key, r0, r1...)`` (``per_input``) / ``map_to_output_fn(key, result)``."""
    if map_to_output_fn is not None:
        check_callable(upstream[0].name, f"{operation} map_to_output_fn", map_to_output_fn)
    out = entry if map_to_output_fn is None else (
        _SpreadResults(map_to_output_fn) if per_input else map_to_output_fn)
    return AggregateTransform(upstream[0].graph, "co-group-and-aggregate", upstream, op, key_fns, out)


def group_by_tags(upstream: Sequence[Transform], key_fns: Sequence[Callable[[Any], Any]],
                  ops: Sequence[AggregateOperation], map_to_output_fn: Callable[[Any, ItemsByTag], Any]) -> Transform:
    """``aggregate_builder().build(fn)``: one operation per input, the results by tag: ``fn(key, ItemsByTag)``."""
    check_callable(upstream[0].name, "aggregate_builder().build(map_to_output_fn)", map_to_output_fn)
    tags = tuple(Tag(i) for i in range(len(ops)))
    op = _co_aggregate(tuple(ops), _ByTag(tags))
    return AggregateTransform(upstream[0].graph, "co-group-and-aggregate", upstream, op, key_fns, map_to_output_fn)


class _SpreadResults:
    """``fn(key, *results)`` as a ``map_to_output_fn(key, results_tuple)``."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn

    def __call__(self, key: Any, results: tuple) -> Any:
        return self.fn(key, *results)


class _ByTag:
    """``(r0, r1, ...) -> ItemsByTag`` with the builder's tags."""

    def __init__(self, tags: tuple):
        self.tags = tags

    def __call__(self, *results: Any) -> ItemsByTag:
        return ItemsByTag(dict(zip(self.tags, results)))


def distinct(upstream: Transform, key_fn: Callable[[Any], Any] = whole_item) -> Transform:
    """Each distinct item (keyed: the first item of every key) once."""
    return DistinctTransform(upstream.graph, upstream, key_fn)


def rolling_aggregate(upstream: Transform, op: Any, key_fn: Callable[[Any], Any] | None = None) -> Transform:
    """For every item, the result of ``op`` so far (keyed: ``(key, result)`` over the key's items)."""
    check_op(upstream.name, "rolling_aggregate(op)", op)
    return RollingAggregateTransform(upstream.graph, upstream, op, key_fn)


def sort(upstream: Transform, key_fn: Callable[[Any], Any] | None) -> Transform:
    """All items in one total order (natural, or by ``key_fn(item)``)."""
    if key_fn is not None:
        check_callable(upstream.name, "sort(key_fn)", key_fn)
    return SortTransform(upstream.graph, upstream, key_fn)


def check_window(upstream: Transform, window_definition: Any) -> WindowDefinition:
    """``window_definition``, checked, for ``upstream`` (which needs timestamps)."""
    if not isinstance(window_definition, WindowDefinition):
        raise TypeError(f"stage '{upstream.name}': window(wdef) needs a WindowDefinition (WindowDefinition."
                        f"sliding/tumbling/session), got {window_definition!r:.80}")
    if not upstream.events:
        raise DagValidationError(
            f"stage '{upstream.name}' has no timestamps, so it cannot be windowed: add them with "
            ".with_timestamps(timestamp_fn, allowed_lag) (or choose .with_native_timestamps(allowed_lag) / "
            ".with_timestamps(...) right after the stream source instead of .without_timestamps())")
    return window_definition


def window_aggregate(upstream: Sequence[Transform], key_fns: Sequence[Callable[[Any], Any]] | None,
                     window_definition: WindowDefinition, op: AggregateOperation,
                     map_to_output_fn: Callable[..., Any] | None, operation: str) -> Transform:
    """``op`` over each window of the ``upstream`` stream transforms (keyed when ``key_fns`` is given)."""
    first = upstream[0]
    if map_to_output_fn is not None:
        check_callable(first.name, f"window {operation} map_to_output_fn", map_to_output_fn)
    for other in upstream[1:]:
        if not other.events:
            raise DagValidationError(f"stage '{first.name}': windowed {operation} was given stage "
                                     f"'{other.name}', which has no timestamps; add them with with_timestamps")
    return WindowAggregateTransform(first.graph, list(upstream), window_definition, op,
                                    None if key_fns is None else list(key_fns), map_to_output_fn)


def window_distinct(upstream: Transform, key_fn: Callable[[Any], Any] | None,
                    window_definition: WindowDefinition) -> Transform:
    """The distinct items (keyed: one item per key) of each window."""
    return window_aggregate([upstream], [key_fn or whole_item], window_definition, pick_any(), first_item,
                            "distinct")
