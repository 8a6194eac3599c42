"""Processors and function adapters the pipeline lowering uses (Jet's ``impl.processor`` for pipelines).

- :class:`HashJoinCollectP` (vertex ``hash-join-collector-N``): builds the lookup table ``key -> [projected
  right items]`` of one enriching stage and emits it once, from ``complete()``.
- :class:`HashJoinP` (vertex ``hash-join``): takes the tables on ordinals 1..n (consumed first: priority -1),
  then joins every left item of ordinal 0. A left item without a match gets ``None``; several matches give
  one output per combination (the product over the clauses). A ``None`` output is dropped.
- :class:`DistinctP`: emits the first item of every key (both stages of ``distinct``).
- :class:`RollingAggregateP`: per key (or for all items), accumulates each item and emits the current result.
- :class:`CheckedKey`: a key function that fails with Jet's null-key error, naming the stage.
- Event adapters (``EventMap``, ``EventFilter``, ``EventFlatMap``, ...): run a user function on the plain item
  of a :class:`~pipeline.events.JetEvent` and keep the event's timestamp on the outputs.
- :class:`UnwrapEventsP`: wraps a sink's processor so it receives plain items instead of events;
  ``MappedMetaSupplier`` (``processors/api/suppliers.py``, re-exported here) applies such a wrapper to every
  processor of a meta-supplier (and keeps the stream-source mark of the one it wraps).
- Window adapters: :class:`EventAccumulate` (an accumulate function on the plain item), :class:`EventResult`
  (a window result sent on as ``JetEvent(window_end, out)``), ``event_timestamp``; peek: :class:`EventToString`
  (``item (eventTime=...)``), :class:`EventPredicate`; watermark ``wrap_fn``: ``to_event``, ``rewrap_event``.

Every processor here is engine-free; those with outputs keep the computed outputs of the current inbox and
remove the inbox's items only once all were accepted (Jet's outbox rule), see :class:`_Emitting`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product, repeat
from operator import attrgetter
from typing import Any

from pipeline.events import JetEvent, format_time
from pipeline.join import ItemsByTag, Tag
from processors.aggregate.operation import AggregateOperation
from processors.library.diagnostic import PeekWrappedP
from processors.api.functions import c_level
from processors.api.inbox import Inbox
from processors.api.processor import Processor
from processors.api.suppliers import MappedMetaSupplier
from processors.api.traverser import to_traverser
from processors.api.watermark import Watermark
from processors.windowing.definitions import TimestampedEntry

_new_tuple = tuple.__new__
_ITEM = attrgetter("item")

__all__ = [
    "HashJoinCollectP", "HashJoinP", "DistinctP", "RollingAggregateP", "CheckedKey", "UnwrapEventsP",
    "EventMap", "EventFilter", "EventFlatMap", "EventUsingContext", "event_item", "to_event",
    "rewrap_event", "event_timestamp", "EventToString", "EventPredicate", "EventAccumulate", "EventResult",
    "window_output",
    "MappedMetaSupplier", "unwrap_events",
]


class CheckedKey:
    """``key_fn`` that raises Jet's null-key error (naming ``stage``) when it returns ``None``; ``unwrap``:
    applied to the plain item of a ``JetEvent``.

    :meth:`keys_of` is the batch form the windowing processors call for a whole inbox: C-level passes
    (``attrgetter("item")``, ``entry_key`` as ``itemgetter(0)``) instead of a Python call per item."""

    def __init__(self, key_fn: Callable[[Any], Any], stage: str, unwrap: bool = False):
        self.key_fn = key_fn
        self.stage = stage
        self.unwrap = unwrap

    def keys_of(self, items: Sequence[Any]) -> list:
        """``[self(item) for item in items]``; a ``None`` key raises the same error as :meth:`__call__`.

        >>> from processors.api.functions import entry_key
        >>> CheckedKey(entry_key, "s", unwrap=True).keys_of([JetEvent(1, ("a", 1)), JetEvent(2, ("b", 2))])
        ['a', 'b']
        """
        fn = c_level(self.key_fn)
        keys = list(map(fn, map(_ITEM, items) if self.unwrap else items))
        if None in keys:  # a key equal to None: find the item whose key is None, if any, by identity
            for item, key in zip(items, keys):
                if key is None:
                    self(item)
        return keys

    def __call__(self, item: Any) -> Any:
        plain = item.item if self.unwrap else item
        key = self.key_fn(plain)
        if key is None:
            raise ValueError(
                f"Null key from the key function of stage '{self.stage}' for item {plain!r:.100}; make the "
                "function return a key for every item (filter out the items without one before this stage)")
        return key


def event_item(event: JetEvent) -> Any:
    """The plain item of an event."""
    return event.item


class EventMap:
    """``map`` on events: ``JetEvent(ts, fn(item))``, or ``None`` (dropped) when ``fn`` returns ``None``."""

    def __init__(self, fn: Callable[[Any], Any]):
        self.fn = fn

    def __call__(self, event: JetEvent) -> Any:
        out = self.fn(event.item)
        return None if out is None else JetEvent(event.timestamp, out)


class EventFilter:
    """``filter`` on events: ``pred(item)``."""

    def __init__(self, pred: Callable[[Any], Any]):
        self.pred = pred

    def __call__(self, event: JetEvent) -> Any:
        return self.pred(event.item)


class EventFlatMap:
    """``flat_map`` on events: every output of ``fn(item)`` carries the input's timestamp."""

    def __init__(self, fn: Callable[[Any], Any]):
        self.fn = fn

    def __call__(self, event: JetEvent) -> list:
        ts = event.timestamp
        return [JetEvent(ts, out) for out in _iterate(self.fn(event.item))]


class EventUsingContext:
    """The ``*_using_context`` functions on events: ``fn(ctx, item)``; ``kind`` is map, filter or flat_map."""

    def __init__(self, fn: Callable[[Any, Any], Any], kind: str):
        self.fn = fn
        self.kind = kind

    def __call__(self, ctx: Any, event: JetEvent) -> Any:
        out = self.fn(ctx, event.item)
        if self.kind == "filter":
            return out
        if self.kind == "map":
            return None if out is None else JetEvent(event.timestamp, out)
        return [JetEvent(event.timestamp, o) for o in _iterate(out)]


def _iterate(result: Any) -> list:
    traverser = to_traverser(result)
    out = []
    item = traverser.next()
    while item is not None:
        out.append(item)
        item = traverser.next()
    return out


class _Emitting(Processor):
    """Base: ``outputs(ordinal, items) -> list`` for a whole inbox; the inbox is cleared once all are emitted."""

    _outbox: Any = None
    _pending: list | None = None
    _position: int = 0

    def init(self, outbox: Any, context: Any) -> None:
        self._outbox = outbox
        self.init_processor(context)

    def init_processor(self, context: Any) -> None:
        """Hook for subclasses."""

    def outputs(self, ordinal: int, items: list) -> list:
        raise NotImplementedError

    def process(self, ordinal: int, inbox: Inbox) -> None:
        if self._pending is None:
            self._pending = self.outputs(ordinal, list(inbox))
            self._position = 0
        self._position = self._outbox.offer_many(self._pending, self._position)
        if self._position == len(self._pending):
            self._pending = None
            inbox.clear()

    def try_process_watermark(self, watermark: Watermark) -> bool:
        return self._outbox.offer(watermark)


class HashJoinCollectP(Processor):
    """Collects ``key_fn(item) -> [projection_fn(item), ...]``; emits the table once in ``complete()``."""

    _outbox: Any = None

    def __init__(self, key_fn: Callable[[Any], Any], projection_fn: Callable[[Any], Any]):
        self.key_fn = key_fn
        self.projection_fn = projection_fn
        self._table: dict = {}

    def init(self, outbox: Any, context: Any) -> None:
        self._outbox = outbox

    def process(self, ordinal: int, inbox: Inbox) -> None:
        table, key_fn, project = self._table, self.key_fn, self.projection_fn
        for item in inbox.take_all():
            if type(item) is JetEvent:
                item = item.item
            table.setdefault(key_fn(item), []).append(project(item))

    def complete(self) -> bool:
        return self._outbox.offer(self._output())

    def _output(self) -> _Table:
        out = self.__dict__.get("_out")
        if out is None:
            out = self._out = _Table(self._table)
        return out


class _Table:
    """The lookup table a collector sends to the joiner (a wrapper, so an empty table is still an item)."""

    __slots__ = ("entries",)

    def __init__(self, entries: dict):
        self.entries = entries

    def __reduce__(self) -> tuple:
        return _Table, (self.entries,)


class HashJoinP(_Emitting):
    """Joins ordinal-0 items with the tables received on ordinals 1..n.

    ``mode``: ``"bi"`` (``fn(left, right)``), ``"tri"`` (``fn(left, r1, r2)``) or ``"tags"``
    (``fn(left, ItemsByTag)`` with ``tags[i]`` for clause i). ``events``: left items are ``JetEvent``.
    ``inner``: a left item without a match is dropped instead of joined with ``None``.
    """

    def __init__(self, key_fns: Sequence[Callable[[Any], Any]], map_to_output_fn: Callable[..., Any],
                 mode: str, tags: Sequence[Tag] = (), events: bool = False, inner: bool = False):
        self.inner = inner
        self.key_fns = tuple(key_fns)
        self.map_to_output_fn = map_to_output_fn
        self.mode = mode
        self.tags = tuple(tags)
        self.events = events
        self._tables: list[dict] = [{} for _ in self.key_fns]

    def outputs(self, ordinal: int, items: list) -> list:
        if ordinal > 0:
            table = self._tables[ordinal - 1]
            for received in items:
                for key, values in received.entries.items():
                    table.setdefault(key, []).extend(values)
            return []
        out: list = []
        for item in items:
            if self.events:
                ts, plain = item.timestamp, item.item
                out.extend(JetEvent(ts, o) for o in self._join(plain))
            else:
                out.extend(self._join(item))
        return out

    def _join(self, left: Any) -> list:
        matches = [table.get(key_fn(left)) for key_fn, table in zip(self.key_fns, self._tables)]
        if self.inner and not all(matches):  # inner_hash_join: an item without a match is dropped
            return []
        matches = [m or (None,) for m in matches]
        fn, results = self.map_to_output_fn, []
        for combination in product(*matches) if len(matches) > 1 else ((m,) for m in matches[0]):
            if self.mode == "bi":
                out = fn(left, combination[0])
            elif self.mode == "tri":
                out = fn(left, combination[0], combination[1])
            else:
                out = fn(left, ItemsByTag(dict(zip(self.tags, combination))))
            if out is not None:
                results.append(out)
        return results


class DistinctP(_Emitting):
    """Emits an item only if its key was not seen before by this processor."""

    def __init__(self, key_fn: Callable[[Any], Any]):
        self.key_fn = key_fn
        self._seen: set = set()

    def outputs(self, ordinal: int, items: list) -> list:
        seen, key_fn, out = self._seen, self.key_fn, []
        for item in items:
            key = key_fn(item)
            if key not in seen:
                seen.add(key)
                out.append(item)
        return out


class RollingAggregateP(_Emitting):
    """For every item: accumulate it into its key's accumulator and emit ``(key, export(acc))`` (keyed) or
    ``export(acc)`` (``key_fn`` None). With ``events`` the items are ``JetEvent`` and so are the outputs."""

    def __init__(self, key_fn: Callable[[Any], Any] | None, op: AggregateOperation, events: bool = False):
        self.key_fn = key_fn
        self.op = op
        self.events = events
        self._accs: dict = {}

    def outputs(self, ordinal: int, items: list) -> list:
        op, accs, key_fn, out = self.op, self._accs, self.key_fn, []
        create, accumulate, export = op.create_fn, op.accumulate_fn, op.export_fn
        for item in items:
            plain = item.item if self.events else item
            key = None if key_fn is None else key_fn(plain)
            acc = accs[key] = accumulate(accs[key] if key in accs else create(), plain)
            result = export(acc) if key_fn is None else (key, export(acc))
            out.append(JetEvent(item.timestamp, result) if self.events else result)
        return out


class UnwrapEventsP(PeekWrappedP):
    """Wraps a sink processor: events in its inbox are replaced by their plain items before it sees them;
    everything else is delegated (a peek wrapper that logs nothing)."""

    def __init__(self, wrapped: Processor):
        super().__init__(wrapped, str, None, peek_input=False, peek_output=False)

    def process(self, ordinal: int, inbox: Inbox) -> None:
        # the same inbox, rewritten: what the wrapped processor leaves in it is offered again next time
        inbox.add_all([item.item if type(item) is JetEvent else item for item in inbox.take_all()])
        self.wrapped.process(ordinal, inbox)


# ------------------------------------------------------------------------------------------------ stream half


def to_event(item: Any, timestamp: int) -> JetEvent:
    """``wrap_fn`` of the watermark parameters: a plain item and its timestamp as a ``JetEvent``."""
    return JetEvent(timestamp, item)


def rewrap_event(event: JetEvent, timestamp: int) -> JetEvent:
    """``wrap_fn`` when an event gets a new timestamp (``with_timestamps`` on a stage that had them)."""
    return JetEvent(timestamp, event.item)


event_timestamp = attrgetter("timestamp")  # of a JetEvent: the windowing processors' timestamp function (C-level)


class EventToString:
    """``peek`` on events: ``to_string_fn(item) (eventTime=HH:MM:SS.mmm)``, as Jet's adapted peek."""

    def __init__(self, to_string_fn: Callable[[Any], Any]):
        self.to_string_fn = to_string_fn

    def __call__(self, event: Any) -> str:
        if type(event) is not JetEvent:
            return str(self.to_string_fn(event))
        return f"{self.to_string_fn(event.item)} (eventTime={format_time(event.timestamp)})"


class EventPredicate:
    """``pred(item)`` of an event (peek's ``should_log_fn``)."""

    def __init__(self, pred: Callable[[Any], Any]):
        self.pred = pred

    def __call__(self, event: Any) -> Any:
        return self.pred(event.item if type(event) is JetEvent else event)


class EventAccumulate:
    """An accumulate function on the plain item of an event."""

    def __init__(self, fn: Callable[[Any, Any], Any]):
        self.fn = fn

    def __call__(self, acc: Any, event: JetEvent) -> Any:
        return self.fn(acc, event.item)


class EventResult:
    """A window's ``map_to_output_fn(start, end, key, result)`` whose output travels as ``JetEvent(end, out)``;
    ``keyed`` False calls ``fn(start, end, result)``. ``events`` False: the output travels as it is (a window
    whose only readers are sinks, see :func:`window_output`)."""

    def __init__(self, fn: Callable[..., Any], keyed: bool, events: bool = True):
        self.fn = fn
        self.keyed = keyed
        self.events = events

    def __call__(self, start: int, end: int, key: Any, result: Any) -> Any:
        out = self.fn(start, end, key, result) if self.keyed else self.fn(start, end, result)
        return out if out is None or not self.events else JetEvent(end, out)

    @property
    def wrap_entries(self) -> Callable[[int, list], list] | None:
        """For ``TimestampedEntry.from_window_result`` (keyed): ``wrap(end, entries)`` -> ``[JetEvent(end, entry),
        ...]``, so that the sliding-window processors make the entries straight from the window with C-level
        passes, as for a Core DAG, and only wrap them; None for any other function."""
        return self._wrap if self._default_entries and self.events else None

    @property
    def _default_entries(self) -> bool:
        return self.keyed and self.fn is TimestampedEntry.from_window_result

    @staticmethod
    def _wrap(end: int, entries: list) -> list:
        return list(map(JetEvent, repeat(end), entries))

    def window_outputs(self, start: int, end: int, pairs: list) -> list:
        """``[self(start, end, key, result) for key, result in pairs]``, ``None`` outputs left out: the
        sliding-window processors call this once per chunk of a window; ``TimestampedEntry.from_window_result``
        outputs are made without a Python call per result."""
        if self._default_entries:
            keys, results = zip(*pairs) if pairs else ((), ())
            entries = map(_new_tuple, repeat(TimestampedEntry), zip(keys, results, repeat(end)))
            return list(map(JetEvent, repeat(end), entries)) if self.events else list(entries)
        return [out for out in (self(start, end, key, result) for key, result in pairs) if out is not None]


def window_output(fn: Callable[..., Any], keyed: bool, events: bool) -> Callable[..., Any]:
    """The ``map_to_output_fn`` a windowing processor gets for the user's (or the default) ``fn``: an
    :class:`EventResult` whose outputs are ``JetEvent(end, out)`` when ``events`` (later stages need their
    timestamps), else ``fn`` itself when keyed, so that the processors take their Core-DAG fast paths and make
    no wrapper per result (a window whose only readers are sinks: they would only unwrap it again).

    >>> fn = TimestampedEntry.from_window_result
    >>> window_output(fn, keyed=True, events=False) is fn, type(window_output(fn, keyed=True, events=True))
    (True, <class 'pipeline.internal.EventResult'>)
    """
    return fn if keyed and not events else EventResult(fn, keyed, events)


def unwrap_events(processor: Processor) -> Processor:
    """``UnwrapEventsP(processor)`` (a picklable module-level wrap function)."""
    return UnwrapEventsP(processor)
