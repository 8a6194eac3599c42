"""``Watermark``: a timestamp item telling downstream that no older event will follow (Jet's ``Watermark``).

jetspark runs batch jobs, so the driver never produces watermarks itself; processors may still forward them
(``try_process_watermark``) and ``verify_processor`` feeds them when they appear in a test's input.
"""

from __future__ import annotations

__all__ = ["Watermark"]


class Watermark:
    """An event-time watermark; equal when the timestamps are equal.

    >>> Watermark(10) == Watermark(10), Watermark(10).timestamp
    (True, 10)
    """

    __slots__ = ("_timestamp",)

    def __init__(self, timestamp: int):
        if not isinstance(timestamp, int) or isinstance(timestamp, bool):
            raise TypeError(f"Watermark timestamp must be an int, got {type(timestamp).__name__} {timestamp!r}")
        self._timestamp = timestamp

    @property
    def timestamp(self) -> int:
        """The watermark's timestamp."""
        return self._timestamp

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Watermark) and other._timestamp == self._timestamp

    def __hash__(self) -> int:
        return hash(("Watermark", self._timestamp))

    def __repr__(self) -> str:
        return f"Watermark({self._timestamp})"

    def __reduce__(self):
        return (Watermark, (self._timestamp,))
