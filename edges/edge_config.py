"""Per-edge configuration.

>>> EdgeConfig(queue_size=128).queue_size
128
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_QUEUE_SIZE", "EdgeConfig"]

DEFAULT_QUEUE_SIZE = 1024
"""Capacity of an outbox bucket when an edge has no :class:`EdgeConfig` (Jet's ``EdgeConfig.DEFAULT_QUEUE_SIZE``)."""


class EdgeConfig(BaseModel):
    """Settings of one edge, set with ``edge.set_config(EdgeConfig(...))``. Frozen; unknown fields are rejected.

    >>> EdgeConfig().queue_size
    1024
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    queue_size: int = Field(
        default=DEFAULT_QUEUE_SIZE,
        gt=0,
        strict=True,
        description="Capacity (items) of each outbox bucket feeding this edge; a positive number.",
    )
