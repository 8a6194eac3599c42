"""The processor driver: runs one processor through Jet's lifecycle over batches of items, engine-free.

The Spark runtime calls :func:`drive` once per processor (one Spark partition of a vertex) and
``verify_processor`` shares its lifecycle helpers (:func:`describe_processor`, :func:`call_bool`,
:func:`close_processor`). Guarantees of :func:`drive`:

1. ``init(outbox, context)`` first; ``close()`` last and always, also when ``init`` or any later call failed
   or the consumer stopped iterating. An exception from ``close`` is raised when nothing failed before and is
   only logged after an earlier failure (so it never hides the original error).
2. ``inbound`` yields ``(ordinal, batch)`` with non-decreasing priorities (``inbound_priorities[ordinal]``,
   lower first, as Jet). When the stream moves to a higher priority group, or ends, ``complete_edge(o)`` is
   called (until True) for every ordinal of each finished group in ascending ordinal order, including
   ordinals that received nothing and whole groups that received nothing. Priorities going down are an
   error of the caller (``ValueError``).
3. Each batch goes into the ordinal's ``Inbox``; ``process(ordinal, inbox)`` is called until the inbox is
   empty, then ``try_process()`` until True (Jet's NULLARY_PROCESS). Then ``complete()`` until True.
4. Before every call the outbox is ``reset()`` and its ``call`` names the method for error messages. After
   every call the non-empty buckets are yielded as ``(outbound_ordinal, items)``; a bucket never holds more
   than its edge's queue size. Yielded lists belong to the consumer, which must not mutate them (the
   ``BatchTransform`` fast path yields one list to every ordinal).
5. ``BatchTransform`` processors run on the fast path: one ``transform_chunks(batch, size)`` call per inbound
   batch (``size``: the smallest outbound queue size), each list it yields sent to every outbound ordinal,
   cut to that ordinal's queue size; no outbox and no per-item calls. Memory stays bounded by queue sizes
   even when one batch expands into millions of items.
6. Contract breaks raise ``ProcessorContractError`` naming the processor class, the vertex, the method and
   the rule: a boolean method returning ``None``; ``NO_PROGRESS_LIMIT`` consecutive calls of a *cooperative*
   processor that neither removed an input item nor emitted anything nor returned True (instead of spinning
   for ever); ``complete()``
   returning True while a refused item was never re-offered (it would be lost); plus the outbox rules
   (``processors/outbox.py``).
7. A *non-cooperative* processor may legitimately return without progress (say, a source whose
   ``fill_buffer_fn`` waits for input), as in Jet. The driver never fails it for that; it backs off instead:
   after the n-th consecutive call without progress it sleeps ``IDLE_MIN_SLEEP * 2**(n-1)`` seconds, at most
   ``IDLE_MAX_SLEEP`` (10 ms), and any progress resets the back-off. ``is_cooperative()`` is asked only on the
   first call without progress, so calls that make progress pay nothing for this.
8. ``ProcessorMetrics`` counts items received per inbound ordinal and emitted per outbound ordinal.

Any exception escaping a processor gets a note naming the processor and the method that raised it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from dag.errors import ProcessorContractError
from processors.inbox import Inbox
from processors.outbox import _NO_ITEM, Outbox
from processors.processor import BatchTransform

__all__ = [
    "drive", "ProcessorMetrics", "NO_PROGRESS_LIMIT", "IDLE_MIN_SLEEP", "IDLE_MAX_SLEEP", "describe_processor",
    "call_bool", "close_processor",
]

NO_PROGRESS_LIMIT = 1000
"""Consecutive calls of a cooperative processor without any progress after which the driver gives up with a
``ProcessorContractError``."""
IDLE_MIN_SLEEP = 25e-6
"""Seconds a non-cooperative processor's first call without progress is followed by; doubles per such call."""
IDLE_MAX_SLEEP = 0.01
"""The longest back-off sleep (seconds) between calls of a non-cooperative processor that makes no progress."""
_sleep = time.sleep  # module attribute so tests can observe the back-off without waiting

_log = logging.getLogger("jetspark.driver")
_MISSING = object()
_SINK_CHUNK = 1024  # inputs per transform_chunks call of a BatchTransform without outbound edges


@dataclass
class ProcessorMetrics:
    """Per-processor counters: ``received[inbound ordinal]`` and ``emitted[outbound ordinal]`` item counts."""

    received: dict[int, int] = field(default_factory=dict)
    emitted: dict[int, int] = field(default_factory=dict)


# ---------------------------------------------------------------------------- shared lifecycle helpers
def describe_processor(processor: Any, vertex_name: str | None = None, index: int | None = None) -> str:
    """How messages name a processor: ``processor WordP of vertex 'tokenize' #0``."""
    text = f"processor {type(processor).__qualname__}"
    if vertex_name:
        text += f" of vertex '{vertex_name}'"
        if index is not None:
            text += f" #{index}"
    return text


def call_bool(outbox: Outbox, call: str, fn: Callable[..., Any], *args: Any) -> bool:
    """Reset ``outbox``, record ``call`` (for messages) and return ``fn(*args)``, which must be a bool."""
    outbox.reset()
    outbox.call = call
    result = fn(*args)
    if result is True or result is False:
        return result
    if result is None:
        raise ProcessorContractError(
            f"{outbox.owner}: {call} returned None; it must return True when done or False to be called again "
            "(did you forget the return statement?)"
        )
    return bool(result)


def close_processor(processor: Any, owner: str, failure: BaseException | None) -> None:
    """Call ``processor.close()``; its exception propagates only when there was no earlier ``failure``."""
    try:
        processor.close()
    except Exception as exc:
        if failure is None:
            exc.add_note(f"in {owner}, method close()")
            raise
        _log.warning("close() of %s failed after an earlier failure (%r); the earlier one is raised", owner, exc,
                     exc_info=exc)


def no_progress_error(owner: str, call: str, calls: int) -> ProcessorContractError:
    """The error for a processor that made no progress in ``calls`` consecutive calls of ``call``."""
    return ProcessorContractError(
        f"{owner} made no progress in {calls} consecutive calls of {call}: it neither removed an inbox item, "
        "nor emitted anything, nor returned True. A processor must make progress when called (if it waits for "
        "the outbox, it must emit the refused item again on the next call)"
    )


def unfinished_item_error(owner: str, call: str, outbox: Outbox) -> ProcessorContractError:
    """The error for a processor claiming to be done while the outbox still holds a refused item."""
    pending = outbox._pending if outbox._pending_snapshot is _NO_ITEM else outbox._pending_snapshot
    return ProcessorContractError(
        f"{owner}: {call} returned True, but the outbox still has an unfinished item ({pending!r}): an offer "
        "returned False and the item was never offered again, so it would be lost. Return False after a refused "
        "offer and offer the same item again on the next call"
    )


# ---------------------------------------------------------------------------- the driver
def drive(
    processor: Any,
    context: Any,
    *,
    inbound: Iterable[tuple[int, list]],
    inbound_priorities: Mapping[int, int],
    outbound_capacities: Sequence[int],
    metrics: ProcessorMetrics | None = None,
    vertex_name: str | None = None,
) -> Iterator[tuple[int, list]]:
    """Run ``processor`` over ``inbound`` batches, yielding ``(outbound_ordinal, items)`` (see module docstring).

    >>> from processors.processor import AbstractProcessor
    >>> from processors.context import Context
    >>> class Twice(AbstractProcessor):
    ...     def __init__(self):
    ...         self.twice = self.flat_mapper(lambda item: [item, item])
    ...     def try_process0(self, item):
    ...         return self.twice.try_process(item)
    >>> list(drive(Twice(), Context(), inbound=[(0, [1, 2])], inbound_priorities={0: 0}, outbound_capacities=[3]))
    [(0, [1, 1, 2]), (0, [2])]
    """
    if vertex_name is None:
        vertex_name = getattr(context, "vertex_name", None)
    owner = describe_processor(processor, vertex_name, getattr(context, "global_processor_index", None))
    outbox = Outbox(outbound_capacities, owner=owner)
    if metrics is None:
        metrics = ProcessorMetrics()
    for o in inbound_priorities:
        metrics.received.setdefault(o, 0)
    for o in range(len(outbound_capacities)):
        metrics.emitted.setdefault(o, 0)
    run = _Run(processor, outbox, metrics, owner)
    failure: BaseException | None = None
    try:
        outbox.call = "init(outbox, context)"
        processor.init(outbox, context)
        yield from run.drain()
        groups = _PriorityGroups(inbound_priorities)
        if isinstance(processor, BatchTransform):
            yield from run.fast_batches(inbound, groups)
        else:
            yield from run.batches(inbound, groups)
        yield from run.until_true("complete()", processor.complete, final=True)
    except BaseException as exc:
        failure = exc
        if isinstance(exc, Exception) and not isinstance(exc, ProcessorContractError):
            exc.add_note(f"in {owner}, method {outbox.call or 'init(outbox, context)'}")
        raise
    finally:
        close_processor(processor, owner, failure)


class _PriorityGroups:
    """Tracks which inbound priority group is being consumed and which ordinals to complete when it ends."""

    __slots__ = ("priority_of", "pending", "current")

    def __init__(self, priorities: Mapping[int, int]):
        self.priority_of = dict(priorities)
        by_priority: dict[int, list[int]] = {}
        for ordinal, priority in self.priority_of.items():
            by_priority.setdefault(priority, []).append(ordinal)
        self.pending = [(p, sorted(by_priority[p])) for p in sorted(by_priority)]  # groups not yet finished
        self.current: int | None = None

    def enter(self, ordinal: int) -> list[int]:
        """A batch of ``ordinal`` arrives: the ordinals whose edges are finished by this, in order."""
        try:
            priority = self.priority_of[ordinal]
        except KeyError:
            raise ValueError(
                f"inbound ordinal {ordinal} has no entry in inbound_priorities {self.priority_of}; "
                "the caller must give a priority for every inbound ordinal"
            ) from None
        if self.current is not None and priority < self.current:
            raise ValueError(
                f"inbound batches must come in non-decreasing priority, but ordinal {ordinal} (priority {priority}) "
                f"came after a batch of priority {self.current}"
            )
        self.current = priority
        finished: list[int] = []
        while self.pending and self.pending[0][0] < priority:
            finished += self.pending.pop(0)[1]
        return finished

    def finish(self) -> list[int]:
        """The stream ended: every ordinal not yet completed, in priority then ordinal order."""
        finished = [o for _, ordinals in self.pending for o in ordinals]
        self.pending = []
        return finished


class _Run:
    """The state of one ``drive`` call; its generators yield output batches."""

    __slots__ = ("processor", "outbox", "metrics", "owner", "buckets", "n_out", "cooperative")

    def __init__(self, processor: Any, outbox: Outbox, metrics: ProcessorMetrics, owner: str):
        self.processor = processor
        self.outbox = outbox
        self.metrics = metrics
        self.owner = owner
        self.buckets = outbox._buckets
        self.n_out = len(self.buckets)
        self.cooperative: bool | None = None  # asked on the first call without progress

    def stalled(self, call: str, stalls: int) -> None:
        """``stalls`` consecutive calls of ``call`` made no progress: a cooperative processor fails after
        ``NO_PROGRESS_LIMIT`` of them; a non-cooperative one is given time (exponential back-off, capped)."""
        if self.cooperative is None:
            self.cooperative = bool(getattr(self.processor, "is_cooperative", lambda: True)())
        if self.cooperative:
            if stalls >= NO_PROGRESS_LIMIT:
                raise no_progress_error(self.owner, call, stalls)
        else:
            _sleep(min(IDLE_MIN_SLEEP * (1 << min(stalls - 1, 20)), IDLE_MAX_SLEEP))

    def drain(self) -> Iterator[tuple[int, list]]:
        """Yield and count the non-empty buckets; the generator's return value is the number of items."""
        total = 0
        buckets = self.buckets
        emitted = self.metrics.emitted
        for o in range(self.n_out):
            if buckets[o]:
                items = buckets[o]
                buckets[o] = []
                emitted[o] += len(items)
                total += len(items)
                yield (o, items)
        return total

    def until_true(
        self, call: str, fn: Callable[..., Any], *args: Any, final: bool = False
    ) -> Iterator[tuple[int, list]]:
        """Call ``fn(*args)`` until it returns True, yielding its output, guarding against no progress; ``final``
        (for ``complete()``): True with a refused, never re-offered item is an error.
        """
        stalls = 0
        outbox = self.outbox
        while True:
            done = call_bool(outbox, call, fn, *args)
            emitted = yield from self.drain()
            if done:
                if final and outbox.has_unfinished_item():
                    raise unfinished_item_error(self.owner, call, outbox)
                return
            if emitted:
                stalls = 0
            else:
                stalls += 1
                self.stalled(call, stalls)

    def complete_edges(self, ordinals: list[int]) -> Iterator[tuple[int, list]]:
        complete_edge = self.processor.complete_edge
        for o in ordinals:
            yield from self.until_true(f"complete_edge({o})", complete_edge, o)

    def batches(self, inbound: Iterable[tuple[int, list]], groups: _PriorityGroups) -> Iterator[tuple[int, list]]:
        """The generic path: inbox, ``process`` until empty, ``try_process`` until True, per batch."""
        processor, outbox = self.processor, self.outbox
        process = processor.process
        received = self.metrics.received
        inboxes: dict[int, Inbox] = {}
        current: Any = _MISSING
        priority_of = groups.priority_of
        for ordinal, batch in inbound:
            priority = priority_of.get(ordinal, _MISSING)
            if priority != current or priority is _MISSING:
                yield from self.complete_edges(groups.enter(ordinal))
                current = priority
            if not batch:
                continue
            received[ordinal] += len(batch)
            inbox = inboxes.get(ordinal)
            if inbox is None:
                inbox = inboxes[ordinal] = Inbox()
            items = inbox._items
            items.extend(batch)
            call = f"process({ordinal}, inbox)"
            stalls = 0
            while items:
                before = len(items)
                outbox.reset()
                outbox.call = call
                process(ordinal, inbox)
                drained = yield from self.drain()
                if drained or len(items) != before:
                    stalls = 0
                else:
                    stalls += 1
                    self.stalled(call, stalls)
            yield from self.until_true("try_process()", processor.try_process)
        yield from self.complete_edges(groups.finish())

    def fast_batches(
        self, inbound: Iterable[tuple[int, list]], groups: _PriorityGroups
    ) -> Iterator[tuple[int, list]]:
        """The ``BatchTransform`` path: one ``transform_batch`` per inbound batch, no outbox."""
        transform = self.processor.transform_chunks
        received, emitted = self.metrics.received, self.metrics.emitted
        capacities = self.outbox._capacities
        ordinals = [(o, capacities[o]) for o in range(self.n_out)]
        size = min(capacities, default=_SINK_CHUNK)
        outbox = self.outbox
        current: Any = _MISSING
        priority_of = groups.priority_of
        for ordinal, batch in inbound:
            priority = priority_of.get(ordinal, _MISSING)
            if priority != current or priority is _MISSING:
                yield from self.complete_edges(groups.enter(ordinal))
                current = priority
            if not batch:
                continue
            received[ordinal] += len(batch)
            outbox.call = f"transform_batch(<{len(batch)} items of ordinal {ordinal}>)"
            for out in transform(batch, size):
                if not out:
                    continue
                n = len(out)
                for o, capacity in ordinals:
                    emitted[o] += n
                    if n <= capacity:
                        yield (o, out)
                    else:
                        for start in range(0, n, capacity):
                            yield (o, out[start:start + capacity])
        yield from self.complete_edges(groups.finish())
