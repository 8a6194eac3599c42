"""Windows: ``WindowDefinition`` (sliding, tumbling, session) and the windowed stages (Jet's
``WindowDefinition``, ``StageWithWindow``, ``StageWithKeyAndWindow``).

>>> WindowDefinition.sliding(60_000, 1_000)
WindowDefinition.sliding(60000, 1000)
>>> WindowDefinition.tumbling(1_000).slide_by
1000
"""

from __future__ import annotations

from typing import Any

__all__ = ["WindowDefinition", "StageWithWindow"]


def _positive(label: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"WindowDefinition: {label} must be an int > 0 (milliseconds), got {value!r}")
    return value


class WindowDefinition:
    """A window kind and its sizes: ``sliding(size, slide_by)``, ``tumbling(size)``, ``session(timeout)``."""

    __slots__ = ("kind", "window_size", "slide_by", "session_timeout")

    def __init__(self, kind: str, window_size: int | None = None, slide_by: int | None = None,
                 session_timeout: int | None = None):
        self.kind = kind
        self.window_size = window_size
        self.slide_by = slide_by
        self.session_timeout = session_timeout

    @staticmethod
    def sliding(window_size: int, slide_by: int) -> WindowDefinition:
        """Windows of ``window_size`` ms, one every ``slide_by`` ms (``window_size`` a multiple of it)."""
        size, slide = _positive("window_size", window_size), _positive("slide_by", slide_by)
        if size % slide:
            raise ValueError(f"WindowDefinition.sliding: window_size ({size}) must be a multiple of slide_by "
                             f"({slide})")
        return WindowDefinition("sliding", size, slide)

    @staticmethod
    def tumbling(window_size: int) -> WindowDefinition:
        """Adjacent windows of ``window_size`` ms (a sliding window that slides by its size)."""
        size = _positive("window_size", window_size)
        return WindowDefinition("tumbling", size, size)

    @staticmethod
    def session(session_timeout: int) -> WindowDefinition:
        """Bursts of events separated by at least ``session_timeout`` ms of quiet."""
        return WindowDefinition("session", session_timeout=_positive("session_timeout", session_timeout))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WindowDefinition) and all(
            getattr(self, s) == getattr(other, s) for s in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, s) for s in self.__slots__))

    def __repr__(self) -> str:
        if self.kind == "sliding":
            return f"WindowDefinition.sliding({self.window_size}, {self.slide_by})"
        if self.kind == "tumbling":
            return f"WindowDefinition.tumbling({self.window_size})"
        return f"WindowDefinition.session({self.session_timeout})"


class StageWithWindow:
    """A stream stage (keyed when ``key_fn`` is set) with a window definition."""

    def __init__(self, stage: Any, key_fn: Any, window_definition: WindowDefinition):
        if not isinstance(window_definition, WindowDefinition):
            raise TypeError(f"stage '{stage.name}': window(wdef) needs a WindowDefinition (WindowDefinition."
                            f"sliding/tumbling/session), got {window_definition!r:.80}")
        self._stage = stage
        self.key_fn = key_fn
        self.window_definition = window_definition
        raise NotImplementedError(
            f"stage '{stage.name}': windowed aggregation is not available yet in jetspark's pipeline API")
