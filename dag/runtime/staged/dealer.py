"""Dealing a driver source's entries to its processors on demand (``EngineConfig.deal_driver_sources``).

A ``read_map_p``/``read_list_p`` vertex whose outbound edges are all unicast may give any entry to any of its
processors: on Jet a unicast edge lets any consumer processor take any item, and which processor reads which
entry of an IMap is not part of the contract. Slicing the collection into equal-*count* slices up front lets
the cost of the entries decide the stage's length (95 books of 0.2-3.4 MB on two processors: one slice holds
52% of the bytes). With dealing, each processor asks the driver for its next chunk when it has emitted the
previous one, so a processor that finishes early takes more.

- **Chunk sizes shrink** as the collection runs out (guided scheduling): ``ceil(remaining / (2 * P))`` entries,
  at least one, so a map of a million small entries costs about ``2 * P * ln(n)`` requests, not one per entry,
  and the last chunks are single entries that even out the processors' finishing times.
- **Each processor's sequence is recorded** on the driver: chunk ``i`` of processor ``g`` is dealt once and
  replayed to every later request for ``(g, i)``, so a retried or speculative attempt of task ``g`` (or one
  Spark recomputes for a lost shuffle file) reads exactly the entries the first attempt read, in the same
  order; no entry is lost or duplicated by a retry. The end of the collection is recorded the same way.
- **Order**: each chunk is a contiguous run of the collection and a processor's chunks come in collection
  order, so every processor emits its entries in collection order (as a slice did).

The task side (:func:`dealt_chunks`) asks over the job's authenticated channel (``jobchannel.py``); the driver
side (:class:`Dealer`) answers on the channel's connection threads. Pure Python: no pyspark.

>>> dealer = Dealer(list(range(10)), processors=2)
>>> [dealer.chunk(0, 0), dealer.chunk(1, 0), dealer.chunk(0, 1), dealer.chunk(0, 0)]
[[0, 1, 2], [3, 4], [5, 6], [0, 1, 2]]
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["TOPIC", "Dealer", "dealt_chunks"]

TOPIC = "source.deal"
"""Channel topic: request ``{"vertex", "ordinal", "g", "i"}``, reply chunk ``i`` of processor ``g`` (a list) or
``None`` at the end. ``ordinal`` is ``None``, or the outbound ordinal of a source read once per edge (each edge
has its own dealer)."""


class Dealer:
    """The entries of one driver source, dealt to ``processors`` processors in shrinking chunks (thread-safe)."""

    def __init__(self, items: list, processors: int):
        self._items, self._processors = items, processors
        self._next = 0
        self._dealt: list[list[tuple[int, int] | None]] = [[] for _ in range(processors)]
        self._lock = threading.Lock()

    def chunk(self, g: int, i: int) -> list | None:
        """Chunk ``i`` of processor ``g``: dealt now if ``i`` is the next one, else the one dealt before;
        ``None`` once the collection is exhausted."""
        if not 0 <= g < self._processors:
            raise ValueError(f"processor index {g} out of range 0..{self._processors - 1}")
        with self._lock:
            dealt = self._dealt[g]
            if i > len(dealt) or i < 0:
                raise ValueError(f"processor {g} asked for chunk {i} but was dealt {len(dealt)} chunk(s)")
            if i == len(dealt):
                remaining = len(self._items) - self._next
                if remaining == 0:
                    dealt.append(None)
                else:
                    size = -(-remaining // (2 * self._processors))
                    dealt.append((self._next, self._next + size))
                    self._next += size
            bounds = dealt[i]
        return None if bounds is None else self._items[bounds[0]:bounds[1]]


def dealt_chunks(channel: Any, vertex: str, ordinal: int | None, g: int) -> Iterator[list]:
    """Processor ``g``'s chunks of the dealt driver source ``vertex`` (of its edge at ``ordinal`` when it is
    read once per edge), asked for one at a time over ``channel`` (a ``jobchannel.ChannelRef``) as the caller
    consumes them."""
    client = channel.client()
    for i in itertools.count():
        chunk = client.request(TOPIC, {"vertex": vertex, "ordinal": ordinal, "g": g, "i": i})
        if chunk is None:
            return
        yield chunk
