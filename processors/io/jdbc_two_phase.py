"""The exactly-once JDBC sink: ``write_jdbc_p(..., exactly_once=True)`` in an ``EXACTLY_ONCE`` job (Jet's XA
``JdbcSink``; Flink's ``TwoPhaseCommitSinkFunction`` on a real database).

It plugs into the engine's snapshot protocol exactly like the two-phase file sink
(``processors/io/transactional_files.py``; the records both keep of their prepared transactions are
``processors/io/prepared_transactions.py``); a *transaction* is one DB-API two-phase transaction of one processor
between two snapshots, and its id (the ``gtrid`` of ``connection.xid(format_id, gtrid, bqual)``) is derived from
the job and the processor::

    jetspark-<token>-<job id>-<owner index>-<sequence>

``token`` is drawn once per ``write_jdbc_p`` call (so two processes whose jobs share an id never meet), the owner
index is the processor's global index and the sequence counts its transactions (one per snapshot it took part
in; it only grows, also across restarts, so an id is never reused).

- ``process()``: the first batch after a snapshot opens a transaction (``tpc_begin``) on a free connection;
  batches go in with ``executemany``, nothing is committed.
- ``snapshot_commit_prepare()``: ``tpc_prepare()``; the connection stays with its prepared transaction and the
  ids of every transaction not yet committed go to the snapshot (broadcast keys). The next batch opens a new
  transaction on another connection (DB-API allows nothing else on a connection with a prepared transaction).
- ``snapshot_commit_finish(success)``: once per prepare, in order; ``True`` commits that snapshot's transaction
  and any older one a failed snapshot left prepared (``tpc_commit()``), freeing its connection; ``False``
  commits nothing. A connection lost before the commit is replaced and the transaction committed by id (a
  prepared transaction survives the server's restart); one no longer prepared was already committed.
- Restore and fresh start: the first call after restore (or the first call at all) lists the server's prepared
  transactions (``tpc_recover``) and, for the owners this processor now owns (``owner mod parallelism ==
  index``), commits those of the restored snapshot and rolls back every other one of the job: they hold items
  the sources will replay.
- A connection lost while a transaction is open loses that transaction on the server: the processor raises
  ``RestartableError`` and the job restarts from its last snapshot, which replays those items.
- ``complete()`` (a bounded job's end) commits everything; ``close()`` rolls back the open transaction. When the
  job ends (the meta supplier's ``close`` on the driver), whatever it left prepared (a failed or cancelled job)
  is rolled back, so no prepared transaction of the job outlives it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from processors.io.dbapi import close_quietly, connect, connect_with_retry, describe_server, failure, is_connection_lost
from processors.io.jdbc_batch_sink import WriteJdbcP, with_cursor
from jetspark_base.errors import DagValidationError, RestartableError
from processors.io.prepared_transactions import PreparedTransactions, owns

__all__ = ["TwoPhaseJdbcSinkP", "check_two_phase_support", "xid_prefix", "roll_back_leftovers"]

_log = logging.getLogger("jetspark.jdbc")
_TXN_KEY = "write_jdbc_p.txn"
_FORMAT_ID = 0x4A4554  # "JET": the XA format id of jetspark's transaction ids
_TPC_METHODS = ("xid", "tpc_begin", "tpc_prepare", "tpc_commit", "tpc_rollback", "tpc_recover")


def xid_prefix(token: str, job_id: int) -> str:
    """The start of every transaction id of one sink in one job."""
    return f"jetspark-{token}-{job_id}-"


def check_two_phase_support(new_connection_fn: Callable[[], Any], vertex: str) -> None:
    """Refuse (at job start, on the driver) a connection without DB-API's two-phase methods."""
    what = f"write_jdbc_p (vertex '{vertex}') with exactly_once=True"
    conn = connect(new_connection_fn, what)
    try:
        missing = [m for m in _TPC_METHODS if not callable(getattr(conn, m, None))]
    finally:
        close_quietly(conn)
    if missing:
        raise DagValidationError(
            f"{what}: the connection ({type(conn).__module__}.{type(conn).__qualname__}) has no DB-API two-phase "
            f"commit methods {', '.join(missing)}; use a driver that has them (e.g. psycopg) or exactly_once=False")


def _owner_seq(gtrid: str, prefix: str) -> tuple[int, int] | None:
    if not gtrid.startswith(prefix):
        return None
    owner, _, seq = gtrid[len(prefix):].partition("-")
    return (int(owner), int(seq)) if owner.isdigit() and seq.isdigit() else None


def _ours(connection: Any, prefix: str) -> list[tuple[Any, tuple[int, int]]]:
    """The prepared transactions of this sink and job on the server, with their ``(owner, sequence)``."""
    found = []
    for xid in connection.tpc_recover():
        parsed = _owner_seq(str(xid[1]), prefix)
        if parsed is not None:
            found.append((xid, parsed))
    return found


def roll_back_leftovers(new_connection_fn: Callable[[], Any], prefix: str) -> None:
    """Roll back every prepared transaction whose id starts with ``prefix`` (the job ended); logs, never raises."""
    try:
        conn = new_connection_fn()
    except Exception as exc:  # noqa: BLE001 - the job's own outcome matters more
        _log.warning("write_jdbc_p: could not connect to %s to roll back the job's prepared transactions: %s",
                     describe_server(new_connection_fn), type(exc).__name__)
        return
    try:
        for xid, _ in _ours(conn, prefix):
            _log.info("write_jdbc_p: the job ended; rolling back its prepared transaction %s", xid[1])
            conn.tpc_rollback(xid)
    except Exception as exc:  # noqa: BLE001
        _log.warning("write_jdbc_p: rolling back the job's prepared transactions on %s failed: %s",
                     describe_server(new_connection_fn), type(exc).__name__)
    finally:
        close_quietly(conn)


class TwoPhaseJdbcSinkP(WriteJdbcP):
    """The processor of ``write_jdbc_p(..., exactly_once=True)`` under ``EXACTLY_ONCE`` (module docstring)."""

    def __init__(self, update_query, new_connection_fn, bind_fn, batch_limit, prefix):
        super().__init__(update_query, new_connection_fn, bind_fn, batch_limit)
        self._prefix = prefix
        self._index, self._total, self._seq = 0, 1, 0
        self._open: tuple[str, Any] | None = None  # (gtrid, connection) of the open transaction
        self._idle: list = []  # connections without a transaction
        self._txns: PreparedTransactions[tuple[str, Any]] = PreparedTransactions(_TXN_KEY)  # (gtrid, connection)
        self._started = False
        self._offer_to_snapshot: Any = None

    def init(self, outbox, context) -> None:
        super().init(outbox, context)  # the first connection: fails the job at once if it cannot be made
        self._idle.append(self._conn)
        self._conn = None
        self._offer_to_snapshot = outbox.offer_to_snapshot
        self._index, self._total = context.global_processor_index, context.total_parallelism

    # ---------------------------------------------------------------- writing
    def process(self, ordinal: int, inbox) -> None:
        self._start()
        for batch in self._batches(inbox):
            gtrid, conn = self._open or self._begin()
            try:
                with_cursor(conn, lambda cur: cur.executemany(self._query, batch))
            except Exception as exc:  # noqa: BLE001 - classified
                self._lost_or_fail(exc, f"writing a batch of {len(batch)} in transaction {gtrid}", conn)

    def _begin(self) -> tuple[str, Any]:
        conn = self._idle.pop() if self._idle else self._new_connection()
        gtrid = f"{self._prefix}{self._index}-{self._seq}"
        self._seq += 1
        try:
            conn.tpc_begin(conn.xid(_FORMAT_ID, gtrid, "0"))
        except Exception as exc:  # noqa: BLE001
            self._lost_or_fail(exc, f"beginning transaction {gtrid}", conn)
        self._open = (gtrid, conn)
        return self._open

    def _new_connection(self) -> Any:
        return connect_with_retry(self._connect, self._what, self._log)

    def _lost_or_fail(self, exc: BaseException, doing: str, conn: Any) -> None:
        """A lost connection restarts the job from its last snapshot; any other error fails it."""
        if is_connection_lost(exc):
            close_quietly(conn)
            if self._open is not None and self._open[1] is conn:
                self._open = None
            raise RestartableError(f"{self._what}: connection to {describe_server(self._connect, conn)} lost while "
                                   f"{doing} ({type(exc).__name__}); restarting from the last snapshot") from None
        raise failure(f"{self._what}: {doing}", self._connect, exc, conn) from None

    # ---------------------------------------------------------------- two-phase commit
    def snapshot_commit_prepare(self) -> bool:
        self._start()
        group: list[tuple[str, Any]] = []
        if self._open is not None:
            gtrid, conn = self._open
            try:
                conn.tpc_prepare()
            except Exception as exc:  # noqa: BLE001
                self._lost_or_fail(exc, f"preparing transaction {gtrid}", conn)
            self._open = None
            group.append((gtrid, conn))
        self._txns.add_prepared(group)
        self._txns.save(self._offer_to_snapshot, lambda entry: _owner_seq(entry[0], self._prefix), self._what)
        return True

    def snapshot_commit_finish(self, success: bool) -> bool:
        self._txns.finish(success, self._commit)
        return True

    def _commit(self, entries: list[tuple[str, Any]]) -> None:
        """Commit prepared transactions on their connections; those whose connection was lost, by id."""
        orphans = []
        for gtrid, conn in entries:
            try:
                conn.tpc_commit()
                self._idle.append(conn)
            except Exception as exc:  # noqa: BLE001
                if not is_connection_lost(exc):
                    raise failure(f"{self._what}: committing transaction {gtrid}", self._connect, exc, conn) from None
                close_quietly(conn)
                orphans.append(gtrid)
        if orphans:
            self._log.warning("%s: connection lost before committing %s; committing them by id on a new "
                              "connection", self._what, ", ".join(orphans))
            conn = self._new_connection()
            self._idle.append(conn)
            prepared = {str(xid[1]): xid for xid, _ in _ours(conn, self._prefix)}
            for gtrid in orphans:
                if gtrid in prepared:  # else it was committed before the connection dropped
                    conn.tpc_commit(prepared[gtrid])

    def complete(self) -> bool:
        self._start()
        if self._open is not None:  # the end of a bounded job: what is open is published too
            gtrid, conn = self._open
            self._open = None
            try:
                conn.tpc_commit()  # one-phase commit of a transaction that was never prepared
            except Exception as exc:  # noqa: BLE001
                self._lost_or_fail(exc, f"committing transaction {gtrid}", conn)
            self._idle.append(conn)
        self._txns.commit_all(self._commit)
        return True

    # ---------------------------------------------------------------- restore and start
    def restore_from_snapshot(self, inbox) -> None:
        self._seq = max(self._seq, self._txns.restore(inbox, self._index, self._total, self._what))

    def finish_snapshot_restore(self) -> bool:
        self._start()
        return True

    def try_process(self) -> bool:
        self._start()
        return True

    def _start(self) -> None:
        """Once: commit the restored snapshot's transactions of owned owners, roll back their others."""
        if self._started:
            return
        self._started = True
        if not self._idle:
            self._idle.append(self._new_connection())
        conn = self._idle[-1]
        try:
            for xid, (owner, seq) in _ours(conn, self._prefix):
                if owner == self._index:
                    self._seq = max(self._seq, seq + 1)  # never reuse an id, even a rolled back one
                if not owns(owner, self._index, self._total):
                    continue
                if (owner, seq) in self._txns.restored:
                    self._log.info("%s: committing transaction %s of the restored snapshot", self._what, xid[1])
                    conn.tpc_commit(xid)
                else:
                    self._log.info("%s: rolling back transaction %s (after the restored snapshot; its items "
                                   "are replayed)", self._what, xid[1])
                    conn.tpc_rollback(xid)
        except Exception as exc:  # noqa: BLE001
            self._lost_or_fail(exc, "recovering the job's prepared transactions", conn)

    def close(self) -> None:
        if self._open is not None:
            try:
                self._open[1].tpc_rollback()
            except Exception:  # noqa: BLE001 - the server rolls it back when the connection closes anyway
                pass
            close_quietly(self._open[1])
        for conn in self._idle + [c for _, c in self._txns.pending()]:
            close_quietly(conn)  # a prepared transaction stays prepared on the server
        self._open, self._idle = None, []
        self._txns.clear()
