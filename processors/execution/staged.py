"""The staged processor driver: :func:`drive` runs one processor over a stream of inbound batches, engine-free.

The lifecycle itself lives in :class:`processors.execution.tasklet.ProcessorTasklet` (the one state machine, shared with
the pipelined runtime and ``verify_processor``; ``drive`` runs it with the ``STAGED`` policy) and ``drive`` feeds it
batch by batch and yields what it emits. The Spark staged runtime calls :func:`drive` once per processor (one Spark
partition of a vertex). Guarantees:

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
   for ever); ``complete()`` returning True while a refused item was never re-offered (it would be lost);
   plus the outbox rules (``processors/api/outbox.py``).
7. A *non-cooperative* processor may legitimately return without progress (say, a source whose
   ``fill_buffer_fn`` waits for input), as in Jet. The driver never fails it for that; it backs off instead:
   after the n-th consecutive call without progress it sleeps :func:`back_off_seconds` ``(n)`` =
   ``IDLE_MIN_SLEEP * 2**(n-1)`` seconds, at most ``IDLE_MAX_SLEEP`` (10 ms), and any progress resets the
   back-off. ``is_cooperative()`` is asked once, when the tasklet is made, so calls pay nothing for this.
8. ``ProcessorMetrics`` counts items received per inbound ordinal and emitted per outbound ordinal.
9. Watermarks (:mod:`processors.execution.staged_watermarks`): an inbound batch may be a ``Watermark`` (from the fused
   processor before, the only upstream of its edge) or a ``SenderWatermark`` (from upstream processor
   ``sender``, coalesced over ``inbound_senders[ordinal]``); what passes the coalescing goes to
   ``try_process_watermark``, never into an inbox. A watermark the processor emits is yielded on its own,
   ``(ordinal, Watermark)``, between the lists of the items emitted before and after it.

Any exception escaping a processor gets a note naming the processor and the method that raised it.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Iterator, Mapping, Sequence

from processors.execution.staged_watermarks import InboundWatermarks, SenderWatermark, split_watermarks
from processors.execution.lifecycle import ProcessorMetrics, priority_groups
from processors.execution.tasklet import NEEDS_INPUT, PROGRESS, ProcessorTasklet
from processors.api.watermark import Watermark

__all__ = ["drive", "IDLE_MIN_SLEEP", "IDLE_MAX_SLEEP", "back_off_seconds", "run_steps"]

IDLE_MIN_SLEEP = 25e-6
"""Seconds a non-cooperative processor's first call without progress is followed by; doubles per such call."""
IDLE_MAX_SLEEP = 0.01
"""The longest back-off sleep (seconds) between calls of a non-cooperative processor that makes no progress."""
_sleep = time.sleep  # module attribute so tests can observe the back-off without waiting
_MISSING = object()


def back_off_seconds(stalls: int) -> float:
    """How long to wait after the ``stalls``-th consecutive call without progress (exponential, capped)."""
    return min(IDLE_MIN_SLEEP * (1 << min(stalls - 1, 20)), IDLE_MAX_SLEEP)


def drive(
    processor: Any,
    context: Any,
    *,
    inbound: Iterable[tuple[int, list]],
    inbound_priorities: Mapping[int, int],
    outbound_capacities: Sequence[int],
    metrics: ProcessorMetrics | None = None,
    vertex_name: str | None = None,
    inbound_senders: Mapping[int, Sequence[int]] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Run ``processor`` over ``inbound`` batches, yielding ``(outbound_ordinal, items)`` (see module docstring).

    ``inbound_senders``: inbound ordinal -> the upstream processors whose ``SenderWatermark`` marks arrive on it.

    >>> from processors.api.processor import AbstractProcessor
    >>> from processors.api.context import Context
    >>> class Twice(AbstractProcessor):
    ...     def __init__(self):
    ...         self.twice = self.flat_mapper(lambda item: [item, item])
    ...     def try_process0(self, item):
    ...         return self.twice.try_process(item)
    >>> list(drive(Twice(), Context(), inbound=[(0, [1, 2])], inbound_priorities={0: 0}, outbound_capacities=[3]))
    [(0, [1, 1, 2]), (0, [2])]
    """
    tasklet = ProcessorTasklet(processor, context, inbound_priorities=inbound_priorities,
                               outbound_capacities=outbound_capacities, metrics=metrics, vertex_name=vertex_name)
    failure: BaseException | None = None
    try:
        yield from run_steps(tasklet)  # init
        groups = _PriorityGroups(inbound_priorities)
        priority_of = groups.priority_of
        current: Any = _MISSING
        add_batch = tasklet.add_batch
        marks = InboundWatermarks(inbound_senders or {})

        def edge_done(o: int) -> None:
            wm = marks.finish(o)
            if wm is not None:
                tasklet.add_watermark(o, wm)
            tasklet.edge_done(o)

        for ordinal, batch in inbound:
            priority = priority_of.get(ordinal, _MISSING)
            if priority != current or priority is _MISSING:
                for o in groups.enter(ordinal):
                    edge_done(o)
                current = priority
            cls = batch.__class__
            if cls is Watermark:
                tasklet.add_watermark(ordinal, batch.timestamp)
            elif cls is SenderWatermark:
                wm = marks.observe(ordinal, batch)
                if wm is None:
                    continue
                tasklet.add_watermark(ordinal, wm)
            elif batch:
                add_batch(ordinal, batch)
            else:
                continue
            yield from run_steps(tasklet)
        for o in groups.finish():
            edge_done(o)
        yield from run_steps(tasklet)
    except BaseException as exc:
        failure = exc
        raise
    finally:
        tasklet.close(failure)


def run_steps(tasklet: ProcessorTasklet) -> Iterator[tuple[int, Any]]:
    """Step ``tasklet`` until it needs input (or is done), yielding its output, each watermark on its own (module
    docstring, rule 9; the ``BatchTransform`` fast path emits none, so only outbox output is scanned); back off a
    non-cooperative processor that makes no progress."""
    step, take_output = tasklet.step, tasklet.take_output
    while True:
        result = step()
        fast = tasklet._fast_out is not None
        out = take_output()
        if out:
            if fast:
                yield from out
            else:
                for o, items in out:
                    yield from split_watermarks(o, items)
        if result == PROGRESS:
            continue
        if result == NEEDS_INPUT:
            return
        if tasklet.cooperative is False:
            _sleep(back_off_seconds(tasklet.stalls))


class _PriorityGroups:
    """Tracks which inbound priority group is being consumed and which ordinals to complete when it ends."""

    __slots__ = ("priority_of", "pending", "current")

    def __init__(self, priorities: Mapping[int, int]):
        self.priority_of = dict(priorities)
        self.pending = priority_groups(priorities)  # groups not yet finished
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
