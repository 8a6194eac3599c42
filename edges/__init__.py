"""jetspark edges: how data flows between two vertices (routing, locality, priority, ordinals).

>>> from edges import between, from_
>>> # between(a, b).partitioned(lambda w: w).distributed()
>>> # from_(a, 1).to(b, 0).broadcast().priority(-1)

Engine-free: nothing here imports pyspark.
"""

from __future__ import annotations

from edges.edge_config import EdgeConfig
from edges.edge import DISTRIBUTE_TO_ALL, Edge, between, from_
from edges.partitioner import DefaultPartitioner, Partitioner, stable_hash
from edges.routing import RoutingPolicy

__all__ = [
    "DISTRIBUTE_TO_ALL",
    "DefaultPartitioner",
    "Edge",
    "EdgeConfig",
    "Partitioner",
    "RoutingPolicy",
    "between",
    "from_",
    "stable_hash",
]
