"""The at-least-once batched JDBC sink processor of :func:`connectors.jdbc.write_jdbc_p`.

Items go in batches of up to ``batch_limit`` through ``executemany``, one transaction per batch. A batch that
fails because the connection was lost is retried on a new connection (logged; reconnecting gives up after
:data:`processors.io.dbapi.RECONNECT_TIMEOUT_S`), so the sink is at-least-once: use an insert-or-update statement.
Any other database error fails the job naming the vertex, the server and the database's message. The
exactly-once sink (:mod:`processors.io.jdbc_two_phase`) extends this processor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from processors.io.dbapi import (close_quietly, connect, connect_with_retry, describe_server, failure, is_connection_lost,
                           rollback_quietly)
from processors.api.processor import Processor

__all__ = ["WriteJdbcP", "with_cursor"]

_log = logging.getLogger("jetspark.jdbc")


class WriteJdbcP(Processor):
    """The at-least-once processor of :func:`write_jdbc_p`: ``executemany`` + ``commit`` per batch."""

    def __init__(self, update_query, new_connection_fn, bind_fn, batch_limit):
        self._query, self._connect, self._bind_fn, self._batch_limit = (update_query, new_connection_fn,
                                                                         bind_fn, batch_limit)
        self._conn: Any = None
        self._what = "write_jdbc_p"
        self._log = _log

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        self._what = f"write_jdbc_p (vertex '{context.vertex_name}')"
        self._log = context.logger  # forwarded to the driver's logging while the job runs
        self._conn = connect(self._connect, self._what)

    def _batches(self, inbox) -> Iterable[list]:
        bind, limit = self._bind_fn, self._batch_limit
        items = inbox.take_all()
        for start in range(0, len(items), limit):
            chunk = items[start:start + limit]
            yield [bind(item) for item in chunk] if bind else chunk

    def process(self, ordinal: int, inbox) -> None:
        for batch in self._batches(inbox):
            self._write(batch)

    def _write(self, batch: list) -> None:
        """One transaction; after a lost connection, a new connection and the same batch again."""
        while True:
            try:
                with_cursor(self._conn, lambda cur: cur.executemany(self._query, batch))
                self._conn.commit()
                return
            except Exception as exc:  # noqa: BLE001 - classified
                if not is_connection_lost(exc):
                    rollback_quietly(self._conn)
                    raise failure(f"{self._what}: writing a batch of {len(batch)}", self._connect, exc,
                                  self._conn) from None
                self._log.warning("%s: connection to %s lost while writing a batch of %d (%s); reconnecting and "
                                  "retrying the batch", self._what, describe_server(self._connect, self._conn),
                                  len(batch), type(exc).__name__)
                close_quietly(self._conn)
                self._conn = None  # close() has nothing to close if reconnecting fails
                self._conn = connect_with_retry(self._connect, self._what, self._log)

    def close(self) -> None:
        rollback_quietly(self._conn)
        close_quietly(self._conn)
        self._conn = None


def with_cursor(connection: Any, action: Callable[[Any], Any]) -> Any:
    """Run ``action(cursor)`` on a new cursor of ``connection`` and close the cursor."""
    cursor = connection.cursor()
    try:
        return action(cursor)
    finally:
        close_quietly(cursor)
