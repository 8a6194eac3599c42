"""Windowed aggregation: ``WindowDefinition`` (sliding, tumbling, session) and its transform (Jet's
``WindowDefinition`` and ``WindowAggregateTransform``); the windowed stage handle is
:class:`pipeline.stages.StageWithWindow`, its operations are in :mod:`pipeline.aggregate_ops`.

Lowering (Jet 4's ``WindowAggregateTransform``), the stage's items being ``JetEvent`` (a window needs
timestamps), so the windowing processors take the event's timestamp and the user's key function and
aggregate operation see the plain item; or, from an ``add-timestamps`` vertex read only by windows, plain items
whose timestamp the windowing processors take with the user's timestamp function (``PlannerVertex.timestamp_fn``,
:func:`pipeline.timestamps.add_timestamps_vertex`):

============================  =====================================================================================
window                        vertices and edges
============================  =====================================================================================
sliding / tumbling, keyed     ``sliding-window-prepare`` (``accumulate_by_frame_p``, local partitioned by key in)
                              -> distributed partitioned by key -> ``sliding-window`` (``combine_to_sliding_window_p``)
sliding / tumbling, un-keyed  ``sliding-window-prepare`` (local unicast in) -> distributed all-to-one ->
                              ``sliding-window`` (local parallelism 1)
session, keyed                one ``session-window`` vertex (``aggregate_to_session_window_p``), distributed
                              partitioned by key
session, un-keyed             one ``session-window`` vertex, local parallelism 1, distributed all-to-one
============================  =====================================================================================

Early results (``WindowDefinition.set_early_results_period(ms)``): a sliding or tumbling window runs in one
``sliding-window`` vertex (``processors.windowing.early_results``; keyed: distributed partitioned by key, un-keyed: one
processor), a session window in its usual ``session-window`` vertex; every ``ms`` of wall time they also emit
the current result of each open window as an :class:`EarlyTimestampedEntry` / :class:`EarlyTimestampedItem` /
:class:`EarlyWindowResult` (``is_early`` True; final results say False); a ``map_to_output_fn`` makes early
results too, which then carry no flag.

Results: keyed sliding and tumbling windows emit ``TimestampedEntry(window_end, key, result)``, session windows
``WindowResult(start, end, key, result)``, un-keyed windows ``TimestampedItem(window_end, result)``; an optional
``map_to_output_fn(start, end, key, result)`` (un-keyed ``(start, end, result)``) replaces them. A result read by
later stages travels on as a ``JetEvent`` stamped with the window's end, so they have timestamps; when sinks are
its only readers it travels as it is (no wrapper made per result, none unwrapped by the sink: the vertices then
are those of the same DAG written by hand).

>>> WindowDefinition.sliding(60_000, 1_000)
WindowDefinition.sliding(60000, 1000)
>>> WindowDefinition.tumbling(1_000).slide_by
1000
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from edges.partitioner import Partitioner
from pipeline.events import TimestampedItem
from pipeline.internal import EventAccumulate, event_timestamp, window_output
from pipeline.planner import Planner
from pipeline.transform_graph import Transform, TransformGraph
from pipeline.transforms import PREPARE_SUFFIX, checked_key
from processors.aggregate.operation import AggregateOperation
from processors.windowing.early_results import early_session_window_p, early_sliding_window_p
from processors.api.functions import entry_key
from processors.windowing.session_window import aggregate_to_session_window_p
from processors.windowing.sliding_window import accumulate_by_frame_p, combine_to_sliding_window_p
from processors.windowing.definitions import (
    TimestampedEntry,
    TimestampKind,
    WindowResult,
    sliding_win_policy,
    tumbling_win_policy,
)

__all__ = ["WindowDefinition", "WindowAggregateTransform", "EarlyTimestampedEntry", "EarlyTimestampedItem",
           "EarlyWindowResult", "first_item"]


def _positive(label: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"WindowDefinition: {label} must be an int > 0 (milliseconds), got {value!r}")
    return value


class WindowDefinition:
    """A window kind and its sizes: ``sliding(size, slide_by)``, ``tumbling(size)``, ``session(timeout)``."""

    __slots__ = ("kind", "window_size", "slide_by", "session_timeout", "early_results_period")

    def __init__(self, kind: str, window_size: int | None = None, slide_by: int | None = None,
                 session_timeout: int | None = None, early_results_period: int | None = None):
        self.kind = kind
        self.window_size = window_size
        self.slide_by = slide_by
        self.session_timeout = session_timeout
        self.early_results_period = early_results_period

    def set_early_results_period(self, period_ms: int) -> WindowDefinition:
        """This window definition emitting the results of open windows every ``period_ms`` ms of wall time too
        (their ``is_early`` is True); ``0`` turns early results off.

        >>> WindowDefinition.tumbling(60_000).set_early_results_period(1_000)
        WindowDefinition.tumbling(60000).set_early_results_period(1000)
        """
        if isinstance(period_ms, bool) or not isinstance(period_ms, int) or period_ms < 0:
            raise ValueError(f"WindowDefinition.set_early_results_period: period_ms must be an int >= 0 "
                             f"(milliseconds; 0 turns early results off), got {period_ms!r}")
        return WindowDefinition(self.kind, self.window_size, self.slide_by, self.session_timeout,
                                period_ms or None)

    @staticmethod
    def sliding(window_size: int, slide_by: int) -> WindowDefinition:
        """Windows of ``window_size`` ms, one every ``slide_by`` ms (``window_size`` a multiple of it)."""
        size, slide = _positive("window_size", window_size), _positive("slide_by", slide_by)
        if size % slide:
            raise ValueError(f"WindowDefinition.sliding: window_size ({size}) must be a multiple of slide_by "
                             f"({slide})")
        return WindowDefinition("sliding", size, slide)

    @staticmethod
    def tumbling(window_size: int) -> WindowDefinition:
        """Adjacent windows of ``window_size`` ms (a sliding window that slides by its size)."""
        size = _positive("window_size", window_size)
        return WindowDefinition("tumbling", size, size)

    @staticmethod
    def session(session_timeout: int) -> WindowDefinition:
        """Bursts of events separated by at least ``session_timeout`` ms of quiet."""
        return WindowDefinition("session", session_timeout=_positive("session_timeout", session_timeout))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WindowDefinition) and all(
            getattr(self, s) == getattr(other, s) for s in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, s) for s in self.__slots__))

    def __repr__(self) -> str:
        if self.kind == "sliding":
            text = f"WindowDefinition.sliding({self.window_size}, {self.slide_by})"
        elif self.kind == "tumbling":
            text = f"WindowDefinition.tumbling({self.window_size})"
        else:
            text = f"WindowDefinition.session({self.session_timeout})"
        early = self.early_results_period
        return text if early is None else f"{text}.set_early_results_period({early})"


def first_item(start: int, end: int, key: Any, item: Any) -> Any:
    """The ``map_to_output_fn`` of a windowed ``distinct``: the window's item itself (a ``pick_any`` result)."""
    return item


def _constant_key(_event: Any) -> int:
    return 0


def _timestamped_item(start: int, end: int, result: Any) -> TimestampedItem:
    return TimestampedItem(end, result)


class EarlyTimestampedEntry(TimestampedEntry):
    """An early result of a keyed sliding or tumbling window: a ``TimestampedEntry`` whose ``is_early`` is True
    (it never equals a final one)."""

    __slots__ = ()
    is_early = True

    @staticmethod
    def from_window_result(start: int, end: int, key: Any, value: Any) -> EarlyTimestampedEntry:
        """The early entry stamped with the window's ``end``."""
        return EarlyTimestampedEntry(end, key, value)

    def __eq__(self, other: object) -> bool:
        return other.__class__ is EarlyTimestampedEntry and tuple.__eq__(self, other)

    def __hash__(self) -> int:
        return tuple.__hash__(self)

    def __repr__(self) -> str:
        return f"EarlyTimestampedEntry({self[2]!r}, {self[0]!r}, {self[1]!r})"

    def __reduce__(self):
        return (EarlyTimestampedEntry, (self[2], self[0], self[1]))


class EarlyTimestampedItem(TimestampedItem):
    """An early result of an un-keyed sliding or tumbling window: a ``TimestampedItem`` whose ``is_early`` is
    True."""

    __slots__ = ()
    is_early = True

    def __repr__(self) -> str:
        return f"EarlyTimestampedItem(timestamp={self.timestamp!r}, item={self.item!r})"


def _early_timestamped_item(start: int, end: int, result: Any) -> EarlyTimestampedItem:
    return EarlyTimestampedItem(end, result)


class EarlyWindowResult(WindowResult):
    """An early result of a session window: a ``WindowResult`` whose ``is_early`` is True."""

    is_early = True


def _check_early(stage: str, wdef: WindowDefinition, op: AggregateOperation) -> None:
    """Early results of a sliding window combine its frames: the operation needs a ``combine_fn``."""
    if wdef.kind == "sliding" and op.combine_fn is None:
        raise DagValidationError(f"stage '{stage}': early results of a sliding window combine its frames, but "
                                 f"{op!r} has no combine_fn; give the operation one or drop "
                                 "set_early_results_period")


def _on_events(op: AggregateOperation, events: list[bool]) -> AggregateOperation:
    """``op`` with the accumulate function of each ordinal whose items are events (``events[o]``) applied to
    the plain item; ``counting()`` stays itself (it never looks at the item), which keeps the windowing
    processors' fast path for it, and so does an operation none of whose inputs are events."""
    if not any(events) or (op.fast_path is not None and op.fast_path[0] == "counting"):
        return op
    return op.with_accumulate_fns(*(EventAccumulate(fn) if wrapped else fn
                                    for fn, wrapped in zip(op.accumulate_fns, events)))


class WindowAggregateTransform(Transform):
    """Windowed aggregation of one or more stream stages; ``key_fns`` None: un-keyed (see the module table)."""

    takes_timestamp_fn = True  # an input vertex with a timestamp_fn sends plain items: the window stamps them

    def __init__(self, graph: TransformGraph, upstream: list[Transform], window_definition: WindowDefinition,
                 op: AggregateOperation, key_fns: list | None, map_to_output_fn: Callable[..., Any] | None):
        session = window_definition.kind == "session"
        super().__init__(graph, "session-window" if session else "sliding-window", upstream, events=True)
        self.window_definition = window_definition
        self.op = op
        self.key_fns = key_fns
        keyed = key_fns is not None
        default = (WindowResult if session else TimestampedEntry.from_window_result) if keyed else _timestamped_item
        self.output_fn = map_to_output_fn or default
        self.early_output_fn = None
        if window_definition.early_results_period is not None:
            early_default = (EarlyWindowResult if session else EarlyTimestampedEntry.from_window_result) if keyed \
                else _early_timestamped_item
            self.early_output_fn = map_to_output_fn or early_default
            _check_early(upstream[0].name, window_definition, op)

    def add_to_dag(self, p: Planner) -> None:
        wdef, name = self.window_definition, p.unique_vertex_name(self.name)
        n = len(self.upstream)
        # results read only by sinks travel plain (a sink would unwrap each JetEvent again)
        events = not all(t.is_sink for t in self.graph.downstream_of(self))
        keyed = self.key_fns is not None
        output = window_output(self.output_fn, keyed, events)
        early = None if self.early_output_fn is None else window_output(self.early_output_fn, keyed, events)
        # per input: JetEvents, or plain items with the timestamp function of their add-timestamps vertex
        stamp_fns = [p.vertex_of(u).timestamp_fn for u in self.upstream]
        events_in = [fn is None for fn in stamp_fns]
        op = _on_events(self.op, events_in)
        stamps = [event_timestamp if fn is None else fn for fn in stamp_fns]
        keys = [checked_key(k, name, events=e) for k, e in zip(self.key_fns, events_in)] if keyed \
            else [_constant_key] * n
        lp = self.local_parallelism
        if wdef.kind == "session":
            supplier = aggregate_to_session_window_p(wdef.session_timeout, stamps, keys, op, output) \
                if early is None else early_session_window_p(
                    wdef.session_timeout, stamps, keys, op, output, wdef.early_results_period, early)
            pv = p.add_vertex(self, name, lp if keyed else 1, supplier, events)
            p.add_edges(self, pv, (lambda e, o: e.distributed().partitioned(keys[o])) if keyed
                        else (lambda e, _o: e.distributed().all_to_one(name)))
            return
        policy = (sliding_win_policy(wdef.window_size, wdef.slide_by) if wdef.kind == "sliding"
                  else tumbling_win_policy(wdef.window_size))
        kind = TimestampKind.EVENT
        if early is not None:  # single stage: every open frame of a key in one processor
            supplier = early_sliding_window_p(keys, stamps, policy, op, output, wdef.early_results_period,
                                              early)
            pv = p.add_vertex(self, name, lp if keyed else 1, supplier, events)
            p.add_edges(self, pv, (lambda e, o: e.distributed().partitioned(keys[o])) if keyed
                        else (lambda e, _o: e.distributed().all_to_one(name)))
            return
        prepare = p.new_vertex(name + PREPARE_SUFFIX, accumulate_by_frame_p(keys, stamps, kind, policy, op),
                               lp)
        main = p.add_vertex(self, name, lp if keyed else 1,
                            combine_to_sliding_window_p(policy, self.op, output), events)
        if keyed:
            p.add_edges(self, prepare, lambda e, o: e.partitioned(keys[o], Partitioner.HASH_CODE))
            p.edge(prepare, main, 0, lambda e, _o: e.distributed().partitioned(entry_key))
        else:
            p.add_edges(self, prepare)
            p.edge(prepare, main, 0, lambda e, _o: e.distributed().all_to_one(name))
