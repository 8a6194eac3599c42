"""Event-journal vocabulary: ``JournalInitialPosition``, ``EventType`` and ``EventJournalMapEvent`` (Jet's
``JournalInitialPosition``, ``EntryEventType`` and ``EventJournalMapEvent``).

Every driver-side map (``engine.get_map(name)``) records its puts, updates and removes in an *event journal*
(``dag.runtime.common.driver_collections``); ``stream_map_p`` reads it. One journal entry is an
:class:`EventJournalMapEvent`: ``key``, ``new_value`` (``None`` for a remove), ``old_value`` (``None`` for an
added key) and ``type``. Jet's default filter and projection of ``streamMapP`` are :func:`map_put_events`
(added and updated entries) and :func:`map_event_to_entry` (the entry ``(key, new_value)``).

>>> event = EventJournalMapEvent("k", 2, 1, EventType.UPDATED)
>>> map_put_events(event), map_event_to_entry(event)
(True, ('k', 2))
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["JournalInitialPosition", "EventType", "EventJournalMapEvent", "map_put_events", "map_event_to_entry"]


class JournalInitialPosition(str, enum.Enum):
    """Where a journal reader starts: the oldest event still in the journal, or the events that happen after
    the reader starts (Jet's ``JournalInitialPosition``)."""

    START_FROM_OLDEST = "START_FROM_OLDEST"
    START_FROM_CURRENT = "START_FROM_CURRENT"


class EventType(str, enum.Enum):
    """What happened to an entry (the journal's subset of Jet's ``EntryEventType``)."""

    ADDED = "ADDED"
    UPDATED = "UPDATED"
    REMOVED = "REMOVED"


class EventJournalMapEvent:
    """One change of a map: ``key``, ``new_value``, ``old_value``, ``type`` (an :class:`EventType`).

    Equal when all four are equal; picklable.

    >>> EventJournalMapEvent("a", 1, None, EventType.ADDED)
    EventJournalMapEvent(key='a', new_value=1, old_value=None, type=ADDED)
    """

    __slots__ = ("key", "new_value", "old_value", "type")

    def __init__(self, key: Any, new_value: Any, old_value: Any, type: EventType):  # noqa: A002 - Jet's name
        self.key = key
        self.new_value = new_value
        self.old_value = old_value
        self.type = type

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EventJournalMapEvent) and (
            (self.key, self.new_value, self.old_value, self.type)
            == (other.key, other.new_value, other.old_value, other.type)
        )

    def __hash__(self) -> int:
        return hash((self.key, self.type))

    def __reduce__(self):
        return (EventJournalMapEvent, (self.key, self.new_value, self.old_value, self.type))

    def __repr__(self) -> str:
        return (f"EventJournalMapEvent(key={self.key!r}, new_value={self.new_value!r}, "
                f"old_value={self.old_value!r}, type={self.type.value})")


def map_put_events(event: EventJournalMapEvent) -> bool:
    """Jet's ``mapPutEvents()``: True for added and updated entries."""
    return event.type is not EventType.REMOVED


def map_event_to_entry(event: EventJournalMapEvent) -> tuple:
    """Jet's ``mapEventToEntry()``: the entry ``(key, new_value)``."""
    return (event.key, event.new_value)
