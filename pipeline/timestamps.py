"""Sinks after stages with timestamps: sinks see plain items, never the internal ``JetEvent`` wrapper."""

from __future__ import annotations

from typing import Any

__all__ = ["unwrapping_sink"]


def unwrapping_sink(transform: Any, planner: Any, upstream: Any) -> None:
    raise NotImplementedError(f"sink '{transform.name}' after a stage with timestamps is not available yet")
