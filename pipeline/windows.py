"""Windows: ``WindowDefinition`` (sliding, tumbling, session) and the windowed stages (Jet's
``WindowDefinition``, ``StageWithWindow``, ``StageWithKeyAndWindow``).

Lowering (Jet 4's ``WindowAggregateTransform``), the stage's items being ``JetEvent`` (a window needs
timestamps), so the windowing processors take the event's timestamp and the user's key function and
aggregate operation see the plain item:

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
``map_to_output_fn(start, end, key, result)`` (un-keyed ``(start, end, result)``) replaces them. Every result
travels on as a ``JetEvent`` stamped with the window's end, so later stages have timestamps.

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
from pipeline.internal import EventAccumulate, EventResult, event_timestamp
from pipeline.planner import Planner
from pipeline.transforms import PREPARE_SUFFIX, Transform, checked_key
from processors.aggregate.operation import AggregateOperation
from processors.aggregate.aggregations import pick_any
from processors.windowing.early_results import early_session_window_p, early_sliding_window_p
from processors.api.functions import entry_key, whole_item
from processors.windowing.definitions import TimestampedEntry, WindowResult

__all__ = ["WindowDefinition", "StageWithWindow", "WindowAggregateTransform", "EarlyTimestampedEntry",
           "EarlyTimestampedItem", "EarlyWindowResult"]


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


class StageWithWindow:
    """A stream stage (keyed when ``key_fn`` is set) with a window definition: ``aggregate``, ``aggregate2``,
    ``aggregate3``, ``distinct``. Results travel on with the window's end as their timestamp."""

    def __init__(self, stage: Any, key_fn: Any, window_definition: WindowDefinition):
        if not isinstance(window_definition, WindowDefinition):
            raise TypeError(f"stage '{stage.name}': window(wdef) needs a WindowDefinition (WindowDefinition."
                            f"sliding/tumbling/session), got {window_definition!r:.80}")
        if not stage._transform.events:  # noqa: SLF001
            raise DagValidationError(
                f"stage '{stage.name}' has no timestamps, so it cannot be windowed: add them with "
                ".with_timestamps(timestamp_fn, allowed_lag) (or choose .with_native_timestamps(allowed_lag) / "
                ".with_timestamps(...) right after the stream source instead of .without_timestamps())")
        self._stage = stage
        self.key_fn = key_fn
        self.window_definition = window_definition

    @property
    def name(self) -> str:
        return self._stage.name

    def _window(self, op: AggregateOperation, others: list, map_to_output_fn: Callable | None,
                operation: str) -> Any:
        from pipeline.stages import StreamStage, StreamStageWithKey, check_callable

        if map_to_output_fn is not None:
            check_callable(self.name, f"window {operation} map_to_output_fn", map_to_output_fn)
        upstream, key_fns = [self._stage._transform], [self.key_fn]  # noqa: SLF001
        for other in others:
            if self.key_fn is not None and not isinstance(other, StreamStageWithKey):
                raise TypeError(f"stage '{self.name}': windowed {operation} of a keyed stage needs keyed stream "
                                f"stages (stage.grouping_key(key_fn)), got {other!r:.80}")
            if self.key_fn is None and not isinstance(other, StreamStage):
                raise TypeError(f"stage '{self.name}': windowed {operation} needs stream stages, got {other!r:.80}")
            plain = other if self.key_fn is None else other._stage  # noqa: SLF001
            transform = self._stage._check_same_pipeline(plain, f"window {operation}")  # noqa: SLF001
            if not transform.events:
                raise DagValidationError(f"stage '{self.name}': windowed {operation} was given stage "
                                         f"'{other.name}', which has no timestamps; add them with with_timestamps")
            upstream.append(transform)
            key_fns.append(None if self.key_fn is None else other.key_fn)
        keys = None if self.key_fn is None else key_fns
        return StreamStage(WindowAggregateTransform(self._stage.pipeline, upstream, self.window_definition, op,
                                                    keys, map_to_output_fn))

    def grouping_key(self, key_fn: Callable[[Any], Any]) -> StageWithWindow:
        """The manual's (0.7.1) order, ``window(...).grouping_key(fn)``: the same as
        ``grouping_key(fn).window(...)``."""
        if self.key_fn is not None:
            raise DagValidationError(f"stage '{self.name}': this windowed stage already has a grouping key")
        if not callable(key_fn):
            raise TypeError(f"stage '{self.name}': grouping_key(key_fn) needs a callable, got {key_fn!r:.80}")
        return StageWithWindow(self._stage, key_fn, self.window_definition)

    def aggregate(self, op: AggregateOperation, map_to_output_fn: Callable[..., Any] | None = None) -> Any:
        """``op`` over each window: keyed ``TimestampedEntry(end, key, result)`` (session windows
        ``WindowResult(start, end, key, result)``), un-keyed ``TimestampedItem(end, result)``; or
        ``map_to_output_fn(start, end, key, result)`` (un-keyed ``(start, end, result)``)."""
        from pipeline.stages import check_single_input_op

        return self._window(check_single_input_op(self.name, "window aggregate(op)", op), [], map_to_output_fn,
                            "aggregate")

    def aggregate2(self, *args: Any, map_to_output_fn: Callable[..., Any] | None = None) -> Any:
        """Co-aggregate with ``stage1`` per window (and key): ``aggregate2(op0, stage1, op1)`` (the result is
        ``(r0, r1)``) or ``aggregate2(stage1, op2)`` (the two-input ``op2``'s result, Jet 4)."""
        return self._co_aggregate("aggregate2", 2, args, map_to_output_fn)

    def aggregate3(self, *args: Any, map_to_output_fn: Callable[..., Any] | None = None) -> Any:
        """Co-aggregate with two stages per window (and key): ``aggregate3(op0, stage1, op1, stage2, op2)``
        (``(r0, r1, r2)``) or ``aggregate3(stage1, stage2, op3)``."""
        return self._co_aggregate("aggregate3", 3, args, map_to_output_fn)

    def _co_aggregate(self, operation: str, inputs: int, args: tuple, map_to_output_fn: Callable | None) -> Any:
        from pipeline.stages import co_aggregate_args

        if map_to_output_fn is None and args and callable(args[-1]) and not isinstance(args[-1], AggregateOperation):
            args, map_to_output_fn = args[:-1], args[-1]
        others, op, _ = co_aggregate_args(self.name, f"window {operation}", inputs, args)
        return self._window(op, others, map_to_output_fn, operation)

    def distinct(self) -> Any:
        """The distinct items (keyed: one item per key) of each window."""
        keyed = StageWithWindow(self._stage, self.key_fn or whole_item, self.window_definition)
        return keyed._window(pick_any(), [], _first_item, "distinct")  # noqa: SLF001

    def __repr__(self) -> str:
        return f"StageWithWindow({self.name!r}, {self.window_definition!r})"


def _first_item(start: int, end: int, key: Any, item: Any) -> Any:
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


def _on_events(op: AggregateOperation) -> AggregateOperation:
    """``op`` with its accumulate functions applied to the plain item of an event; ``counting()`` stays itself
    (it never looks at the item), which keeps the windowing processors' fast path for it."""
    if op.fast_path is not None and op.fast_path[0] == "counting":
        return op
    return op.with_accumulate_fns(*(EventAccumulate(fn) for fn in op.accumulate_fns))


class WindowAggregateTransform(Transform):
    """Windowed aggregation of one or more stream stages; ``key_fns`` None: un-keyed (see the module table)."""

    def __init__(self, pipeline: Any, upstream: list, window_definition: WindowDefinition, op: AggregateOperation,
                 key_fns: list | None, map_to_output_fn: Callable[..., Any] | None):
        session = window_definition.kind == "session"
        super().__init__(pipeline, "session-window" if session else "sliding-window", upstream, events=True)
        self.window_definition = window_definition
        self.op = op
        self.key_fns = key_fns
        keyed = key_fns is not None
        default = (WindowResult if session else TimestampedEntry.from_window_result) if keyed else _timestamped_item
        self.output = EventResult(map_to_output_fn or default, keyed)
        self.early_output = None
        if window_definition.early_results_period is not None:
            early_default = (EarlyWindowResult if session else EarlyTimestampedEntry.from_window_result) if keyed \
                else _early_timestamped_item
            self.early_output = EventResult(map_to_output_fn or early_default, keyed)
            _check_early(upstream[0].name, window_definition, op)

    def add_to_dag(self, p: Planner) -> None:
        import processors

        wdef, name = self.window_definition, p.unique_vertex_name(self.name)
        n = len(self.upstream)
        op = _on_events(self.op)
        stamps = [event_timestamp] * n
        keyed = self.key_fns is not None
        keys = [checked_key(k, name, events=True) for k in self.key_fns] if keyed else [_constant_key] * n
        lp = self.local_parallelism
        if wdef.kind == "session":
            supplier = processors.aggregate_to_session_window_p(wdef.session_timeout, stamps, keys, op, self.output) \
                if self.early_output is None else early_session_window_p(
                    wdef.session_timeout, stamps, keys, op, self.output, wdef.early_results_period, self.early_output)
            pv = p.add_vertex(self, name, lp if keyed else 1, supplier, True)
            p.add_edges(self, pv, (lambda e, o: e.distributed().partitioned(keys[o])) if keyed
                        else (lambda e, _o: e.distributed().all_to_one(name)))
            return
        policy = (processors.sliding_win_policy(wdef.window_size, wdef.slide_by) if wdef.kind == "sliding"
                  else processors.tumbling_win_policy(wdef.window_size))
        kind = processors.TimestampKind.EVENT
        if self.early_output is not None:  # single stage: every open frame of a key in one processor
            supplier = early_sliding_window_p(keys, stamps, policy, op, self.output, wdef.early_results_period,
                                              self.early_output)
            pv = p.add_vertex(self, name, lp if keyed else 1, supplier, True)
            p.add_edges(self, pv, (lambda e, o: e.distributed().partitioned(keys[o])) if keyed
                        else (lambda e, _o: e.distributed().all_to_one(name)))
            return
        prepare = p.new_vertex(name + PREPARE_SUFFIX, processors.accumulate_by_frame_p(keys, stamps, kind, policy, op),
                               lp)
        main = p.add_vertex(self, name, lp if keyed else 1,
                            processors.combine_to_sliding_window_p(policy, self.op, self.output), True)
        if keyed:
            p.add_edges(self, prepare, lambda e, o: e.partitioned(keys[o], Partitioner.HASH_CODE))
            p.edge(prepare, main, 0, lambda e, _o: e.distributed().partitioned(entry_key))
        else:
            p.add_edges(self, prepare)
            p.edge(prepare, main, 0, lambda e, _o: e.distributed().all_to_one(name))
