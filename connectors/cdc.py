"""Change data capture from PostgreSQL (Jet's ``PostgresCdcSources``, ``CdcSinks``): the Pipeline builder, the
Core ``stream_postgres_cdc_p`` and ``CdcSinks.map``. psycopg (extra ``postgres``) is imported when a job runs.

How the source works (:mod:`connectors.cdc_source` holds the processor, :mod:`connectors.pgoutput` the decoder):

1. **Start.** At job start, on the driver, the server must have ``wal_level=logical`` (else the job is refused
   naming the setting). The processor (one in the whole job) makes sure the publication exists (created ``FOR
   ALL TABLES`` when missing: pgoutput sends only published tables), then creates the logical replication slot
   over a replication connection with ``EXPORT_SNAPSHOT``.
2. **SYNC.** A second connection imports that snapshot (``SET TRANSACTION SNAPSHOT``) and reads every matched
   table through a server-side cursor: the current rows, as of exactly the slot's starting point, as ``SYNC``
   records.
3. **Changes.** Then it streams the slot over the replication protocol (``START_REPLICATION`` with
   ``pgoutput``, :mod:`connectors.pg_replication`) and emits each committed transaction's changes in commit
   order. Its *position* is the end LSN of the last transaction it emitted completely.
4. **Snapshots.** Under ``EXACTLY_ONCE``/``AT_LEAST_ONCE`` the position is saved in every snapshot, and the server
   is told it may discard the log (the slot's confirmed position, sent in the stream's status messages) only when
   a snapshot completes, up to that snapshot's position. A restarted job starts the stream at its restored
   position, so it replays exactly what followed the snapshot. Without a guarantee the confirmed position
   follows what was emitted every ``commit_period`` ms.
5. **Stop.** ``set_replication_slot_drop_on_stop(True)`` drops the slot when the job ends (any way); otherwise
   it stays (and keeps WAL on the server until dropped or used).

``TRUNCATE`` is reported as one record per truncated captured table (``operation()`` ``UNSPECIFIED``,
``is_truncate()`` True, empty key and value; :mod:`connectors.cdc_records`), in commit order with the other
changes and through the same positions and snapshots, so it too is replayed exactly once after a restart. It
needs a publication that publishes truncates: the one jetspark creates does (PostgreSQL's default ``publish =
'insert, update, delete, truncate'``); a user's publication without ``truncate`` is logged as a warning at job
start, and its truncates go unreported.

Limitations, said plainly: a restart *during* the SYNC phase starts it over with a new slot (its SYNC records come
again, with a newer sequence); a fresh job drops an existing slot of the same name and starts with SYNC.

>>> source = (PostgresCdcSources.postgres("orders-cdc").set_database_address("127.0.0.1")
...           .set_database_user("jet").set_database_password("pw").set_database_name("shop")
...           .set_table_whitelist("public.orders").build())
>>> source.name
'orders-cdc'
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import SecretStr

from connectors.cdc_config import PostgresCdcConfig
from connectors.cdc_records import ChangeRecord, Operation, RecordPart
from processors.io.dbapi import close_quietly, connect, error_text
from jetspark_base.errors import DagValidationError
from processors.api.suppliers import ProcessorMetaSupplier, ProcessorSupplier

__all__ = ["PostgresCdcSources", "PostgresCdcBuilder", "PostgresCdcConfig", "stream_postgres_cdc_p", "CdcSinks",
           "ChangeRecord", "RecordPart", "Operation"]

_log = logging.getLogger("jetspark.cdc")


class PostgresCdcBuilder:
    """``PostgresCdcSources.postgres(name)``: Jet's setters in snake case, then ``build()``."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise DagValidationError(f"PostgresCdcSources.postgres(name): name must be a non-empty string, got "
                                     f"{name!r}")
        self._fields: dict[str, Any] = {"name": name}

    def _set(self, **kw: Any) -> "PostgresCdcBuilder":
        self._fields.update(kw)
        return self

    def set_database_address(self, host: str) -> "PostgresCdcBuilder":
        """The server's host."""
        return self._set(host=host)

    def set_database_port(self, port: int) -> "PostgresCdcBuilder":
        """The server's port (default 5432)."""
        return self._set(port=port)

    def set_database_user(self, user: str) -> "PostgresCdcBuilder":
        """The user (with the REPLICATION attribute or superuser)."""
        return self._set(user=user)

    def set_database_password(self, password: str) -> "PostgresCdcBuilder":
        """The user's password (kept as a secret: never printed)."""
        return self._set(password=SecretStr(password))

    def set_database_name(self, database: str) -> "PostgresCdcBuilder":
        """The database to capture."""
        return self._set(database=database)

    def set_schema_whitelist(self, *regexps: str) -> "PostgresCdcBuilder":
        """Capture only tables whose schema fully matches one of ``regexps``."""
        return self._set(schema_whitelist=tuple(regexps))

    def set_table_whitelist(self, *regexps: str) -> "PostgresCdcBuilder":
        """Capture only tables whose ``schema.table`` fully matches one of ``regexps``."""
        return self._set(table_whitelist=tuple(regexps))

    def set_replication_slot_name(self, name: str) -> "PostgresCdcBuilder":
        """The logical replication slot's name (default: ``jetspark_<name>``)."""
        return self._set(slot_name=name)

    def set_replication_slot_drop_on_stop(self, drop: bool) -> "PostgresCdcBuilder":
        """Drop the slot when the job ends (default False: it stays on the server)."""
        return self._set(drop_slot_on_stop=drop)

    def set_publication_name(self, name: str) -> "PostgresCdcBuilder":
        """The publication pgoutput reads (created ``FOR ALL TABLES`` when missing)."""
        return self._set(publication_name=name)

    def set_commit_period(self, period_ms: int) -> "PostgresCdcBuilder":
        """Without a processing guarantee, how often (ms) the slot is advanced to what was emitted."""
        return self._set(commit_period_ms=period_ms)

    def build(self) -> Any:
        """The pipeline stream source of ``ChangeRecord``s (native timestamps: commit time)."""
        from pipeline.connectors import StreamSource

        config = PostgresCdcConfig(**self._fields)

        def supplier(params: Any) -> ProcessorMetaSupplier:
            return stream_postgres_cdc_p(config, params)

        return StreamSource(config.name, supplier(None), supplier, native_timestamps=True,
                            accepts_timestamp_fn=True)


class PostgresCdcSources:
    """Jet's ``PostgresCdcSources``."""

    @staticmethod
    def postgres(name: str) -> PostgresCdcBuilder:
        """A builder of a PostgreSQL CDC source named ``name`` (its vertex name)."""
        return PostgresCdcBuilder(name)


def stream_postgres_cdc_p(config: PostgresCdcConfig, wm_gen_params: Any = None) -> ProcessorMetaSupplier:
    """The Core CDC source: one processor in the whole job emitting ``ChangeRecord``s (``JetEvent``s with
    watermarks when ``wm_gen_params`` is given). Build ``config`` with ``PostgresCdcSources.postgres(name)``'s
    setters or directly as a :class:`PostgresCdcConfig`."""
    from processors.io.text_streams import mark_stream_source

    return mark_stream_source(_CdcMeta(config, wm_gen_params))


class _CdcMeta(ProcessorMetaSupplier):
    """Checks ``wal_level`` at job start; drops the slot at job end when asked."""

    def __init__(self, config: PostgresCdcConfig, params: Any):
        from connectors.cdc_source import StreamPostgresCdcP

        factory = functools.partial(StreamPostgresCdcP, config, params)
        self._config = config
        self._inner = ProcessorMetaSupplier.force_total_parallelism_one(ProcessorSupplier.of(factory))

    def preferred_local_parallelism(self) -> int | None:
        return 1

    def init(self, context: Any) -> None:
        self._inner.init(context)
        check_wal_level(self._config, context.vertex_name)

    def get(self, member_indices: list[int]) -> Callable[[int], ProcessorSupplier]:
        return self._inner.get(member_indices)

    def close(self, error: BaseException | None) -> None:
        if self._config.drop_slot_on_stop:
            drop_slot(self._config)

    def __repr__(self) -> str:
        return f"stream_postgres_cdc_p({self._config.name!r})"


def check_wal_level(config: PostgresCdcConfig, vertex: str) -> None:
    """Refuse a server whose ``wal_level`` is not ``logical``, naming the setting."""
    what = f"postgres CDC source (vertex '{vertex}')"
    conn = connect(config.connection_fn(autocommit=True), what)
    try:
        level = conn.execute("show wal_level").fetchone()[0]
    finally:
        close_quietly(conn)
    if level != "logical":
        raise DagValidationError(
            f"{what}: server {config.server()} has wal_level={level}, but change data capture needs "
            "wal_level=logical; set wal_level = logical in postgresql.conf (or ALTER SYSTEM SET wal_level = "
            "logical) and restart the server")


def drop_slot(config: PostgresCdcConfig, timeout: float = 15.0) -> None:
    """Drop the source's slot if it exists (waiting, bounded, while a closing session still holds it)."""
    slot = config.slot()
    deadline = time.monotonic() + timeout
    try:
        conn = config.connection_fn(autocommit=True)()
    except Exception as exc:  # noqa: BLE001 - the job's own outcome matters more
        _log.warning("postgres CDC: cannot connect to %s to drop slot %s: %s", config.server(), slot,
                     type(exc).__name__)
        return
    try:
        while True:
            row = conn.execute("select active_pid from pg_replication_slots where slot_name = %s",
                               (slot,)).fetchone()
            if row is None:
                return
            if row[0] is None or time.monotonic() > deadline:
                conn.execute("select pg_drop_replication_slot(%s)", (slot,))
                _log.info("postgres CDC: dropped replication slot %s on %s", slot, config.server())
                return
            time.sleep(0.05)
    except Exception as exc:  # noqa: BLE001
        _log.warning("postgres CDC: dropping slot %s on %s failed: %s", slot, config.server(),
                     error_text(exc, config.connection_fn()))
    finally:
        close_quietly(conn)


# ============================================================================================= sinks
class CdcSinks:
    """Jet's ``CdcSinks``."""

    @staticmethod
    def map(name: str, key_fn: Callable[[ChangeRecord], Any], value_fn: Callable[[ChangeRecord], Any]) -> Any:
        """A sink keeping the driver map ``name`` equal to the captured tables: a ``DELETE`` removes
        ``key_fn(record)``, a ``TRUNCATE`` record removes every key its table put before it, any other record puts
        ``value_fn(record)``; a record older (by its sequence) than one already applied to its key, or than its
        table's last truncate, is ignored, so a replay never moves a key back in time. Vertex
        ``mapCdcSink(NAME)``."""
        from connectors.cdc_sink import cdc_map_sink

        return cdc_map_sink(name, key_fn, value_fn)
