"""``ProcessingGuarantee``: Jet's processing guarantees, shared by processors (``Context``) and the engine.

Its public home is :mod:`dag` (``from dag import ProcessingGuarantee``); it lives in the base package because
processors read it without depending on the engine.

>>> ProcessingGuarantee("EXACTLY_ONCE") is ProcessingGuarantee.EXACTLY_ONCE
True
"""

from __future__ import annotations

from enum import Enum

__all__ = ["ProcessingGuarantee"]


class ProcessingGuarantee(str, Enum):
    """Jet's processing guarantees. Batch jobs on Spark always behave as ``NONE`` (nothing is snapshotted);
    the value is passed on to processors through ``Context.processing_guarantee``."""

    NONE = "NONE"
    AT_LEAST_ONCE = "AT_LEAST_ONCE"
    EXACTLY_ONCE = "EXACTLY_ONCE"
