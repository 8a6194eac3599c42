"""The processor of ``stream_postgres_cdc_p`` (the design is in :mod:`connectors.cdc`'s docstring).

Work moves in *chunks*: a list of items plus the position reached once all of them are emitted (``None`` for a
chunk of SYNC rows, the transaction's end LSN for a transaction's changes). ``complete()`` offers the current
chunk; when it is out, the position moves; when no chunk is left it reads the next (a fetch of SYNC rows, or a
poll of the slot at most every :data:`POLL_INTERVAL_S`). A snapshot therefore saves a position that covers
exactly the transactions emitted completely.

State in a snapshot (one entry, key ``"postgres-cdc"``): ``{"phase": "stream", "slot": name, "position": lsn}``.
No snapshot is saved during the initial SYNC: one requested then waits for its end (see ``save_to_snapshot``).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any

from connectors.cdc_config import PostgresCdcConfig
from connectors.cdc_records import ChangeRecord, Operation
from processors.io.dbapi import RECONNECT_TIMEOUT_S, close_quietly, connect, error_text, failure, is_connection_lost
from connectors.pg_replication import ReplicationStream, format_lsn, parse_lsn, quote_ident
from connectors.pgoutput import Decoder
from jetspark_base.errors import DagValidationError
from processors.api.processor import Processor

__all__ = ["StreamPostgresCdcP", "POLL_WAIT_S"]

_log = logging.getLogger("jetspark.cdc")
POLL_WAIT_S = 0.01
"""How long one ``complete()`` call waits for the replication stream when nothing is pending."""
_FETCH = 1024
_SNAPSHOT_KEY = "postgres-cdc"
_OPERATIONS = {"I": Operation.INSERT, "U": Operation.UPDATE, "D": Operation.DELETE}
_SLOT_BUSY = "55006"  # object_in_use: a session that is going away still holds the slot


class StreamPostgresCdcP(Processor):
    """One processor of the whole job (see the module docstring)."""

    def __init__(self, config: PostgresCdcConfig, params: Any = None):
        self._config, self._params = config, params
        self._slot = config.slot()
        self._conn: Any = None  # autocommit: the start (publication, slot) and type loaders
        self._reader: Any = None  # SYNC: the transaction that imported the slot's snapshot
        self._loader: Any = None
        self._decoder: Decoder | None = None
        self._phase: str | None = None  # None (not started), "sync", "stream"
        self._restored: dict | None = None
        self._sync_tables: list[tuple[str, str]] = []
        self._sync_cursor: Any = None
        self._sync_point = 0
        self._sync_ms = 0
        self._position = 0  # end LSN of the last transaction emitted completely
        self._queued = 0  # end LSN of the last transaction taken into a chunk
        self._confirmed = 0  # the server may discard the log before this LSN
        self._chunks: deque = deque()
        self._offset = 0
        self._prepared: list[int] = []
        self._stream: ReplicationStream | None = None
        self._lost_since: float | None = None  # when the replication stream broke (None: it is fine)
        self._next_commit = 0.0
        self._mapper: Any = None
        self._log = _log

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        self._outbox = outbox
        self._log = context.logger  # forwarded to the driver's logging while the job runs
        self._what = f"postgres CDC source (vertex '{context.vertex_name}')"
        guarantee = getattr(context.processing_guarantee, "value", context.processing_guarantee)
        self._snapshots = guarantee in ("EXACTLY_ONCE", "AT_LEAST_ONCE")
        if self._params is not None:
            from processors.windowing.event_time import EventTimeMapper

            self._mapper = EventTimeMapper(self._params, 1, owner=self._what)

    # ---------------------------------------------------------------- snapshots
    def save_to_snapshot(self) -> bool:
        """Save the stream position; during the initial SYNC, go on with the SYNC instead and save after it.

        The SYNC reads through the snapshot that creating the slot exported, which dies with its session, so it
        cannot resume after a restart. A snapshot requested during it therefore waits (``False``: called again)
        while each call emits the next SYNC rows, so every SYNC row is before the barrier; a job that fails
        before that snapshot completes restarts with nothing restored and reads the tables once more, while an
        exactly-once sink rolls back what it wrote of the first reading. Every SYNC row thus reaches such a sink
        once; the price is that a job's first snapshot completes only after its SYNC.
        """
        if self._phase != "stream":
            self.complete()
            return False
        if not self._drain():  # the last SYNC rows (position None) go before the barrier too
            return False
        return self._outbox.offer_to_snapshot(_SNAPSHOT_KEY,
                                              {"phase": "stream", "slot": self._slot, "position": self._position})

    def snapshot_commit_prepare(self) -> bool:
        self._prepared.append(self._position)
        return True

    def snapshot_commit_finish(self, success: bool) -> bool:
        if self._prepared:
            position = self._prepared.pop(0)
            if success and position:
                self._advance(position)
        return True

    def restore_from_snapshot(self, inbox) -> None:
        for key, value in inbox.take_all():
            if key != _SNAPSHOT_KEY:
                raise ValueError(f"{self._what}: unexpected snapshot key {key!r}")
            self._restored = value

    # ---------------------------------------------------------------- the loop
    def complete(self) -> bool:
        if self._phase is None:
            self._start()
        if not self._drain():
            return False  # the outbox is full
        if self._phase == "sync":
            self._sync_step()
        else:
            if not self._snapshots and time.monotonic() >= self._next_commit:
                self._next_commit = time.monotonic() + self._config.commit_period_ms / 1000
                self._advance(self._position)
            if not self._poll() and self._mapper is not None:
                idle = self._mapper.handle_no_event()
                if idle:
                    self._chunks.append((idle, None))
        self._drain()
        return False

    def _drain(self) -> bool:
        """Offer the pending chunks; True once all are out."""
        while self._chunks:
            items, position = self._chunks[0]
            self._offset = self._outbox.offer_many(items, self._offset)
            if self._offset < len(items):
                return False
            self._chunks.popleft()
            self._offset = 0
            if position is not None:
                self._position = position
        return True

    def _emit(self, records: list[ChangeRecord], position: int | None) -> None:
        if self._mapper is not None:
            items: list = []
            native = self._params.timestamp_fn is None  # else the pipeline's timestamp_fn stamps them
            for r in records:
                items += self._mapper.handle_event(r, 0, r.timestamp() if native else None)
            records = items
        self._chunks.append((records, position))

    # ---------------------------------------------------------------- start and SYNC
    def _start(self) -> None:
        import psycopg
        from psycopg.adapt import Transformer
        from psycopg.pq import Format

        self._conn = connect(self._config.connection_fn(autocommit=True), self._what)
        transformer = Transformer(self._conn)
        self._loader = lambda oid, data: transformer.get_loader(oid, Format.TEXT).load(data)
        self._decoder = Decoder(self._loader)
        restored = self._restored or {}
        if restored.get("phase") == "stream":
            if not self._slot_exists():
                raise DagValidationError(
                    f"{self._what}: replication slot {self._slot} on {self._config.server()} is gone, so the job "
                    "cannot resume from its snapshot (something dropped it); submit the job anew: a new job "
                    "creates the slot again and starts with a SYNC of the tables")
            self._phase, self._position = "stream", restored["position"]
            self._queued = self._confirmed = self._position
            return
        try:
            self._begin_sync(psycopg)
        except Exception as exc:  # noqa: BLE001
            if isinstance(exc, DagValidationError):
                raise
            raise failure(f"{self._what}: starting the snapshot", self._config.connection_fn(), exc,
                          self._conn) from None

    def _slot_exists(self) -> bool:
        return self._conn.execute("select 1 from pg_replication_slots where slot_name = %s",
                                  (self._slot,)).fetchone() is not None

    def _begin_sync(self, psycopg: Any) -> None:
        conn, config = self._conn, self._config
        publication = conn.execute("select pubtruncate from pg_publication where pubname = %s",
                                   (config.publication_name,)).fetchone()
        if publication is None:  # publishes insert, update, delete and truncate (PostgreSQL's default)
            self._log.info("%s: creating publication %s FOR ALL TABLES", self._what, config.publication_name)
            conn.execute(f"create publication {quote_ident(config.publication_name)} for all tables")
        elif not publication[0]:
            self._log.warning(
                "%s: publication %s on %s does not publish truncate, so a TRUNCATE of a captured table is not "
                "reported (and a CdcSinks.map keeps its rows); ALTER PUBLICATION %s SET (publish = 'insert, update, "
                "delete, truncate') to report it", self._what, config.publication_name, config.server(),
                quote_ident(config.publication_name))
        if self._slot_exists():
            self._log.info("%s: dropping the existing replication slot %s (a new job starts with SYNC)", self._what,
                           self._slot)
            conn.execute("select pg_drop_replication_slot(%s)", (self._slot,))
        replication = config.connection_fn(autocommit=True, replication="database")()
        try:
            result = replication.pgconn.exec_(
                f"CREATE_REPLICATION_SLOT {quote_ident(self._slot)} LOGICAL pgoutput EXPORT_SNAPSHOT".encode())
            if result.status != psycopg.pq.ExecStatus.TUPLES_OK:
                raise DagValidationError(f"{self._what}: creating replication slot {self._slot} on "
                                         f"{config.server()} failed: {result.error_message.decode().strip()}")
            self._sync_point = parse_lsn(result.get_value(0, 1).decode())
            snapshot = result.get_value(0, 2).decode()
            self._reader = config.connection_fn()()
            self._reader.execute("set transaction isolation level repeatable read, read only")
            self._reader.execute(f"set transaction snapshot '{snapshot}'")
        finally:
            close_quietly(replication)  # the snapshot stays with the reader's transaction
        self._sync_ms = int(time.time() * 1000)
        rows = self._reader.execute(
            "select table_schema, table_name from information_schema.tables where table_type = 'BASE TABLE' "
            "and table_schema not in ('pg_catalog', 'information_schema') order by 1, 2").fetchall()
        self._sync_tables = [(s, t) for s, t in rows if config.matches(s, t)]
        self._phase = "sync"
        self._log.info("%s: slot %s created at %s; SYNC of %d tables", self._what, self._slot,
                       format_lsn(self._sync_point), len(self._sync_tables))

    def _sync_step(self) -> None:
        """The next chunk of SYNC rows; at the end, the switch to streaming from the slot's start."""
        try:
            if self._sync_cursor is None:
                if not self._sync_tables:
                    self._end_sync()
                    return
                schema, table = self._sync_tables.pop(0)
                key = self._reader.execute(
                    "select a.attname from pg_index i join pg_attribute a on a.attrelid = i.indrelid and "
                    "a.attnum = any(i.indkey) where i.indrelid = %s::regclass and i.indisprimary",
                    (f"{quote_ident(schema)}.{quote_ident(table)}",)).fetchall()
                cursor = self._reader.cursor(name=f"jetspark_sync_{len(self._sync_tables)}")
                cursor.execute(f"select * from {quote_ident(schema)}.{quote_ident(table)}")
                self._sync_cursor = (cursor, schema, table, [k[0] for k in key])
                return
            cursor, schema, table, key = self._sync_cursor
            rows = cursor.fetchmany(_FETCH)
            if not rows:
                cursor.close()
                self._sync_cursor = None
                return
            names = [d.name for d in cursor.description]
            db = self._config.database or ""
            records = []
            for row in rows:
                value = dict(zip(names, row))
                records.append(ChangeRecord(Operation.SYNC, db, schema, table, self._sync_ms, self._sync_point, 0,
                                            {k: value[k] for k in key}, value))
            self._emit(records, None)
        except Exception as exc:  # noqa: BLE001
            raise failure(f"{self._what}: reading the SYNC snapshot", self._config.connection_fn(), exc,
                          self._reader) from None

    def _end_sync(self) -> None:
        self._reader.rollback()
        close_quietly(self._reader)
        self._reader = None
        self._phase = "stream"
        self._position = self._queued = self._confirmed = self._sync_point
        self._log.info("%s: SYNC done; streaming changes from %s", self._what, format_lsn(self._sync_point))

    # ---------------------------------------------------------------- streaming
    def _poll(self) -> bool:
        """Take the transactions the stream delivered after what was queued; True if any."""
        try:
            if self._stream is None:
                self._stream = ReplicationStream(self._config.connection_fn(autocommit=True, replication="database"),
                                                 self._slot, self._config.publication_name, self._queued,
                                                 self._confirmed)
                self._decoder = Decoder(self._loader)  # a new session sends the relations again
            messages = self._stream.read(POLL_WAIT_S)
            self._lost_since = None
        except Exception as exc:  # noqa: BLE001 - classified
            self._stream_failed(exc)
            return False
        decoder = self._decoder
        for message in messages:
            decoder.feed(message)
        found = False
        db = self._config.database or ""
        for end_lsn, commit_ms, changes in decoder.committed:
            if end_lsn <= self._queued:
                continue
            records = []
            for n, change in enumerate(changes, 1):
                rel = change.relation
                if not self._config.matches(rel.schema, rel.table):
                    continue
                if change.kind == "T":
                    records.append(ChangeRecord(Operation.UNSPECIFIED, db, rel.schema, rel.table, commit_ms, end_lsn,
                                                n, {}, {}, truncate=True))
                    continue
                value = change.old if change.kind == "D" else change.new
                source = change.new if change.new is not None else change.old
                records.append(ChangeRecord(_OPERATIONS[change.kind], db, rel.schema, rel.table, commit_ms,
                                            end_lsn, n, {k: source.get(k) for k in rel.key_columns}, value or {}))
            self._emit(records, end_lsn)
            self._queued = end_lsn
            found = True
        decoder.committed.clear()
        return found

    def _stream_failed(self, exc: BaseException) -> None:
        """A lost stream is reopened (bounded, logged) from what was queued; other errors fail the job."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if getattr(exc, "sqlstate", None) == _SLOT_BUSY or is_connection_lost(exc):
            now = time.monotonic()
            if self._lost_since is None:
                self._lost_since = now
            if now - self._lost_since > RECONNECT_TIMEOUT_S:
                raise failure(f"{self._what}: reading slot {self._slot} (for {RECONNECT_TIMEOUT_S:.0f} s)",
                              self._config.connection_fn(), exc) from None
            self._log.warning("%s: replication stream of slot %s on %s broke (%s); reopening", self._what,
                              self._slot, self._config.server(), error_text(exc, self._config.connection_fn()))
            time.sleep(min(0.5, 0.05 + (now - self._lost_since) / 10))
            return
        raise failure(f"{self._what}: reading slot {self._slot}", self._config.connection_fn(), exc) from None

    def _advance(self, lsn: int) -> None:
        """Let the server discard the log before ``lsn`` (never backwards); sent with the next status if the
        stream is down now."""
        if lsn <= self._confirmed:
            return
        self._confirmed = lsn
        if self._stream is not None:
            try:
                self._stream.confirm(lsn)
            except Exception as exc:  # noqa: BLE001 - the next read reopens the stream and reports it
                self._log.warning("%s: confirming %s on slot %s failed (%s)", self._what, format_lsn(lsn), self._slot,
                                  type(exc).__name__)

    def close(self) -> None:
        if self._sync_cursor is not None:
            close_quietly(self._sync_cursor[0])
        if self._stream is not None:
            self._stream.close()
        close_quietly(self._reader)
        close_quietly(self._conn)
        self._sync_cursor = self._reader = self._conn = self._stream = None
