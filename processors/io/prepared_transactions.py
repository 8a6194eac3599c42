"""The records the two-phase-commit sinks keep about their transactions, shared by the exactly-once file sink
(``transactional_files``, and the rolling files sink built on it) and the exactly-once JDBC sink
(``jdbc_two_phase``).

Both take part in the engine's snapshot protocol the same way (Jet's two-phase snapshot, Flink's
``TwoPhaseCommitSinkFunction``); only what a transaction *is* differs (a staged file, a DB-API two-phase
transaction), so :class:`PreparedTransactions` holds opaque entries and the sink itself commits them:

- ``snapshot_commit_prepare()``: the sink prepares its open transaction and records it as one group (maybe
  empty: :meth:`~PreparedTransactions.add_prepared`); then every transaction not committed yet goes to the
  snapshot as ``broadcast_key((tag, owner index, sequence))`` (:meth:`~PreparedTransactions.save`).
- ``snapshot_commit_finish(success)``: once per prepare, oldest first (:meth:`~PreparedTransactions.finish`);
  ``True`` commits that prepare's group and whatever failed snapshots left prepared, ``False`` keeps the group
  prepared for the next success.
- ``complete()``: a bounded job's end commits everything still prepared (:meth:`~PreparedTransactions.commit_all`).
- Restore: every processor receives every saved id (broadcast keys); :meth:`~PreparedTransactions.restore`
  keeps in :attr:`~PreparedTransactions.restored` those of the owners the processor now owns
  (``owner mod total_parallelism == index``, :func:`owns`), so a parallelism change loses none, and tells the
  sink the first sequence after its own saved ones, so a transaction id is never reused.

>>> txns = PreparedTransactions("demo.txn")
>>> txns.add_prepared(["t0"]); txns.add_prepared(["t1"])
>>> txns.finish(False, print); txns.finish(True, print)
['t0', 't1']
>>> txns.pending()
[]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from processors.api.snapshot_keys import BroadcastKey, broadcast_key

__all__ = ["PreparedTransactions", "owns"]

T = TypeVar("T")


def owns(owner: int, index: int, total: int) -> bool:
    """True when the processor of global ``index`` (of ``total``) takes care of ``owner``'s transactions.

    >>> owns(5, 1, 4), owns(5, 0, 4)
    (True, False)
    """
    return owner % total == index


class PreparedTransactions(Generic[T]):
    """One sink processor's prepared transactions per unfinished snapshot (see the module docstring).

    ``tag`` is the first element of the snapshot keys, naming the sink (``"write_file_p.txn"``).
    """

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.restored: set[tuple[int, int]] = set()
        """``(owner, sequence)`` of the restored snapshot's transactions of the owners this processor owns."""
        self._groups: list[list[T]] = []  # per unfinished prepare, its transactions (oldest first)
        self._failed: list[T] = []  # prepared by snapshots that failed: committed with the next success

    def add_prepared(self, group: list[T]) -> None:
        """Record what one ``snapshot_commit_prepare()`` prepared (maybe nothing)."""
        self._groups.append(group)

    def pending(self) -> list[T]:
        """Every transaction prepared and not committed yet, the oldest first."""
        return self._failed + [entry for group in self._groups for entry in group]

    def save(self, offer_to_snapshot: Callable[[Any, Any], bool], owner_seq: Callable[[T], tuple[int, int]],
             what: str, value: Callable[[int, int], Any] | None = None) -> None:
        """Offer the id ``owner_seq(entry)`` of every pending transaction to the snapshot (a broadcast key), with
        ``value(owner, seq)`` (default ``True``) as its value."""
        for entry in self.pending():
            owner, seq = owner_seq(entry)
            saved = True if value is None else value(owner, seq)
            if not offer_to_snapshot(broadcast_key((self.tag, owner, seq)), saved):
                raise RuntimeError(  # pragma: no cover - the runtime's snapshot bucket is unbounded
                    f"{what}: the snapshot bucket refused a transaction id")

    def finish(self, success: bool, commit: Callable[[list[T]], None]) -> None:
        """The oldest unfinished prepare's outcome: on success, ``commit`` its transactions and those failed
        snapshots left prepared; on failure they stay prepared for the next success."""
        if not self._groups:
            return
        oldest = self._groups.pop(0)
        if not success:
            self._failed.extend(oldest)
            return
        commit(self._failed + oldest)
        self._failed = []

    def commit_all(self, commit: Callable[[list[T]], None]) -> None:
        """``commit`` every pending transaction (the end of a bounded job) and forget them."""
        commit(self.pending())
        self.clear()

    def clear(self) -> None:
        """Forget every pending transaction (they stay prepared wherever they are)."""
        self._failed, self._groups = [], []

    def restore(self, inbox, index: int, total: int, what: str) -> int:
        """Take the transaction ids a restore hands processor ``index`` (of ``total``): those of owners it owns
        go to :attr:`restored`. Returns the first sequence after its own restored ones (0 when none)."""
        next_seq = 0
        for key, _value in inbox.take_all():
            if not (isinstance(key, BroadcastKey) and isinstance(key.key, tuple) and key.key[0] == self.tag):
                raise ValueError(f"{what}: unexpected snapshot key {key!r}")
            _tag, owner, seq = key.key
            if owner == index:
                next_seq = max(next_seq, seq + 1)
            if owns(owner, index, total):
                self.restored.add((owner, seq))
        return next_seq
