"""Engine-free driving of one vertex's processors: run them, snapshot them, restore the saved entries into a new
set of processors (maybe another parallelism) with the engine's restore routing, and finish the run.

A minimal, blocking stand-in for the runtime's snapshot path (unbounded outboxes): ``start`` (processors of a
supplier), ``open_source`` (one processor of a source's meta-supplier), ``feed``, ``save``, ``restore``,
``complete``, ``emitted``, ``by_key``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dag.runtime.pipelined.snapshot_routing import RestoreRouter
from edges.partitioner import Partitioner
from processors import Context, Inbox, Outbox

BIG = 1 << 30


def start(supplier: Callable[[], Any], count: int, ordinals: int = 1) -> list[tuple[Any, Outbox]]:
    procs = []
    for g in range(count):
        p = supplier()
        outbox = Outbox([BIG] * ordinals, snapshot_capacity=BIG, owner=type(p).__name__)
        p.init(outbox, Context(global_processor_index=g, local_processor_index=g, total_parallelism=count,
                               local_parallelism=count))
        procs.append((p, outbox))
    return procs


def open_source(source: Any, global_index: int = 0, total: int = 1, members: int = 1) -> tuple[Any, Outbox]:
    """Processor ``global_index`` of ``total`` (over ``members`` members) of a source's meta-supplier, initialised
    with a small outbox: ``(processor, outbox)``."""
    local = total // members
    (proc,) = source.get(list(range(members)))(global_index // local).get(1)
    outbox = Outbox([1000], snapshot_capacity=10)
    proc.init(outbox, Context(vertex_name="source", global_processor_index=global_index,
                              local_processor_index=global_index % local, total_parallelism=total,
                              local_parallelism=local))
    return proc, outbox


def feed(procs, items: Sequence[Any], route: Callable[[Any, int], int], ordinal: int = 0) -> None:
    for index, (p, outbox) in enumerate(procs):
        inbox = Inbox(item for item in items if route(item, len(procs)) == index)
        while len(inbox):
            outbox.reset()
            p.process(ordinal, inbox)


def save(procs) -> list[tuple]:
    entries = []
    for p, outbox in procs:
        outbox.reset()
        while not p.save_to_snapshot():
            entries.extend(outbox.drain_snapshot())
            outbox.reset()
        entries.extend(outbox.drain_snapshot())
    return entries


def restore(supplier, entries: list[tuple], count: int, router: RestoreRouter | None = None, ordinals: int = 1):
    router = router or RestoreRouter(Partitioner.default(), 271)
    procs = start(supplier, count, ordinals)
    for (p, outbox), mine in zip(procs, router.route(entries, count)):
        inbox = Inbox(mine)
        while len(inbox):
            outbox.reset()
            p.restore_from_snapshot(inbox)
        outbox.reset()
        while not p.finish_snapshot_restore():
            outbox.reset()
    return procs


def complete(procs, ordinal: int = 0) -> list[Any]:
    out = []
    for p, outbox in procs:
        outbox.reset()
        while not p.complete():
            out.extend(outbox.drain(ordinal))
            outbox.reset()
        out.extend(outbox.drain(ordinal))
    return out


def emitted(procs, ordinal: int = 0) -> list[Any]:
    out = []
    for _p, outbox in procs:
        out.extend(outbox.drain(ordinal))
    return out


def by_key(key_fn: Callable[[Any], Any]) -> Callable[[Any, int], int]:
    return lambda item, n: Partitioner.default().get_partition(key_fn(item), 271) % n
