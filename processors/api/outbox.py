"""``Outbox``: where a processor puts its output, one bounded bucket per outbound edge (Jet's ``Outbox``).

Each bucket holds at most the edge's queue size; ``offer`` returns False when an item does not fit. The
refusal rules are Jet's and are enforced on every offer (a broken rule raises ``ProcessorContractError``
naming the processor, the method being called and the rule, and is kept as ``outbox.broken_rule``, which is
how ``verify_processor`` recognises it to report it as an ``AssertionError``):

1. After ``offer`` returned False the processor must return from its method; offering again before the
   driver calls ``reset()`` (which drivers do before every processor call) is an error.
2. The next offer after a refusal must be the same item (``is`` or ``==``) to the same ordinals. Offers to
   several ordinals make partial progress: buckets that accepted the item are remembered and a retry fills
   only the rest.
3. ``None`` is never an item; an ordinal must be ``-1`` (all buckets), ``0..bucket_count()-1`` or a list of those.
4. ``offer_to_snapshot`` needs a snapshot bucket (only present while snapshots are taken). An accepted entry
   is copied at once (pickled, as Jet serialises it), so the processor may keep mutating its state.

``block()`` makes the outbox refuse new items while still accepting a pending (previously refused) one, as
Jet's test outbox does. Internal, for the execution kernel (``processors/execution``): the tasklet takes the
buckets' items directly after each processor call (``_buckets``, ``reset()``) and the snapshot bucket's with
``drain_snapshot()``; ``drain(ordinal)`` (one bucket, for tests), ``block()``/``unblock()``, ``is_full(ordinal)``,
and the ``owner``/``call`` strings used in error messages.

>>> box = Outbox([1, 2])
>>> box.offer("a"), box.offer("b", 1), box.offer("c")
(True, True, False)
>>> box.drain(0), box.drain(1)
(['a'], ['a', 'b'])
>>> box.reset(); box.offer("c")
True
"""

from __future__ import annotations

import copy
import pickle
from typing import Any, Sequence

from jetspark_base.errors import DagValidationError, ProcessorContractError

__all__ = ["Outbox", "offer_each", "contains_none"]

_NO_ITEM = object()
_EMPTY: frozenset = frozenset()
_REFUSAL_FIX = (
    "After offer() returns False, return from the method at once and offer the same item to the same ordinals "
    "on the next call (AbstractProcessor.emit_from_traverser() and FlatMapper do this for you)."
)


def _copy_entry(key: Any, value: Any) -> tuple:
    """A snapshot entry is copied when accepted (Jet serialises it), so the processor may go on mutating its state."""
    try:
        return pickle.loads(pickle.dumps((key, value), pickle.HIGHEST_PROTOCOL))
    except Exception:  # not picklable (e.g. holds a lambda): a deep copy still isolates it
        return copy.deepcopy((key, value))


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # e.g. array-like items whose == is not a bool
        return False


def contains_none(items: Sequence[Any]) -> bool:
    """Whether ``items`` holds ``None``, in one C-level scan. Also True when an item's ``==`` gives no bool (numpy
    arrays): the caller then looks at the items one by one, by identity.

    >>> contains_none([1, None]), contains_none(("a", "b"))
    (True, False)
    """
    try:
        return None in items
    except Exception:  # noqa: BLE001 - an item's == raised: let the caller check by identity
        return True


def offer_each(offer: Any, items: Sequence[Any], start: int, ordinal: Any) -> int:
    """``offer_many`` done item by item with ``offer``: the index of the first item refused (or ``len(items)``).
    For outbox wrappers that must see every item."""
    for i in range(start, len(items)):
        if not offer(items[i], ordinal):
            return i
    return len(items)


class Outbox:
    """Bounded output buckets, one per outbound ordinal, plus an optional snapshot bucket.

    ``capacities[i]`` is the queue size of the edge at outbound ordinal ``i``; ``snapshot_capacity`` ``None``
    means there is no snapshot bucket. ``owner`` names the processor in error messages.
    """

    __slots__ = (
        "_buckets", "_capacities", "_all", "_snapshot", "_snapshot_capacity", "owner", "call",
        "_pending", "_pending_ordinals", "_accepted", "_refused", "_blocked",
        "_pending_snapshot", "_snapshot_refused", "broken_rule",
    )

    def __init__(self, capacities: Sequence[int], snapshot_capacity: int | None = None, owner: str = ""):
        caps = tuple(capacities)
        for i, cap in enumerate(caps):
            if not isinstance(cap, int) or cap <= 0:
                raise DagValidationError(f"Outbox capacity of ordinal {i} must be an int > 0, got {cap!r}")
        if snapshot_capacity is not None and (not isinstance(snapshot_capacity, int) or snapshot_capacity <= 0):
            raise DagValidationError(
                f"Outbox snapshot_capacity must be None or an int > 0, got {snapshot_capacity!r}"
            )
        self._capacities = caps
        self.broken_rule: ProcessorContractError | None = None
        self._buckets: list[list] = [[] for _ in caps]
        self._all = tuple(range(len(caps)))
        self._snapshot: list | None = None if snapshot_capacity is None else []
        self._snapshot_capacity = snapshot_capacity
        self.owner = owner
        self.call = ""
        self._pending: Any = _NO_ITEM
        self._pending_ordinals: tuple = ()
        self._accepted: set = set()
        self._refused = False
        self._blocked = False
        self._pending_snapshot: Any = _NO_ITEM
        self._snapshot_refused = False

    # ------------------------------------------------------------------ public API
    def bucket_count(self) -> int:
        """The number of outbound buckets (edges), not counting the snapshot bucket."""
        return len(self._buckets)

    def offer(self, item: Any, ordinal: int | Sequence[int] = -1) -> bool:
        """Put ``item`` into the bucket(s) of ``ordinal`` (-1 = every bucket, or a list of ordinals).

        Returns False when some bucket is full; then return from the processor method and offer the same item
        again next time.
        """
        if (
            ordinal.__class__ is int
            and self._pending is _NO_ITEM
            and not self._refused
            and not self._blocked
            and item is not None
        ):
            buckets = self._buckets
            if ordinal == -1:
                if len(buckets) != 1:
                    caps = self._capacities
                    for o, bucket in enumerate(buckets):
                        if len(bucket) >= caps[o]:
                            return self._offer_slow(item, self._all)
                    for bucket in buckets:
                        bucket.append(item)
                    return True
                ordinal = 0
            elif not 0 <= ordinal < len(buckets):
                return self._offer_slow(item, ordinal)
            bucket = buckets[ordinal]
            if len(bucket) < self._capacities[ordinal]:
                bucket.append(item)
                return True
            return self._refuse(item, (ordinal,), set())
        return self._offer_slow(item, ordinal)

    def offer_many(self, items: Sequence[Any], start: int = 0, ordinal: int | Sequence[int] = -1, *,
                   no_none: bool = False) -> int:
        """Offer ``items[start:]`` in order, as many as fit; return the index of the first item not taken.

        The same as calling ``offer`` item by item and stopping at the first refusal, but the items that fit are
        appended in one step. Stopping because the buckets are full is not a refusal: offer the rest on the next
        call. ``FlatMapper`` uses it for functions that return a list. ``no_none=True``: the caller guarantees that
        no item is ``None``, so the check (an ``==`` per item, costly for items with a Python ``__eq__``) is skipped.

        >>> box = Outbox([2])
        >>> box.offer_many(["a", "b", "c"])
        2
        >>> box.drain(0); box.offer_many(["a", "b", "c"], 2)
        ['a', 'b']
        3
        """
        if (start == 0 and self._pending is _NO_ITEM and not self._refused and not self._blocked
                and (ordinal == -1 or ordinal == 0) and ordinal.__class__ is int and len(self._buckets) == 1):
            bucket = self._buckets[0]  # the common case (one edge, all items fit) in as few steps as possible
            if len(bucket) + len(items) <= self._capacities[0] and (no_none or not contains_none(items)):
                bucket.extend(items)
                return len(items)
        if self._pending is not _NO_ITEM:  # a refused item must be offered again first
            if start >= len(items) or not self.offer(items[start], ordinal):
                return start
            start += 1
        buckets = self._buckets
        if ordinal.__class__ is not int or self._refused or self._blocked or not -1 <= ordinal < len(buckets):
            return self._offer_each(items, start, ordinal)
        if ordinal == -1 and len(buckets) != 1:
            targets = buckets
            caps = self._capacities
            # no bucket at all (a sink): everything is accepted and goes nowhere, as ``offer`` does
            room = min((caps[o] - len(bucket) for o, bucket in enumerate(buckets)), default=len(items))
        else:
            ordinal = max(ordinal, 0)
            targets = (buckets[ordinal],)
            room = self._capacities[ordinal] - len(targets[0])
        if room <= 0:
            return start
        chunk = items if start == 0 and len(items) <= room else items[start:start + room]
        if not no_none and contains_none(chunk):  # the per-item path checks them one by one
            return self._offer_each(items, start, ordinal)
        for bucket in targets:
            bucket.extend(chunk)
        return start + len(chunk)

    def _offer_each(self, items: Sequence[Any], start: int, ordinal: Any) -> int:
        return offer_each(self.offer, items, start, ordinal)

    def offer_to_snapshot(self, key: Any, value: Any) -> bool:
        """Put the entry ``(key, value)`` into the snapshot bucket; False when it is full (retry the same entry)."""
        if self._snapshot is None:
            self._fail(
                "offer_to_snapshot() called but this outbox has no snapshot bucket",
                "Call offer_to_snapshot() (or try_emit_to_snapshot()) only from save_to_snapshot().",
            )
        if key is None or value is None:
            self._fail(
                f"offer_to_snapshot() got a None {'key' if key is None else 'value'} (key={key!r}, value={value!r})",
                "Snapshot keys and values must not be None.",
            )
        if self._snapshot_refused:
            self._fail(
                "offer_to_snapshot() called again after it returned False, without returning first", _REFUSAL_FIX
            )
        pending = self._pending_snapshot
        if pending is not _NO_ITEM:
            if not (_same(pending[0], key) and _same(pending[1], value)):
                self._fail(
                    "different snapshot entry offered after a previous offer_to_snapshot() returned False: "
                    f"expected {pending!r}, got {(key, value)!r}",
                    _REFUSAL_FIX,
                )
        elif self._blocked and self._pending is _NO_ITEM:
            return self._refuse_snapshot(key, value)
        if len(self._snapshot) >= self._snapshot_capacity:
            return self._refuse_snapshot(key, value)
        self._snapshot.append(_copy_entry(key, value))
        self._pending_snapshot = _NO_ITEM
        return True

    def has_unfinished_item(self) -> bool:
        """True when an offered item or snapshot entry was refused and not yet re-offered successfully."""
        return self._pending is not _NO_ITEM or self._pending_snapshot is not _NO_ITEM

    # ------------------------------------------------------------------ internal, for drivers
    def drain(self, ordinal: int) -> list:
        """Internal: remove and return the items of bucket ``ordinal``."""
        items = self._buckets[ordinal]
        self._buckets[ordinal] = []
        return items

    def drain_snapshot(self) -> list[tuple]:
        """Internal: remove and return the ``(key, value)`` entries of the snapshot bucket."""
        entries = self._snapshot
        if entries is None:
            return []
        self._snapshot = []
        return entries

    def reset(self) -> None:
        """Internal: a new processor call starts; offering is allowed again after a refusal."""
        self._refused = False
        self._snapshot_refused = False

    def block(self) -> None:
        """Internal: refuse every new item (a pending refused item is still accepted)."""
        self._blocked = True

    def unblock(self) -> None:
        """Internal: undo ``block()``."""
        self._blocked = False

    def is_full(self, ordinal: int) -> bool:
        """Internal: True when bucket ``ordinal`` holds as many items as its capacity."""
        return len(self._buckets[ordinal]) >= self._capacities[ordinal]

    def bucket(self, ordinal: int) -> list:
        """Internal: the live list of bucket ``ordinal`` (do not keep it across ``drain``)."""
        return self._buckets[ordinal]

    def snapshot_size(self) -> int:
        """Internal: the number of entries waiting in the snapshot bucket."""
        return 0 if self._snapshot is None else len(self._snapshot)

    # ------------------------------------------------------------------ slow paths
    def _offer_slow(self, item: Any, ordinal: Any) -> bool:
        if item is None:
            self._fail(
                "offered None as an item",
                "None is not an item: skip the item instead of emitting None.",
            )
        ordinals = self._normalise(ordinal)
        if self._refused:
            self._fail(
                "offer() called again after it returned False, without returning from the method first",
                _REFUSAL_FIX,
            )
        if self._pending is not _NO_ITEM:
            if not _same(self._pending, item):
                self._fail(
                    "different item offered after a previous offer() returned False: "
                    f"expected {self._pending!r}, got {item!r}",
                    _REFUSAL_FIX,
                )
            if ordinals != self._pending_ordinals:
                self._fail(
                    "item offered to different ordinals after a previous offer() returned False: "
                    f"expected {list(self._pending_ordinals)}, got {list(ordinals)}",
                    _REFUSAL_FIX,
                )
            accepted = self._accepted
        elif self._blocked and self._pending_snapshot is _NO_ITEM:
            return self._refuse(item, ordinals, set())
        else:
            accepted = set()
        buckets = self._buckets
        caps = self._capacities
        for o in ordinals:
            if o in accepted:
                continue
            bucket = buckets[o]
            if len(bucket) >= caps[o]:
                return self._refuse(item, ordinals, accepted)
            bucket.append(item)
            accepted.add(o)
        self._pending = _NO_ITEM
        self._pending_ordinals = ()
        self._accepted = set()
        return True

    def _refuse(self, item: Any, ordinals: tuple, accepted: set) -> bool:
        self._pending = item
        self._pending_ordinals = ordinals
        self._accepted = accepted
        self._refused = True
        return False

    def _refuse_snapshot(self, key: Any, value: Any) -> bool:
        self._pending_snapshot = (key, value)
        self._snapshot_refused = True
        return False

    def _normalise(self, ordinal: Any) -> tuple:
        n = len(self._buckets)
        if isinstance(ordinal, int) and not isinstance(ordinal, bool):
            if ordinal == -1:
                return self._all
            ordinals: tuple = (ordinal,)
        elif isinstance(ordinal, (list, tuple, range)):
            ordinals = tuple(ordinal)
        else:
            self._fail(
                f"offer() got ordinal {ordinal!r} of type {type(ordinal).__name__}",
                "Pass an int (-1 = all outbound edges) or a list of ints.",
            )
        for o in ordinals:
            if not isinstance(o, int) or isinstance(o, bool) or not 0 <= o < n:
                self._fail(
                    f"illegal edge ordinal {o!r}: this processor has {n} outbound edge(s), ordinals 0..{n - 1}",
                    "Offer only to ordinals of existing outbound edges, or connect an edge at that ordinal.",
                )
        return ordinals

    def _fail(self, rule: str, fix: str) -> None:
        who = self.owner or "a processor"
        where = f" in {self.call}" if self.call else ""
        self.broken_rule = ProcessorContractError(f"Outbox rule broken by {who}{where}: {rule}. {fix}")
        raise self.broken_rule

    def __repr__(self) -> str:
        return f"Outbox(buckets={self._buckets!r}, snapshot={self._snapshot!r})"
