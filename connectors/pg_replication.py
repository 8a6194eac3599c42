"""A logical replication stream over PostgreSQL's streaming replication protocol, on psycopg's libpq layer
(psycopg 3 has no replication API of its own, but its ``pgconn`` exposes libpq's copy functions).

``START_REPLICATION SLOT s LOGICAL <lsn> (proto_version '1', publication_names 'p')`` on a connection opened
with ``replication=database`` turns it into a COPY BOTH stream: the server sends ``w`` (XLogData: a pgoutput
message) and ``k`` (keepalive) frames; the client sends ``r`` (standby status: the LSN up to which the server may
discard the log). :meth:`ReplicationStream.read` returns the pgoutput messages that arrived, waiting at most
``timeout`` s for the first; :meth:`confirm` reports a new flush position (the CDC source calls it only for
positions of completed snapshots) and a status goes out at least every :data:`STATUS_INTERVAL_S` and whenever
the server asks. The server streams only transactions that commit after the start LSN, whole and in commit
order, without re-decoding what it sent before (unlike polling ``pg_logical_slot_peek_changes``).

>>> format_lsn(parse_lsn("16/B374D848"))
'16/B374D848'
"""

from __future__ import annotations

import select
import struct
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ReplicationStream", "parse_lsn", "format_lsn", "quote_ident", "STATUS_INTERVAL_S"]

STATUS_INTERVAL_S = 5.0
"""The longest time between two standby status messages (the server's ``wal_sender_timeout`` is 60 s)."""
_PG_EPOCH_S = 946_684_800


def parse_lsn(text: str) -> int:
    """``'0/1925548'`` -> an int."""
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


def format_lsn(lsn: int) -> str:
    """An int -> ``'0/1925548'``."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def quote_ident(name: str) -> str:
    """``name`` as an SQL identifier in double quotes."""
    return '"' + name.replace('"', '""') + '"'


class ReplicationStream:
    """One ``START_REPLICATION`` stream (see the module docstring); ``connect`` opens a replication connection."""

    def __init__(self, connect: Callable[[], Any], slot: str, publication: str, start_lsn: int, confirmed: int):
        import psycopg

        self._errors = psycopg
        self.conn = connect()
        self._pg = self.conn.pgconn
        self.confirmed = confirmed
        self._received = start_lsn
        self._next_status = 0.0
        command = (f"START_REPLICATION SLOT {quote_ident(slot)} LOGICAL {format_lsn(start_lsn)} "
                   f"(proto_version '1', publication_names '{publication.replace(chr(39), chr(39) * 2)}')")
        result = self._pg.exec_(command.encode())
        if result.status != psycopg.pq.ExecStatus.COPY_BOTH:
            message = (result.error_message or b"").decode(errors="replace").strip()
            sqlstate = result.error_field(psycopg.pq.DiagnosticField.SQLSTATE)
            self.close()
            error = psycopg.OperationalError if sqlstate is None else psycopg.errors.lookup(sqlstate.decode())
            raise error(f"START_REPLICATION of slot {slot} failed: {message}")

    def read(self, timeout: float) -> list[bytes]:
        """The pgoutput messages available now, waiting up to ``timeout`` s for the first one."""
        out: list[bytes] = []
        waited = False
        while True:
            nbytes, data = self._pg.get_copy_data(1)
            if nbytes == 0:
                if out or waited:
                    break
                waited = True
                select.select([self._pg.socket], [], [], timeout)
                self._pg.consume_input()
                continue
            if nbytes == -1:
                raise self._errors.OperationalError("the server ended the replication stream")
            kind = data[0]
            if kind == 0x77:  # 'w': XLogData
                (start, _end, _time) = struct.unpack_from(">qqq", data, 1)
                self._received = max(self._received, start)
                out.append(bytes(data[25:]))
            elif kind == 0x6B and data[17]:  # 'k' keepalive asking for a reply
                self._next_status = 0.0
        if time.monotonic() >= self._next_status:
            self._send_status()
        return out

    def confirm(self, lsn: int) -> None:
        """The server may discard the log before ``lsn`` (sent at once; never moves backwards)."""
        if lsn > self.confirmed:
            self.confirmed = lsn
            self._send_status()

    def _send_status(self) -> None:
        now_us = int((time.time() - _PG_EPOCH_S) * 1_000_000)
        lsn = self.confirmed
        self._pg.put_copy_data(b"r" + struct.pack(">qqqqb", lsn, lsn, lsn, now_us, 0))
        self._pg.flush()
        self._next_status = time.monotonic() + STATUS_INTERVAL_S

    def close(self) -> None:
        """Close the replication connection (the server ends the stream); never raises."""
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - it is being thrown away
            pass
