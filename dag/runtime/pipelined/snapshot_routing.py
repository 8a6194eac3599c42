"""Restore routing: which processor of a vertex gets each saved snapshot entry when a job (re)starts.

The rules (api-contract "Running unbounded jobs", Jet's ``rewriteDagWithSnapshotRestore``):

- an entry whose key is a :class:`~processors.api.snapshot_keys.BroadcastKey` goes to **every** processor;
- any other entry goes to exactly one processor: the owner of its key's partition, computed like the vertex's
  partitioned inbound edge computes it for items (that edge's partitioner over ``partition_count``, applied to
  the key's partition key, see :func:`~processors.api.snapshot_keys.partition_key_of`); the partition ``p`` belongs
  to processor ``p mod total_parallelism`` (the rule of a distributed partitioned edge, so one processor in
  the whole job owns a key). Without a partitioned inbound edge the default partitioner decides. An
  all-to-one inbound edge sends every keyed entry to the one processor that edge feeds.

The saved entries of all processors of the previous run are routed together, so the new run may have another
parallelism or member count.

>>> from dag import DAG
>>> from processors import noop_p, broadcast_key
>>> d = DAG(); a = d.new_vertex("a", noop_p()); b = d.new_vertex("b", noop_p())
>>> _ = d.edge(__import__("edges").between(a, b).partitioned(lambda x: x))
>>> routed = route_restored_entries(d, "b", [(broadcast_key("wm"), 5), ("k", 1)], total_parallelism=2,
...                                 partition_count=271)
>>> sorted(len(p) for p in routed)  # the broadcast entry in both, the keyed one in one
[1, 2]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from edges.partitioner import Partitioner
from edges.routing import RoutingPolicy
from processors.api.snapshot_keys import BroadcastKey, partition_key_of

__all__ = ["RestoreRouter", "restore_router", "route_restored_entries"]


class RestoreRouter:
    """Routes saved entries of one vertex to its processors (see the module docstring).

    ``partitioner``: the one of the vertex's partitioned inbound edge (default partitioner when none);
    ``fixed_partition``: set when that edge is all-to-one (every keyed entry goes to its owner).
    """

    __slots__ = ("partitioner", "fixed_partition", "partition_count")

    def __init__(self, partitioner: Any, partition_count: int, fixed_partition: int | None = None):
        self.partitioner = partitioner
        self.partition_count = partition_count
        self.fixed_partition = fixed_partition

    def target(self, key: Any, total_parallelism: int) -> int | None:
        """The global index of the processor that gets ``key``'s entry, or ``None`` for every processor."""
        if isinstance(key, BroadcastKey):
            return None
        if self.fixed_partition is not None:
            return self.fixed_partition % total_parallelism
        partition = self.partitioner.get_partition(partition_key_of(key), self.partition_count)
        return partition % total_parallelism

    def route(self, entries: Iterable[tuple], total_parallelism: int) -> list[list[tuple]]:
        """``entries`` split into one list per processor (global index order)."""
        routed: list[list[tuple]] = [[] for _ in range(total_parallelism)]
        for entry in entries:
            target = self.target(entry[0], total_parallelism)
            if target is None:
                for processor_entries in routed:
                    processor_entries.append(entry)
            else:
                routed[target].append(entry)
        return routed


def restore_router(dag: Any, vertex: str, partition_count: int) -> RestoreRouter:
    """The router of ``vertex``: from its partitioned inbound edge of the lowest ordinal, if any."""
    partitioned = [e for e in dag.get_inbound_edges(vertex) if e.routing_policy is RoutingPolicy.PARTITIONED]
    if not partitioned:
        return RestoreRouter(Partitioner.default(), partition_count)
    edge = min(partitioned, key=lambda e: e.dest_ordinal)
    if edge.is_all_to_one:
        return RestoreRouter(Partitioner.default(), partition_count, edge.partition_of(None, partition_count))
    return RestoreRouter(edge.partitioner or Partitioner.default(), partition_count)


def route_restored_entries(dag: Any, vertex: str, entries: Iterable[tuple], *, total_parallelism: int,
                           partition_count: int) -> list[list[tuple]]:
    """Split the saved ``entries`` of ``vertex`` over its ``total_parallelism`` processors (global index order).

    See the module docstring for the rules and an example.
    """
    return restore_router(dag, vertex, partition_count).route(entries, total_parallelism)
