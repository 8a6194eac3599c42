"""Items the pipeline makes: ``TimestampedItem``, ``SimpleEvent`` and Jet's internal timestamped wrapper.

- :class:`TimestampedItem` ``(timestamp, item)``: the result of an un-keyed window (``timestamp`` is the
  window's end), as Jet's ``TimestampedItem``.
- :class:`SimpleEvent` ``(timestamp, sequence)``: the items of ``TestSources.item_stream``, as Jet's.
- :class:`JetEvent` ``(timestamp, item)``: internal. Once a stream stage has timestamps, every item travels
  between the stage vertices wrapped in a ``JetEvent`` so that ``map``/``filter``/``flat_map`` keep its
  timestamp and a later ``window`` needs no timestamp function (Jet's ``JetEvent``). The lowering adapts user
  functions, so they and the sinks see the plain items. ``str`` shows ``item (eventTime=HH:MM:SS.mmm)`` as
  Jet's peek does.

>>> JetEvent(1_000, "a")
JetEvent(timestamp=1000, item='a')
>>> TimestampedItem(10, 3).item
3
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, NamedTuple

__all__ = ["TimestampedItem", "SimpleEvent", "JetEvent", "format_time"]


def format_time(timestamp: int) -> str:
    """``HH:MM:SS.mmm`` (UTC) of an epoch-milliseconds timestamp, as Jet's ``toLocalTime`` output."""
    moment = datetime.fromtimestamp(timestamp / 1000, tz=timezone.utc)
    return moment.strftime("%H:%M:%S.") + f"{timestamp % 1000:03d}"


class TimestampedItem(NamedTuple):
    """An item with a timestamp: an un-keyed window's result (``timestamp`` = the window's end)."""

    timestamp: int
    item: Any
    is_early = False  # a final result (an early one, pipeline.window_aggregate.EarlyTimestampedItem, says True)

    def __str__(self) -> str:
        return f"TimestampedItem{{ts={format_time(self.timestamp)}, item={self.item}}}"


class SimpleEvent(NamedTuple):
    """An event of ``TestSources.item_stream``: its timestamp (epoch ms) and sequence number."""

    timestamp: int
    sequence: int

    def __str__(self) -> str:
        return f"SimpleEvent(timestamp={format_time(self.timestamp)}, sequence={self.sequence})"


class JetEvent:
    """Internal wrapper of an item of a stream stage with timestamps: ``(timestamp, item)``."""

    __slots__ = ("timestamp", "item")

    def __init__(self, timestamp: int, item: Any):
        self.timestamp = timestamp
        self.item = item

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, JetEvent) and self.timestamp == other.timestamp
                and self.item == other.item)

    def __hash__(self) -> int:
        return hash((self.timestamp, self.item))

    def __reduce__(self) -> tuple:
        return JetEvent, (self.timestamp, self.item)

    def __repr__(self) -> str:
        return f"JetEvent(timestamp={self.timestamp}, item={self.item!r})"

    def __str__(self) -> str:
        return f"{self.item} (eventTime={format_time(self.timestamp)})"
