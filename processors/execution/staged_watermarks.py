"""Watermarks in a STAGED job (engine-free): how they travel between processors and how a receiver coalesces them.

The contract's rule: in STAGED mode a ``Watermark`` goes to every downstream processor of the edge, after the
items its sender emitted before it, and is coalesced per upstream processor, so a windowing DAG over bounded
input gives the same results in both modes. A watermark therefore never reaches ``process()`` (or a key or
timestamp function) as an item; it reaches ``try_process_watermark`` once every upstream processor of every
inbound edge has passed it (Jet's coalescing, :class:`~processors.execution.coalescer.WatermarkCoalescer`).

In a staged task a processor's output is a stream of ``(ordinal, batch)``. Three kinds of batch:

- a ``list`` of items (the common case; consumers test one class per batch, never per item);
- a :class:`~processors.api.watermark.Watermark` on its own: emitted by the processor just before, in the same
  task (a fused edge has exactly one upstream processor). :func:`split_watermarks` cuts an outbox list
  around its watermarks, so the items before a watermark stay before it;
- a :class:`SenderWatermark` ``(sender, timestamp)``: a watermark that crossed a Spark shuffle (or a
  coalesce, a narrow edge, a broadcast). The edge's sender (``dag/runtime/common/senders.py``) sends it to every
  candidate processor of the edge, tagged with the sending processor's index, and after its last item a
  ``SenderWatermark(sender, DONE)`` to the same candidates when it sent any watermark or nothing at all (so
  the others' watermarks need not wait for it). Spark keeps each sender's records in order, so the items it sent before
  a watermark arrive before it.

Spark reads a shuffle's input one sender's block after another, so across a shuffle a receiver's watermark
advances only as far as the senders read so far allow, and mostly at the end of the edge: windows close later
than in a pipelined job, with the same results.

:class:`InboundWatermarks` is the receiving side: one coalescer per inbound ordinal over that edge's upstream
processors (which the runtime lists per receiving processor); what it forwards goes to the tasklet, which
coalesces over its edges as in a pipelined job.

>>> inbound = InboundWatermarks({0: [3, 5]})
>>> inbound.observe(0, SenderWatermark(3, 100)), inbound.observe(0, SenderWatermark(5, 90))
(None, 90)
>>> inbound.observe(0, SenderWatermark(5, DONE)), inbound.finish(0)
(100, None)
"""

from __future__ import annotations

from typing import Iterator, Mapping, Sequence

from jetspark_base.errors import DagValidationError
from processors.execution.coalescer import WatermarkCoalescer
from processors.api.watermark import Watermark

__all__ = ["SenderWatermark", "DONE", "split_watermarks", "InboundWatermarks", "is_items"]

DONE = None
"""The timestamp of a sender's last mark: it will send nothing more on the edge."""


class SenderWatermark(tuple):
    """A watermark (or, with timestamp :data:`DONE`, the end) of upstream processor ``sender`` on a staged edge."""

    __slots__ = ()

    def __new__(cls, sender: int, timestamp: int | None) -> "SenderWatermark":
        return tuple.__new__(cls, (sender, timestamp))

    @property
    def sender(self) -> int:
        """The global index of the upstream processor that emitted it."""
        return self[0]

    @property
    def timestamp(self) -> int | None:
        """The watermark's timestamp, or :data:`DONE`."""
        return self[1]

    def __repr__(self) -> str:
        return f"SenderWatermark({self[0]}, {'DONE' if self[1] is DONE else self[1]})"

    def __reduce__(self):
        return (SenderWatermark, (self[0], self[1]))


def is_items(batch: object) -> bool:
    """True when a staged stream's ``batch`` holds items (not a watermark or a sender's mark)."""
    return batch.__class__ is not Watermark and batch.__class__ is not SenderWatermark


def split_watermarks(ordinal: int, items: list) -> Iterator[tuple[int, object]]:
    """``(ordinal, items)`` cut around its watermarks: lists of items and each ``Watermark`` on its own, in order.

    >>> list(split_watermarks(0, [1, Watermark(5), 2, 3]))
    [(0, [1]), (0, Watermark(5)), (0, [2, 3])]
    """
    if Watermark not in map(type, items):  # the common case, scanned in C
        yield ordinal, items
        return
    start = 0
    for i, item in enumerate(items):
        if item.__class__ is Watermark:
            if i > start:
                yield ordinal, items[start:i]
            yield ordinal, item
            start = i + 1
    if start < len(items):
        yield ordinal, items[start:]


class InboundWatermarks:
    """Coalesces the :class:`SenderWatermark` marks of each inbound ordinal over its upstream processors.

    ``senders``: inbound ordinal -> the global indices of every upstream processor that may send to this
    processor on that edge. :meth:`observe` returns the ordinal's coalesced watermark to forward, or ``None``;
    :meth:`finish` (the edge ended) treats every sender as done and returns what that releases.
    """

    __slots__ = ("_position", "_coalescers")

    def __init__(self, senders: Mapping[int, Sequence[int]]):
        self._position = {o: {s: i for i, s in enumerate(ss)} for o, ss in senders.items()}
        self._coalescers = {o: WatermarkCoalescer(len(ss)) for o, ss in senders.items() if ss}

    def observe(self, ordinal: int, mark: SenderWatermark) -> int | None:
        """A mark arrived on ``ordinal``: the watermark it releases, if any."""
        position = self._position.get(ordinal, {}).get(mark[0])
        if position is None:
            raise DagValidationError(
                f"internal error: a watermark of upstream processor #{mark[0]} arrived on inbound ordinal {ordinal}, "
                f"whose senders are {sorted(self._position.get(ordinal, {}))}; please report it")
        coalescer = self._coalescers[ordinal]
        if mark[1] is DONE:
            return coalescer.queue_done(position)
        return coalescer.observe_wm(position, mark[1])

    def finish(self, ordinal: int) -> int | None:
        """Edge ``ordinal`` ended: every sender counts as done; the highest watermark that releases, if any."""
        coalescer = self._coalescers.pop(ordinal, None)
        if coalescer is None:
            return None
        released = None
        for position in range(len(self._position[ordinal])):
            if not coalescer.is_done(position):
                wm = coalescer.queue_done(position)
                if wm is not None:
                    released = wm
        return released
