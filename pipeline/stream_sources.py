"""Stream sources of the Pipeline API: builder stream sources and ``Sources.stream_from_processor``.

A :class:`~pipeline.connectors.StreamSource` holds ``supplier_fn(event_time)``: ``None`` for a source without
timestamps, else ``(timestamp_fn, allowed_lag)`` with ``timestamp_fn`` ``None`` for native timestamps.
"""

from __future__ import annotations

from typing import Any

from dag.errors import DagValidationError
from pipeline.connectors import StreamSource

__all__ = ["builder_stream_source", "processor_stream_source"]


class _Fixed:
    """``supplier_fn`` of a source that runs one supplier and supports no timestamps inside the source."""

    def __init__(self, name: str, supplier: Any):
        self.name = name
        self.supplier = supplier

    def __call__(self, event_time: Any) -> Any:
        if event_time is not None:
            raise DagValidationError(f"stage '{self.name}': timestamps inside this source are not available yet; "
                                     "use without_timestamps()")
        return self.supplier


def builder_stream_source(source: Any) -> StreamSource:
    """A ``SourceBuilder.stream``/``timestamped_stream`` product as a pipeline stream source."""
    return StreamSource(source.name, _Fixed(source.name, source),
                        native_timestamps=getattr(source, "kind", "") == "timestamped_stream")


def processor_stream_source(name: str, meta_supplier: Any) -> StreamSource:
    """``Sources.stream_from_processor(name, meta_supplier)``."""
    return StreamSource(name, _Fixed(name, meta_supplier))
