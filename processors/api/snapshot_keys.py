"""Snapshot keys that steer where a saved entry goes on restore (Jet's ``BroadcastKey`` and ``SnapshotKey``).

On restore the engine routes every saved ``(key, value)`` entry of a vertex to its processors
(``dag/runtime/pipelined/snapshot_routing.py``):

- a :class:`BroadcastKey` entry goes to **every** processor (values each processor needs and merges itself,
  e.g. a watermark position, or every source state a builder source's ``restore_snapshot_fn`` receives);
- any other key goes to the one processor that now owns it: the key's *partition key* (see
  :func:`partition_key_of`; a :class:`SnapshotKey` gives its grouping key, any other object is its own
  partition key) through the partitioner of the vertex's partitioned inbound edge, so the processor that will
  receive that key's items also gets its state, whatever the parallelism or member count of the new run.

>>> broadcast_key("wm") == broadcast_key("wm"), broadcast_key("wm").key
(True, 'wm')
>>> partition_key_of(SnapshotKey(1000, "user-7")), partition_key_of("user-7")
('user-7', 'user-7')
"""

from __future__ import annotations

from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = ["BroadcastKey", "broadcast_key", "SnapshotKey", "partition_key_of"]


class BroadcastKey:
    """A snapshot key whose entry is restored to **every** processor of the vertex (Jet's ``BroadcastKey``);
    equal by the wrapped key.

    >>> broadcast_key("wm") == broadcast_key("wm"), broadcast_key("wm").key
    (True, 'wm')
    """

    __slots__ = ("_key",)

    def __init__(self, key: Any):
        if key is None:
            raise DagValidationError("broadcast_key(key): key must not be None")
        self._key = key

    @property
    def key(self) -> Any:
        """The wrapped key."""
        return self._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BroadcastKey) and other._key == self._key

    def __hash__(self) -> int:
        return hash(("BroadcastKey", self._key))

    def __repr__(self) -> str:
        return f"BroadcastKey{{key={self._key!r}}}"

    def __reduce__(self):
        return (BroadcastKey, (self._key,))


def broadcast_key(key: Any) -> BroadcastKey:
    """Wrap ``key`` so that its snapshot entry goes to every processor on restore."""
    return BroadcastKey(key)


class SnapshotKey:
    """A keyed snapshot key that carries a timestamp (Jet's ``SnapshotKey``: a window frame of one grouping key).

    Equal by ``(timestamp, key)``; on restore it routes by ``key`` alone (its partition key), so every frame of a
    grouping key reaches the processor that owns that key.

    >>> SnapshotKey(10, "a") == SnapshotKey(10, "a"), SnapshotKey(10, "a").partition_key()
    (True, 'a')
    """

    __slots__ = ("timestamp", "key")

    def __init__(self, timestamp: int, key: Any):
        self.timestamp = timestamp
        self.key = key

    def partition_key(self) -> Any:
        """The grouping key: what routes this entry on restore."""
        return self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SnapshotKey) and other.timestamp == self.timestamp and other.key == self.key

    def __hash__(self) -> int:
        return hash((self.timestamp, self.key))

    def __repr__(self) -> str:
        return f"SnapshotKey{{timestamp={self.timestamp!r}, key={self.key!r}}}"

    def __reduce__(self):
        return (SnapshotKey, (self.timestamp, self.key))


def partition_key_of(key: Any) -> Any:
    """What routes a keyed snapshot entry on restore: ``key.partition_key()`` when the key's class defines
    ``partition_key`` (Jet's ``PartitionAware``), else the key itself.

    >>> partition_key_of(("group", 1))
    ('group', 1)
    """
    method = getattr(type(key), "partition_key", None)
    return key if method is None else method(key)
