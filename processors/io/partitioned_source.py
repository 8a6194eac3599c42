"""What the partitioned stream sources share (``stream_kafka_p``, ``stream_map_p``): items stamped with event
time per partition, and the partitions' offsets saved in snapshots.

Such a source reads several partitions (Kafka's topic partitions, a map journal's partitions), each from its
own position, an *offset*; each processor reads a share of them and numbers its own ``0 .. n - 1`` (the
partition *index*). :class:`PartitionedStreamSource` is their base:

- **Items** (:meth:`~PartitionedStreamSource._add_item`): a record read is projected by the source; a ``None``
  projection is dropped. Without event-time params the item goes out as it is; with them it goes through the
  processor's :class:`~processors.windowing.event_time.EventTimeMapper` (``self._mapper``, one watermark
  policy per partition index) as an event of its partition, maybe after a watermark.
- **Snapshots** (``save_to_snapshot``): once everything read has gone out (the offsets must not run ahead of
  the items emitted), the processor saves the entries the source lists in :meth:`_snapshot_entries`, one per
  partition it reads, ``broadcast_key((tag, ..., partition)) -> (offset, watermark or None)``
  (:meth:`~PartitionedStreamSource._watermark`); a full snapshot bucket stops it and the next call resumes.
  Restoring stays with each source: what identifies a partition differs.
"""

from __future__ import annotations

from typing import Any

from processors.io.text_streams import PendingItemsSource

__all__ = ["PartitionedStreamSource"]


class PartitionedStreamSource(PendingItemsSource):
    """Base of a non-cooperative stream source of partitions with offsets (see the module docstring); the
    subclass sets ``self._mapper`` (an ``EventTimeMapper``) when it has event-time params."""

    def __init__(self) -> None:
        super().__init__()
        self._mapper: Any = None
        self._to_save: list | None = None

    def _add_item(self, out: list, item: Any, partition: int, timestamp: int | None = None) -> None:
        """Append what ``item`` (a projection, ``None`` to drop) of partition index ``partition`` emits to ``out``;
        ``timestamp``: its native timestamp (``None``: the params' ``timestamp_fn`` takes it from the item)."""
        if item is None:
            return
        if self._mapper is None:
            out.append(item)
        else:
            out += self._mapper.handle_event(item, partition, timestamp)

    def _watermark(self, partition: int) -> int | None:
        """The current watermark of partition index ``partition``, to save; ``None`` without event time."""
        return self._mapper.get_watermark(partition) if self._mapper is not None else None

    def _snapshot_entries(self) -> list[tuple[Any, Any]]:
        """The ``(key, (offset, watermark))`` entries to save, one per partition read (hook)."""
        raise NotImplementedError

    def save_to_snapshot(self) -> bool:
        """Save each partition's offset (and watermark) once the pending items went out; False: call again."""
        if not self._emit_pending():  # the offsets must not run ahead of what went out
            return False
        if self._to_save is None:
            self._to_save = self._snapshot_entries()
        while self._to_save:
            if not self._outbox.offer_to_snapshot(*self._to_save[-1]):
                return False
            self._to_save.pop()
        self._to_save = None
        return True
