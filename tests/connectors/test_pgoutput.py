"""``connectors.pgoutput``'s decoder, engine-free: hand-built messages (a ``TRUNCATE`` of two relations among row
changes), and what the private PostgreSQL server's own ``pgoutput`` plugin sends for a ``TRUNCATE`` (read with
``pg_logical_slot_peek_binary_changes``, no replication connection), with a publication that publishes
truncates and one that does not."""

from __future__ import annotations

import struct

from connectors.pgoutput import Decoder
from tests.support import unique


def _string(text: str) -> bytes:
    return text.encode() + b"\0"


def _relation(relid: int, table: str) -> bytes:
    columns = [(1, "id", 23), (0, "name", 25)]  # (key flag, name, type oid: int4, text)
    body = b"".join(struct.pack(">b", flags) + _string(name) + struct.pack(">Ii", oid, -1)
                    for flags, name, oid in columns)
    return b"R" + struct.pack(">I", relid) + _string("public") + _string(table) + b"d" + struct.pack(">h", 2) + body


def _insert(relid: int, key: int, name: str) -> bytes:
    values = [str(key).encode(), name.encode()]
    return (b"I" + struct.pack(">I", relid) + b"N" + struct.pack(">h", 2)
            + b"".join(b"t" + struct.pack(">i", len(v)) + v for v in values))


def _begin(micros: int) -> bytes:
    return b"B" + struct.pack(">qqi", 0, micros, 7)


def _commit(end_lsn: int) -> bytes:
    return b"C" + struct.pack(">bqqq", 0, end_lsn - 8, end_lsn, 0)


def _loader(oid: int, data: bytes):
    return int(data) if oid == 23 else data.decode()


def test_decoder_when_truncate_of_two_relations_then_one_change_each_in_place():
    decoder = Decoder(_loader)
    truncate = b"T" + struct.pack(">ib", 2, 1) + struct.pack(">II", 16385, 16390)  # CASCADE
    for message in [_begin(1_000_000), _relation(16385, "a"), _insert(16385, 1, "x"), _relation(16390, "b"),
                    truncate, _insert(16385, 2, "y"), _commit(500)]:
        decoder.feed(message)
    [(end_lsn, commit_ms, changes)] = decoder.committed
    assert (end_lsn, commit_ms) == (500, 946_684_801_000)
    assert [(c.kind, c.relation.table, c.new, c.old) for c in changes] == [
        ("I", "a", {"id": 1, "name": "x"}, None), ("T", "a", None, None), ("T", "b", None, None),
        ("I", "a", {"id": 2, "name": "y"}, None)]


def _server_changes(postgres, publish: str | None) -> tuple[str, list]:
    """Insert, ``TRUNCATE`` two published tables and an unpublished one in one statement, insert again; decode what
    the server's pgoutput sends for a publication of the two (``publish``: None for the default)."""
    name = unique("t").replace("-", "_")
    a, b, other, slot, pub = f"{name}_a", f"{name}_b", f"{name}_other", f"s_{name}"[:63], f"p_{name}"
    for table in (a, b, other):
        postgres.query(f"create table {table} (id int primary key, name text)")
    with_publish = f" with (publish = '{publish}')" if publish else ""
    postgres.query(f"create publication {pub} for table {a}, {b}{with_publish}")
    postgres.query("select pg_create_logical_replication_slot(%s, 'pgoutput')", (slot,))
    try:
        postgres.query(f"insert into {a} values (1, 'x')")
        postgres.query(f"truncate {a}, {b}, {other}")
        postgres.query(f"insert into {a} values (2, 'y')")
        rows = postgres.query("select data from pg_logical_slot_peek_binary_changes(%s, null, null, "
                              "'proto_version', '1', 'publication_names', %s)", (slot, pub))
    finally:
        postgres.query("select pg_drop_replication_slot(%s)", (slot,))
        postgres.query(f"drop publication {pub}")
    decoder = Decoder(_loader)
    for (data,) in rows:
        decoder.feed(bytes(data))
    return name, decoder.committed


def test_decoder_when_server_truncates_published_tables_then_a_change_per_published_table(postgres):
    name, committed = _server_changes(postgres, None)
    assert [[(c.kind, c.relation.table) for c in changes] for _lsn, _ms, changes in committed] == [
        [("I", f"{name}_a")], [("T", f"{name}_a"), ("T", f"{name}_b")], [("I", f"{name}_a")]]
    lsns = [lsn for lsn, _ms, _changes in committed]
    assert lsns == sorted(lsns) and len(set(lsns)) == 3
    assert committed[1][2][0].relation.key_columns == ("id",)
    postgres.wait_no_leaks()


def test_decoder_when_publication_omits_truncate_then_server_sends_none(postgres):
    name, committed = _server_changes(postgres, "insert, update, delete")
    assert [[(c.kind, c.relation.table) for c in changes] for _lsn, _ms, changes in committed] == [
        [("I", f"{name}_a")], [("I", f"{name}_a")]]
    postgres.wait_no_leaks()
