"""JDBC over DB-API 2.0: ``read_jdbc_p`` (a batch source) and ``write_jdbc_p`` (a batched sink, exactly-once
with two-phase commit). Any DB-API driver serves; this module imports none (psycopg in tests and examples).

**Source.** ``read_jdbc_p(new_connection_fn, result_set_fn)`` runs in every processor: each opens its own
connection and emits the rows of ``result_set_fn(connection, parallelism, index)`` (its share, e.g.
``WHERE id % parallelism = index``). ``read_jdbc_p(new_connection_fn, "SELECT ...")`` runs the query once, in
one processor of the whole job. Rows are fetched ``fetch_size`` at a time with ``fetchmany`` and emitted as the
outbox takes them, so memory stays flat on any table: for the query form the cursor is a server-side one when
the driver has named cursors (``connection.cursor(name=...)``, psycopg), so the server, not the client, holds
the result. Items are ``create_output_fn(row)`` (default: the row as a tuple).

**Sink.** ``write_jdbc_p(update_query, new_connection_fn)`` binds each item with ``bind_fn(item)`` (default:
the item) and writes batches of up to ``batch_limit`` items with ``executemany``, one transaction per batch
(:class:`processors.io.jdbc_batch_sink.WriteJdbcP`).
A connection lost on the way (DB-API ``OperationalError``/``InterfaceError``, e.g. the server restarted) is
replaced and the batch retried, each retry logged, for at most :data:`processors.io.dbapi.RECONNECT_TIMEOUT_S`; a
batch may thus be written twice (at-least-once: use an insert-or-update statement). Any other error (missing
table, broken SQL) fails the job at once with a :class:`~processors.io.dbapi.DatabaseError` naming the vertex, the
server and the database's message; so does a first connection that fails (wrong password, no server).

**Exactly-once.** ``exactly_once=True`` in a job whose guarantee is ``EXACTLY_ONCE`` switches to
:class:`processors.io.jdbc_two_phase.TwoPhaseJdbcSinkP` (one DB-API two-phase transaction per processor and
snapshot); under any other guarantee the flag changes nothing, as in Jet.

>>> dag.new_vertex("jdbcSink", write_jdbc_p("INSERT INTO t VALUES (%s, %s) ON CONFLICT (k) DO UPDATE "
...                                        "SET v = excluded.v", connect))                  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import itertools
import logging
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from processors.io.dbapi import DatabaseError, close_quietly, connect, failure, masked, rollback_quietly
from processors.io.jdbc_batch_sink import WriteJdbcP
from processors.io.jdbc_two_phase import TwoPhaseJdbcSinkP, check_two_phase_support, roll_back_leftovers, xid_prefix
from jetspark_base.errors import DagValidationError
from processors.api.processor import Processor
from processors.api.suppliers import ProcessorMetaSupplier, ProcessorSupplier

__all__ = ["read_jdbc_p", "write_jdbc_p", "DatabaseError"]

_log = logging.getLogger("jetspark.jdbc")
FETCH_SIZE = 1024
"""Rows fetched per ``fetchmany`` call by ``read_jdbc_p`` (its ``fetch_size`` default)."""


def _require_callable(owner: str, name: str, value: Any, optional: bool = False) -> None:
    if (value is None and optional) or callable(value):
        return
    raise DagValidationError(f"{owner}: {name} must be a function, got {value!r}")


def _require_positive(owner: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DagValidationError(f"{owner}: {name} must be an int >= 1, got {value!r}")


# ======================================================================================== source
def read_jdbc_p(
    new_connection_fn: Callable[[], Any],
    result_set_fn: Callable[[Any, int, int], Iterable[Any]] | str,
    create_output_fn: Callable[[Any], Any] | None = None,
    *,
    fetch_size: int = FETCH_SIZE,
) -> ProcessorMetaSupplier:
    """A batch source of database rows (see the module docstring).

    ``result_set_fn(connection, parallelism, index)`` gives each processor its share (an iterable of rows, e.g.
    a cursor after ``execute``); an SQL string instead runs once in one processor of the job, through a
    server-side cursor where the driver has one. ``fetch_size`` rows are fetched at a time.

    >>> read_jdbc_p(connect, lambda conn, n, i: conn.execute(
    ...     "SELECT id, name FROM person WHERE id %% %s = %s", (n, i)))                          # doctest: +SKIP
    """
    _require_callable("read_jdbc_p", "new_connection_fn", new_connection_fn)
    _require_callable("read_jdbc_p", "create_output_fn", create_output_fn, optional=True)
    _require_positive("read_jdbc_p", "fetch_size", fetch_size)
    new_connection_fn = masked(new_connection_fn)
    if isinstance(result_set_fn, str):
        factory = functools.partial(ReadJdbcP, new_connection_fn, None, result_set_fn, create_output_fn, fetch_size)
        return ProcessorMetaSupplier.force_total_parallelism_one(ProcessorSupplier.of(factory))
    _require_callable("read_jdbc_p", "result_set_fn", result_set_fn)
    factory = functools.partial(ReadJdbcP, new_connection_fn, result_set_fn, None, create_output_fn, fetch_size)
    return ProcessorMetaSupplier.of(ProcessorSupplier.of(factory))


_cursor_ids = itertools.count()


def _server_side_cursor(connection: Any, name: str) -> Any:
    """A named (server-side) cursor when the driver has them, else a plain one."""
    try:
        return connection.cursor(name=name)
    except TypeError:
        return connection.cursor()


class ReadJdbcP(Processor):
    """The processor of :func:`read_jdbc_p`: fetches ``fetch_size`` rows at a time, emits them as they fit."""

    def __init__(self, new_connection_fn, result_set_fn, query, create_output_fn, fetch_size):
        self._connect, self._result_set_fn, self._query = new_connection_fn, result_set_fn, query
        self._create_output_fn, self._fetch_size = create_output_fn, fetch_size
        self._outbox: Any = None
        self._conn: Any = None
        self._cursor: Any = None
        self._rows: Any = None  # fetch function returning the next chunk (empty at the end)
        self._pending: list = []
        self._pos = 0
        self._what = "read_jdbc_p"

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        self._outbox = outbox
        self._what = f"read_jdbc_p (vertex '{context.vertex_name}')"
        self._total, self._index = context.total_parallelism, context.global_processor_index

    def _open(self) -> None:
        self._conn = connect(self._connect, self._what)
        try:
            if self._query is not None:
                self._cursor = _server_side_cursor(self._conn, f"jetspark_read_{next(_cursor_ids)}")
                self._cursor.execute(self._query)
                rows = self._cursor
            else:
                rows = self._result_set_fn(self._conn, self._total, self._index)
        except Exception as exc:  # noqa: BLE001
            raise failure(f"{self._what}: running the query", self._connect, exc, self._conn) from None
        if hasattr(rows, "fetchmany"):
            self._rows = functools.partial(rows.fetchmany, self._fetch_size)
        else:
            iterator = iter(rows)
            self._rows = lambda: list(itertools.islice(iterator, self._fetch_size))

    def complete(self) -> bool:
        if self._rows is None:
            self._open()
        offer_many = self._outbox.offer_many
        while True:
            pos = offer_many(self._pending, self._pos)
            if pos < len(self._pending):
                self._pos = pos
                return False
            try:
                rows = self._rows()
            except Exception as exc:  # noqa: BLE001
                raise failure(f"{self._what}: fetching rows", self._connect, exc, self._conn) from None
            if not rows:
                self._finish()
                return True
            make = self._create_output_fn
            self._pending = [make(r) for r in rows] if make else [tuple(r) for r in rows]
            self._pos = 0

    def _finish(self) -> None:
        close_quietly(self._cursor)
        rollback_quietly(self._conn)  # a read-only transaction: nothing to keep
        close_quietly(self._conn)
        self._cursor = self._conn = None

    def close(self) -> None:
        self._finish()


# ======================================================================================== sink
def write_jdbc_p(
    update_query: str,
    new_connection_fn: Callable[[], Any],
    bind_fn: Callable[[Any], Any] | None = None,
    exactly_once: bool = False,
    batch_limit: int = 50,
) -> ProcessorMetaSupplier:
    """A sink running ``update_query`` for every item, batched (see the module docstring).

    >>> write_jdbc_p("INSERT INTO person VALUES (%s, %s)", connect,
    ...              bind_fn=lambda p: (p.id, p.name), exactly_once=True)                      # doctest: +SKIP
    """
    if not isinstance(update_query, str) or not update_query.strip():
        raise DagValidationError(f"write_jdbc_p: update_query must be an SQL statement, got {update_query!r}")
    _require_callable("write_jdbc_p", "new_connection_fn", new_connection_fn)
    _require_callable("write_jdbc_p", "bind_fn", bind_fn, optional=True)
    if not isinstance(exactly_once, bool):
        raise DagValidationError(f"write_jdbc_p: exactly_once must be True or False, got {exactly_once!r}")
    _require_positive("write_jdbc_p", "batch_limit", batch_limit)
    return _WriteJdbcMeta(update_query, masked(new_connection_fn), bind_fn, exactly_once, batch_limit)


class _WriteJdbcMeta(ProcessorMetaSupplier):
    """``write_jdbc_p``'s meta supplier: picks the processor from the job's guarantee; for the two-phase one
    it checks the driver's ``tpc_*`` methods at job start and rolls back what the job left prepared at its end."""

    def __init__(self, update_query, new_connection_fn, bind_fn, exactly_once, batch_limit):
        self._args = (update_query, new_connection_fn, bind_fn, batch_limit)
        self._exactly_once = exactly_once
        self._token = uuid.uuid4().hex[:12]  # tells this sink's transactions from other jobs' (with the job id)
        self._prefix: str | None = None  # set in init() when the two-phase processor runs

    def init(self, context: Any) -> None:
        guarantee = context.processing_guarantee
        if self._exactly_once and getattr(guarantee, "value", guarantee) == "EXACTLY_ONCE":

            check_two_phase_support(self._args[1], context.vertex_name)
            self._prefix = xid_prefix(self._token, context.job_id)

    def get(self, member_indices: list[int]) -> Callable[[int], ProcessorSupplier]:
        if self._prefix is None:
            supplier = ProcessorSupplier.of(functools.partial(WriteJdbcP, *self._args))
        else:

            supplier = ProcessorSupplier.of(functools.partial(TwoPhaseJdbcSinkP, *self._args, self._prefix))
        return lambda member: supplier

    def close(self, error: BaseException | None) -> None:
        if self._prefix is not None:

            roll_back_leftovers(self._args[1], self._prefix)

    def __repr__(self) -> str:
        return f"write_jdbc_p({self._args[0]!r}, exactly_once={self._exactly_once})"
