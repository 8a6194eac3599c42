"""Routing policies: how an edge spreads items over the processors of its destination vertex.

The five policies are Jet's, in Jet's order. The "candidates" of an edge are the destination's processors on the
same member for a local edge, and all its processors on every member for a distributed edge.

==============  =====================================================================================
``UNICAST``     each item goes to exactly one candidate, any one (the default)
``ISOLATED``    upstream processor ``p`` feeds only its own slice of the downstream processors
                (``i % LPu == p % LPd``); local edges only
``PARTITIONED`` items whose keys fall in the same partition go to the same processor; ``all_to_one``
                is a partitioned edge whose partition is fixed
``BROADCAST``   each item goes to every candidate
``FANOUT``      each item goes to every member, and to one processor on each; on a local edge the
                same as ``UNICAST``
==============  =====================================================================================

>>> RoutingPolicy.PARTITIONED.value
'partitioned'
"""

from __future__ import annotations

from enum import Enum

__all__ = ["RoutingPolicy"]


class RoutingPolicy(Enum):
    """How an edge routes items to the destination's processors; the value is the lower-case name."""

    UNICAST = "unicast"
    ISOLATED = "isolated"
    PARTITIONED = "partitioned"
    BROADCAST = "broadcast"
    FANOUT = "fanout"
