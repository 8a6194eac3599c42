"""Senders: the sending side of an edge inside a Spark task (pure Python, runs on the workers).

A sender turns the batches a processor emitted to one outbound ordinal into the records of the edge's RDD:

- ``(dest_ordinal, batch)`` for edges Spark moves without our key (narrow, coalesce);
- ``(target_processor, (dest_ordinal, batch))`` for keyed edges, which the runtime ``partitionBy``-s with the
  identity partitioner, so record key t lands in partition t (processor t of the destination);
- ``(member, batch)`` for broadcast edges (collected on the driver).

Items travel in lists: Spark pays per record, so batching keeps its per-item overhead low. Routes follow
``dag.planner.physical_plan.Route``, implemented once by :class:`Router` (shared with the pipelined runtime, which sends
each routed list to the target processor's queue); round-robin spreads a batch over the candidates with slices
(``batch[i::n]``).
Pre-aggregating senders (``PreAggregation``) keep one accumulator per key for the whole partition and emit
``(key, acc)`` entries at the end.

Watermarks (``processors/execution/staged_watermarks.py``): a ``Watermark`` batch of the sender becomes a
``SenderWatermark(g, ts)`` record for every candidate processor of the edge (one record on a narrow or coalesce
edge, whose records have no target), and a sender that sent any, or nothing at all, ends with
``SenderWatermark(g, DONE)`` the same way (so that a processor without input, say on a member without data,
does not hold its receivers' watermarks back, as its end of stream would not in a pipelined job; a sender of
items only is waited for until the edge ends). A pre-aggregating sender emits its entries only at the end, so
it drops watermarks.
"""

from __future__ import annotations

from collections import _count_elements  # type: ignore[attr-defined]  # C helper behind Counter.update
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from jetspark_base.errors import DagValidationError
from dag.planner.physical_plan import EdgeOp, EdgePlan, Route
from edges.partitioner import DefaultPartitioner, HashCodePartitioner, Partitioner
from processors.api.functions import c_level
from processors.execution.staged_watermarks import DONE, SenderWatermark
from processors.api.watermark import Watermark

__all__ = ["SenderSpec", "sender_spec", "send", "accumulated_records", "Router", "candidates", "senders_of"]


@dataclass
class SenderSpec:
    """What a task needs to send on one edge (picklable; built on the driver from an ``EdgePlan``)."""

    op: EdgeOp
    route: Route | None
    dest_ordinal: int
    ls: int                   # local parallelism of the sending vertex (the task's vertex)
    ld: int                   # local parallelism of the destination
    members: int
    partition_count: int
    queue_size: int
    key_fn: Any = None
    partitioner: Any = None
    fixed_partition: int | None = None   # all_to_one
    member: int | None = None            # distribute_to(k)
    pre_mode: str | None = None          # "accumulate" | "combine"
    operation: Any = None
    absorbed_vertex: str | None = None
    edge_name: str = ""                  # str(edge), for messages
    route_key_fn: Any = None             # co-partitioned: an accumulator's key -> the key it is partitioned by
    route_edge_name: str = ""            # the edge whose key function that is, for messages


_MISSING = object()


def null_key_error(edge_name: str, item: Any = _MISSING) -> DagValidationError:
    """Jet's "Null key from key extractor" for a partitioned edge whose key function returned ``None``."""
    which = "" if item is _MISSING else f" for item {item!r:.100}"
    return DagValidationError(
        f"Null key from key extractor, edge: {edge_name}; the key function returned None{which}. Return a key "
        "for every item (filter such items out upstream, or map a missing key to a value)"
    )


def sender_spec(ep: EdgePlan, members: int, partition_count: int) -> SenderSpec:
    """The :class:`SenderSpec` of a planned edge."""
    edge = ep.edge
    spec = SenderSpec(
        op=ep.op, route=ep.route, dest_ordinal=ep.dest_ordinal, ls=max(1, ep.source_parallelism // members),
        ld=max(1, ep.dest_parallelism // members), members=members, partition_count=partition_count,
        queue_size=ep.queue_size, member=ep.member, edge_name=str(edge),
    )
    if ep.route in (Route.PARTITIONED_LOCAL, Route.PARTITIONED_ALL, Route.PARTITIONED_MEMBER):
        if edge.is_all_to_one:
            spec.fixed_partition = edge.partition_of(None, partition_count)
        else:
            spec.key_fn = edge.key_fn
            spec.partitioner = edge.partitioner or Partitioner.default()
    pre = ep.pre_aggregation
    if pre is not None:
        spec.pre_mode, spec.operation, spec.absorbed_vertex = pre.mode, pre.operation, pre.absorbed_vertex
        spec.key_fn = pre.key_fn
        if pre.route_key_fn is not None:
            spec.route_key_fn, spec.route_edge_name = pre.route_key_fn, pre.route_edge
            spec.partitioner = pre.route_partitioner
    return spec


def send(spec: SenderSpec, g: int, batches: Iterable[list], counts: dict | None = None) -> Iterator[Any]:
    """The records for the edge's RDD from processor ``g``'s ``batches`` (see the module docstring).

    ``counts`` (absorbed accumulate vertex only) receives ``"received"``/``"emitted"`` item counts.
    """
    if spec.pre_mode is not None:
        return _pre_aggregated(spec, g, (b for b in batches if b.__class__ is not Watermark), counts)
    if spec.op is EdgeOp.BROADCAST:
        member = g // spec.ls if spec.route is Route.BROADCAST_MEMBER else 0
        return _unrouted(g, member, batches)
    if spec.op in (EdgeOp.NARROW, EdgeOp.COALESCE):
        return _unrouted(g, spec.dest_ordinal, batches)
    return _routed(spec, g, batches)


def _unrouted(g: int, key: int, batches: Iterable[Any]) -> Iterator[tuple[int, Any]]:
    """``(key, batch)`` records of an edge Spark moves without a target (narrow, coalesce, broadcast)."""
    marked, sent = False, False
    for batch in batches:
        if batch.__class__ is Watermark:
            batch, marked = SenderWatermark(g, batch.timestamp), True
        sent = True
        yield key, batch
    if marked or not sent:
        yield key, SenderWatermark(g, DONE)


def _routed(spec: SenderSpec, g: int, batches: Iterable[Any]) -> Iterator[tuple[int, tuple[int, Any]]]:
    """``(target, (dest_ordinal, items))`` records of a keyed edge; marks go to every candidate."""
    o = spec.dest_ordinal
    router = Router(spec, g)
    route = router.route
    marked, sent = False, False
    for batch in batches:
        sent = True
        if batch.__class__ is Watermark:
            mark = SenderWatermark(g, batch.timestamp)
            marked = True
            for t in router.candidates:
                yield t, (o, mark)
        else:
            for t, items in route(batch):
                yield t, (o, items)
    if marked or not sent:
        done = SenderWatermark(g, DONE)
        for t in router.candidates:
            yield t, (o, done)


def senders_of(spec: SenderSpec, source_parallelism: int) -> list[list[int]]:
    """For each destination processor, the sender indices whose marks reach it on the edge (the inverse of
    :func:`candidates`); not for a coalesce edge, whose grouping Spark decides."""
    receivers: list[list[int]] = [[] for _ in range(spec.ld * spec.members)]
    for s in range(source_parallelism):
        for t in candidates(spec, s):
            receivers[t].append(s)
    return receivers


def candidates(spec: SenderSpec, g: int) -> list[int]:
    """Every destination processor sender ``g`` may send to on the edge (in a pipelined job each of them gets
    the sender's watermarks and its end-of-stream mark, and has one input queue for the sender)."""
    ls, ld = spec.ls, spec.ld
    m, p = divmod(g, ls)
    route = spec.route
    if route is Route.SAME:
        return [g]
    if route in (Route.UNICAST_ALL, Route.FANOUT, Route.BROADCAST_ALL):
        return list(range(ld * spec.members))
    if route in (Route.UNICAST_MEMBER, Route.BROADCAST_MEMBER):
        return list(range(m * ld, m * ld + ld))
    if route is Route.ISOLATED:
        return [m * ld + i for i in range(ld) if i % ls == p % ld]  # Jet's isolated rule
    base, mod = _target_base(spec, g)
    if spec.fixed_partition is not None:
        return [base + spec.fixed_partition % mod]
    return list(range(base, base + mod))


class Router:
    """Where sender ``g``'s items go on one edge: ``route(batch) -> [(target processor, items)]``.

    Stateful (round-robin position; a partitioned edge's key cache), so a pipelined sender keeps one per edge;
    ``candidates`` lists every possible target. Unicast deals the items over the candidates one by one, as Jet
    does, senders starting at different candidates (their index) so that a few small senders do not all feed
    the first one; fanout sends a copy to every member, round-robin within it; broadcast a copy to every
    candidate.

    >>> spec = SenderSpec(EdgeOp.PARTITION_BY, Route.UNICAST_ALL, 0, ls=1, ld=2, members=1, partition_count=271,
    ...                   queue_size=1024)
    >>> Router(spec, 0).route([1, 2, 3])
    [(0, [1, 3]), (1, [2])]
    """

    __slots__ = ("spec", "g", "candidates", "turn", "route", "_appends", "_buckets", "_key_fn", "_misses", "_bypass",
                 "_next_bypass")

    def __init__(self, spec: SenderSpec, g: int):
        self.spec, self.g = spec, g
        self.candidates = candidates(spec, g)
        route = spec.route
        self.turn = 0 if route is Route.FANOUT else g
        if route is Route.SAME or (len(self.candidates) == 1 and route is not Route.FANOUT and spec.key_fn is None):
            only = self.candidates[0]
            self.route = lambda batch: [(only, batch)]
        elif len(self.candidates) == 1 and spec.key_fn is not None:
            self.route = self._checked_single
        elif route in (Route.BROADCAST_ALL, Route.BROADCAST_MEMBER):
            every = self.candidates
            self.route = lambda batch: [(t, batch) for t in every]
        elif route is Route.FANOUT:
            self.route = self._fanout
        elif route in (Route.UNICAST_MEMBER, Route.UNICAST_ALL, Route.ISOLATED):
            self.route = self._round_robin
        elif type(spec.partitioner) in _BUILT_IN_PARTITIONERS:
            self._key_fn = c_level(spec.key_fn)
            self._buckets = {t: [] for t in self.candidates}
            self._appends: dict = {}  # key -> its target's bucket.append (see _partitioned_cached)
            self._misses = self._bypass = 0
            self._next_bypass = BYPASS_BATCHES
            self.route = self._partitioned_cached
        else:
            self.route = self._partitioned

    def _round_robin(self, batch: list) -> list[tuple[int, list]]:
        cands, turn = self.candidates, self.turn
        n = len(cands)
        self.turn = turn + len(batch)
        return [(cands[(turn + i) % n], batch[i::n]) for i in range(min(n, len(batch)))]

    def _fanout(self, batch: list) -> list[tuple[int, list]]:
        spec, turn = self.spec, self.turn
        self.turn = turn + 1
        return [(k * spec.ld + turn % spec.ld, batch) for k in range(spec.members)]

    def _checked_single(self, batch: list) -> list[tuple[int, list]]:
        """One target: the keys only need checking, as Jet extracts them on every partitioned edge."""
        key_fn = c_level(self.spec.key_fn)
        if None in map(key_fn, batch):
            raise null_key_error(self.spec.edge_name, next(x for x in batch if key_fn(x) is None))
        return [(self.candidates[0], batch)]

    def _partitioned(self, batch: list, keys: list | None = None) -> list[tuple[int, list]]:
        spec = self.spec
        base, mod = _target_base(spec, self.g)
        get_partition, pc = spec.partitioner.get_partition, spec.partition_count
        if keys is None:
            keys = list(map(c_level(spec.key_fn), batch))
        targets = []
        for key, item in zip(keys, batch):
            if key is None:
                raise null_key_error(spec.edge_name, item)
            targets.append(base + get_partition(key, pc) % mod)
        return _grouped(targets, batch)

    def _partitioned_cached(self, batch: list) -> list[tuple[int, list]]:
        """``_partitioned`` for the built-in partitioners: each key's target is computed once and kept (up to
        :data:`KEY_CACHE` keys) as its bucket's ``append``, so a known key costs one dict lookup instead of
        encoding and hashing it. Only batches whose keys are all of :data:`_CACHED_TYPES` use the cache: equal
        values of those types share the partitioner's encoding and hash (``1``, ``1.0``, ``True``), so the
        cached target is the one the partitioner gives; any other batch (a ``None`` key, a tuple, an object of
        another type that may equal a cached key) takes the general path. The buckets live as long as the
        router (their ``append`` methods are cached): each routed list is a copy."""
        keys = list(map(self._key_fn, batch))
        if not set(map(type, keys)) <= _CACHED_TYPES:  # also a None key
            return self._partitioned(batch, keys)
        if self._bypass:
            self._bypass -= 1
            return self._partitioned_uncached(batch, keys)
        appends = self._appends
        try:
            for key, item in zip(keys, batch):
                appends[key](item)
        except KeyError:  # a key not seen yet: learn the batch's new keys, then route it through the cache
            for bucket in self._buckets.values():
                bucket.clear()
            new = [key for key in dict.fromkeys(keys) if key not in appends]
            if 2 * len(new) <= len(keys):
                self._misses, self._next_bypass = 0, BYPASS_BATCHES
            else:  # mostly unseen keys: after MISSES_BEFORE_BYPASS such batches in a row, stop caching for a while
                self._misses += 1
                if self._misses >= MISSES_BEFORE_BYPASS:
                    self._misses, self._bypass = 0, self._next_bypass
                    self._next_bypass = min(2 * self._next_bypass, MAX_BYPASS_BATCHES)
            if len(appends) + len(new) > KEY_CACHE:
                appends.clear()
                new = list(dict.fromkeys(keys))
            self._learn(new)
            for key, item in zip(keys, batch):
                appends[key](item)
        else:  # every key known: the cache serves
            self._next_bypass = BYPASS_BATCHES
        out = []
        for t, bucket in self._buckets.items():
            if bucket:
                out.append((t, bucket[:]))
                bucket.clear()
        return out

    def _learn(self, new: list) -> None:
        """Cache the targets of the distinct keys ``new`` (of :data:`_CACHED_TYPES`), partitioned in one call."""
        spec, appends, buckets = self.spec, self._appends, self._buckets
        base, mod = _target_base(spec, self.g)
        for key, p in zip(new, spec.partitioner.get_partitions(new, spec.partition_count)):
            appends[key] = buckets[base + p % mod].append

    def _partitioned_uncached(self, batch: list, keys: list) -> list[tuple[int, list]]:
        """A batch routed while the cache is bypassed: its keys (of :data:`_CACHED_TYPES`) partitioned in one call
        and not cached."""
        spec = self.spec
        base, mod = _target_base(spec, self.g)
        return _grouped([base + p % mod for p in spec.partitioner.get_partitions(keys, spec.partition_count)], batch)


KEY_CACHE = 1 << 16
"""Keys whose targets a partitioned :class:`Router` keeps; when a batch finds more, the cache starts again."""
MISSES_BEFORE_BYPASS = 4
"""Batches in a row of mostly unseen keys after which a partitioned :class:`Router` stops caching keys."""
BYPASS_BATCHES = 16
"""Batches a partitioned :class:`Router` then routes without its cache (keys partitioned in one call per batch)
before it tries caching again (so keys that do repeat are still learned): a stream keyed by ids or timestamps would
otherwise cache every key once for nothing (``bench/bench_router.py``: 1.1 us per item against 0.56 us). Each try
that finds unseen keys again doubles the next wait, up to :data:`MAX_BYPASS_BATCHES`; a batch of mostly known keys
resets it."""
MAX_BYPASS_BATCHES = 1 << 12
"""The longest wait, in batches, of a partitioned :class:`Router` before it tries caching again. With a fixed wait
of :data:`BYPASS_BATCHES`, a stream of never-repeating keys had a fifth of its keys cached: each learned key's
bound method kept for nothing, the garbage collector's only work in the task (collections of 2-10 ms), and the full
cache's ``clear()`` every second or so (about 5 ms). At 480,000 items/s the p99 per hop was 5.2-8.5 ms in four
runs, and 1.0-1.9 ms in four runs with the doubling wait, in which the collector never ran (bench/README, session
14, "The router's key cache fed the garbage collector")."""
_CACHED_TYPES = frozenset({str, int, float, bool, bytes})
_BUILT_IN_PARTITIONERS = (DefaultPartitioner, HashCodePartitioner)
"""The partitioners whose keys a sender partitions in bulk (``get_partitions``) and a router may cache. Compared by
exact type: a subclass may override ``get_partition`` alone, or tell equal keys apart."""


def _grouped(targets: list[int], batch: list) -> list[tuple[int, list]]:
    """``(target, items)`` pairs: the items of ``batch`` grouped by their ``targets``, in order."""
    buckets: dict[int, list] = {}
    for t, item in zip(targets, batch):
        bucket = buckets.get(t)
        if bucket is None:
            buckets[t] = [item]
        else:
            bucket.append(item)
    return list(buckets.items())


def _target_base(spec: SenderSpec, g: int) -> tuple[int, int]:
    """``(base, modulus)``: partition p goes to processor ``base + p % modulus``."""
    if spec.route is Route.PARTITIONED_ALL:
        return 0, spec.ld * spec.members
    if spec.route is Route.PARTITIONED_MEMBER:
        return spec.member * spec.ld, spec.ld  # type: ignore[operator]
    return (g // spec.ls) * spec.ld, spec.ld


def _accumulate_into(acc: dict, spec: SenderSpec, batches: Iterable[list], counts: dict | None) -> None:
    op, key_fn = spec.operation, spec.key_fn
    received = 0
    fast = op.fast_path
    if spec.pre_mode == "accumulate" and fast == ("counting",):
        from processors.api.functions import whole_item

        for batch in batches:
            received += len(batch)
            _count_elements(acc, batch if key_fn is whole_item else map(key_fn, batch))
    elif spec.pre_mode == "accumulate":
        create, accumulate = op.create_fn, op.accumulate_fns[0]
        for batch in batches:
            received += len(batch)
            for item in batch:
                k = key_fn(item)
                a = acc.get(k, _MISSING)
                acc[k] = accumulate(create() if a is _MISSING else a, item)
    else:
        combine = op.combine_fn
        for batch in batches:
            received += len(batch)
            try:
                for k, a in batch:
                    cur = acc.get(k, _MISSING)
                    acc[k] = a if cur is _MISSING else combine(cur, a)
            except (TypeError, ValueError) as exc:
                bad = next((e for e in batch if not (isinstance(e, tuple) and len(e) == 2)), None)
                if bad is None:
                    raise
                raise DagValidationError(
                    f"the edge into combine_by_key_p carries {bad!r:.100}, not a (key, accumulator) entry; "
                    "emit entries with processors.entry(key, acc) upstream"
                ) from exc
    if counts is not None:
        counts["received"] = received


def _pre_aggregated(spec: SenderSpec, g: int, batches: Iterable[list], counts: dict | None) -> Iterator[Any]:
    acc: dict = {}
    _accumulate_into(acc, spec, batches, counts)
    if counts is not None:
        counts["emitted"] = len(acc)
    return accumulated_records(spec, g, acc)


def accumulated_records(spec: SenderSpec, g: int, acc: dict) -> Iterator[Any]:
    """The records of a pre-aggregating sender whose per-key accumulators are ``acc``: ``(key, acc)`` entries
    grouped by target processor, in lists of at most the edge's queue size."""
    o, size = spec.dest_ordinal, spec.queue_size
    base, mod = _target_base(spec, g)
    partitioner, pc = spec.partitioner, spec.partition_count
    buckets: dict[int, list] = {}
    if None in acc:
        raise null_key_error(spec.edge_name)
    keys: Iterable[Any] = acc
    if spec.route_key_fn is not None:  # co-partitioned: routed as the next edge routes the key's entry
        keys = list(map(spec.route_key_fn, acc))
        if None in keys:
            raise null_key_error(spec.route_edge_name)
    if type(partitioner) in _BUILT_IN_PARTITIONERS:  # one loop over all keys
        partitions: Iterable[int] = partitioner.get_partitions(keys, pc)
    else:
        partitions = map(partitioner.get_partition, keys, repeat(pc))
    for p, entry in zip(partitions, acc.items()):
        t = base + p % mod
        bucket = buckets.get(t)
        if bucket is None:
            buckets[t] = bucket = []
        bucket.append(entry)
        if len(bucket) >= size:
            yield t, (o, bucket)
            buckets[t] = []
    for t, bucket in buckets.items():
        if bucket:
            yield t, (o, bucket)
