"""The stream-source stage: the handle ``read_from`` gives for a stream source, waiting for its timestamp choice.

``p.read_from(stream_source)`` gives a :class:`StreamSourceStage`; its only operations choose the timestamps
(as Jet 4.0): ``without_timestamps()``, ``with_native_timestamps(allowed_lag)`` (the source's own timestamps)
or ``with_timestamps(timestamp_fn, allowed_lag)``. Timestamps chosen here are applied in the source's
processors; the result is a :class:`~pipeline.stages.StreamStage`. Anything else raises an error that says
to choose first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.arg_checks import check_lag
from pipeline.descriptors import StreamSource
from pipeline.stages import StreamStage
from pipeline.timestamps import StreamSourceTransform, event_time_params
from pipeline.transform_graph import TransformGraph

__all__ = ["StreamSourceStage", "wall_clock_ms"]


class StreamSourceStage:
    """A stream source waiting for its timestamp choice."""

    def __init__(self, graph: TransformGraph, source: StreamSource):
        self._graph = graph
        self._source = source
        self.decided = False

    @property
    def name(self) -> str:
        """The stream source's name (its vertex name)."""
        return self._source.name

    def _decide(self, timestamp_fn: Callable[[Any], int] | None, allowed_lag: int | None) -> StreamStage:
        if self.decided:
            raise DagValidationError(f"stage '{self.name}': the timestamps of this stream source were already "
                                     "chosen; keep the stage that choice returned and attach to it")
        self.decided = True
        source = self._source
        params = None if allowed_lag is None else event_time_params(timestamp_fn, allowed_lag)
        in_source = params is not None and source.timestamped_fn is not None and (
            timestamp_fn is None or source.accepts_timestamp_fn)
        supplier = source.timestamped_fn(params) if in_source else source.supplier
        return StreamStage(StreamSourceTransform(self._graph, self.name, supplier, params, in_source))

    def without_timestamps(self) -> StreamStage:
        """A stream stage without timestamps (no windows downstream unless ``with_timestamps`` later)."""
        return self._decide(None, None)

    def with_native_timestamps(self, allowed_lag: int) -> StreamStage:
        """The source's own timestamps; watermarks trail the top timestamp by ``allowed_lag`` ms."""
        if not self._source.native_timestamps:
            raise DagValidationError(
                f"stage '{self.name}': this source has no native timestamps; use "
                "with_timestamps(timestamp_fn, allowed_lag) to take them from the items")
        return self._decide(None, check_lag(self.name, allowed_lag))

    def with_timestamps(self, timestamp_fn: Callable[[Any], int], allowed_lag: int) -> StreamStage:
        """Timestamps ``timestamp_fn(item)``, applied in the source's processors."""
        if not callable(timestamp_fn):
            raise TypeError(f"stage '{self.name}': with_timestamps(timestamp_fn, allowed_lag) needs a callable, "
                            f"got {timestamp_fn!r:.80}")
        return self._decide(timestamp_fn, check_lag(self.name, allowed_lag))

    add_timestamps = with_timestamps

    def with_ingestion_timestamps(self) -> StreamStage:
        """Timestamps from the wall clock when the source emits each item (Jet's ingestion time; watermarks
        with no lag). For a source that cannot stamp items itself, the clock is read in the
        ``-add-timestamps`` vertex right after it."""
        return self._decide(wall_clock_ms, 0)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(
            f"stage '{self.name}' reads a stream source and has no '{name}' yet: choose its timestamps first "
            f"with .with_timestamps(timestamp_fn, allowed_lag), .with_native_timestamps(allowed_lag), "
            f".with_ingestion_timestamps() or .without_timestamps(), then call .{name}(...) on the stage that "
            "returns")


def wall_clock_ms(_item: Any) -> int:
    """The timestamp function of ``with_ingestion_timestamps``: now, in epoch milliseconds."""
    return time.time_ns() // 1_000_000
