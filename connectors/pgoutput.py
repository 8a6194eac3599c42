"""A decoder of PostgreSQL's built-in ``pgoutput`` logical decoding messages (protocol version 1), as
the replication stream (or ``pg_logical_slot_peek_binary_changes``) delivers them, big-endian binary.

Only what change data capture needs is decoded: ``B`` (begin: commit time), ``R`` (relation: schema, table,
columns with their type oids and which form the key), ``I``/``U``/``D`` (a row's new and old tuples, columns in
text form), ``T`` (truncate: the relations one ``TRUNCATE`` emptied, each sent as an ``R`` before it; it
becomes one ``Change`` of kind ``"T"`` per relation, without rows) and ``C`` (commit: the transaction's end
LSN). Type, origin and logical messages are skipped.
Column text is turned into Python values by ``load(type_oid, text)`` (psycopg's text loaders in
:mod:`connectors.cdc_source`); an unchanged TOASTed value (``u``) is left out of the row.

>>> d = Decoder(lambda oid, b: b.decode())
>>> d.feed(b"B" + (1).to_bytes(8, "big") + (0).to_bytes(8, "big") + (5).to_bytes(4, "big"))
>>> d.begin_ms
946684800000
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Decoder", "Change", "Relation", "PG_EPOCH_MS"]

PG_EPOCH_MS = 946_684_800_000
"""2000-01-01 (PostgreSQL's epoch) in Unix epoch ms."""


@dataclass(frozen=True)
class Relation:
    """A table as ``R`` describes it."""

    schema: str
    table: str
    columns: tuple[str, ...]
    type_oids: tuple[int, ...]
    key_columns: tuple[str, ...]


@dataclass
class Change:
    """One change of a committed transaction: ``kind`` ``"I"``, ``"U"`` or ``"D"`` (a row), or ``"T"`` (the
    relation was truncated; ``new`` and ``old`` are None)."""

    kind: str
    relation: Relation
    new: dict[str, Any] | None
    old: dict[str, Any] | None


@dataclass
class Decoder:
    """Feed it a transaction's messages in order; after ``C``, :attr:`committed` holds ``(end_lsn, commit_ms,
    changes)`` of each completed transaction (the caller takes them)."""

    load: Callable[[int, bytes], Any]
    relations: dict[int, Relation] = field(default_factory=dict)
    begin_ms: int = 0
    changes: list[Change] = field(default_factory=list)
    committed: list[tuple[int, int, list[Change]]] = field(default_factory=list)

    def feed(self, message: bytes) -> None:
        """Decode one message."""
        kind = message[:1]
        if kind == b"B":
            (_final_lsn, micros, _xid) = struct.unpack_from(">qqi", message, 1)
            self.begin_ms = PG_EPOCH_MS + micros // 1000
            self.changes = []
        elif kind == b"C":
            (_flags, _commit_lsn, end_lsn, _micros) = struct.unpack_from(">bqqq", message, 1)
            self.committed.append((end_lsn, self.begin_ms, self.changes))
            self.changes = []
        elif kind == b"R":
            self._relation(message)
        elif kind in (b"I", b"U", b"D"):
            self._change(kind.decode(), message)
        elif kind == b"T":
            self._truncate(message)
        # Y (type), O (origin), M (logical message): not changes of a table

    def _relation(self, m: bytes) -> None:
        (relid,) = struct.unpack_from(">I", m, 1)
        pos = 5
        schema, pos = _string(m, pos)
        table, pos = _string(m, pos)
        pos += 1  # replica identity setting
        (count,) = struct.unpack_from(">h", m, pos)
        pos += 2
        columns, oids, keys = [], [], []
        for _ in range(count):
            flags = m[pos]
            name, pos = _string(m, pos + 1)
            (oid, _typmod) = struct.unpack_from(">Ii", m, pos)
            pos += 8
            columns.append(name)
            oids.append(oid)
            if flags & 1:
                keys.append(name)
        self.relations[relid] = Relation(schema, table, tuple(columns), tuple(oids), tuple(keys))

    def _change(self, kind: str, m: bytes) -> None:
        (relid,) = struct.unpack_from(">I", m, 1)
        relation = self.relations[relid]
        pos, new, old = 5, None, None
        while pos < len(m):
            marker = m[pos:pos + 1]
            row, pos = self._tuple(relation, m, pos + 1, key_only=marker == b"K")
            if marker == b"N":
                new = row
            else:  # K (old key) or O (old row)
                old = row
        self.changes.append(Change(kind, relation, new, old))

    def _truncate(self, m: bytes) -> None:
        """``T``: Int32 relation count, Int8 options (CASCADE, RESTART IDENTITY), then the relation ids (protocol
        version 1 sends no transaction id here: that is only for streamed transactions)."""
        (count, _options) = struct.unpack_from(">ib", m, 1)
        for relid in struct.unpack_from(f">{count}I", m, 6):
            self.changes.append(Change("T", self.relations[relid], None, None))

    def _tuple(self, relation: Relation, m: bytes, pos: int, key_only: bool) -> tuple[dict, int]:
        (count,) = struct.unpack_from(">h", m, pos)
        pos += 2
        row: dict[str, Any] = {}
        for i in range(count):
            kind = m[pos:pos + 1]
            pos += 1
            name = relation.columns[i]
            if kind == b"t":
                (length,) = struct.unpack_from(">i", m, pos)
                pos += 4
                row[name] = self.load(relation.type_oids[i], m[pos:pos + length])
                pos += length
            elif kind == b"n" and not (key_only and name not in relation.key_columns):
                row[name] = None
            # u: an unchanged TOASTed value, not sent
        return row, pos


def _string(m: bytes, pos: int) -> tuple[str, int]:
    end = m.index(b"\0", pos)
    return m[pos:end].decode(), end + 1
