"""The records of change data capture: :class:`ChangeRecord`, :class:`RecordPart` and :class:`Operation` (Jet's
``com.hazelcast.jet.cdc`` types, methods in snake case), engine- and driver-free.

A record says what happened (``operation()``), where (``database()``, ``schema()``, ``table()``), when
(``timestamp()``: the commit time in epoch ms; for ``SYNC`` records the time the snapshot was read) and in
which order: ``(sequence_source(), sequence_value())`` grows with every change of a key. jetspark's PostgreSQL
source sets ``sequence_source`` to the end LSN of the change's transaction (for ``SYNC`` records, the
replication slot's consistent point, which every streamed transaction ends after) and ``sequence_value`` to the
change's position in its transaction (1, 2, ...; 0 for ``SYNC``), so changes compare in commit order.

``key()`` holds the row's primary-key columns, ``value()`` the new row (for ``DELETE`` the old one, as far as
the server logs it: its key columns unless the table has ``REPLICA IDENTITY FULL``). Records pickle, compare
by value, and print as JSON.

A ``TRUNCATE`` is reported too, as one record per truncated table: ``operation()`` is ``Operation.UNSPECIFIED``
(Jet's enum has no member for it; the contract gives it ``UNSPECIFIED``), :meth:`ChangeRecord.is_truncate` is
True, ``key()`` and ``value()`` are empty parts (no row: the whole table emptied), ``to_json()`` says
``"truncate": true``, and ``timestamp()`` and the sequence are those of its transaction and its place in it,
like every other change. A truncate record is built with ``truncate=True``:

>>> t = ChangeRecord(Operation.UNSPECIFIED, "shop", "public", "orders", 1700000000000, 30, 1, {}, {},
...                  truncate=True)
>>> t.is_truncate(), t.key().to_map(), '"truncate": true' in t.to_json()
(True, {}, True)

>>> r = ChangeRecord(Operation.INSERT, "shop", "public", "orders", 1700000000000, 25, 1,
...                  {"id": 7}, {"id": 7, "customer": "ann", "amount": 12})
>>> r.key().to_map(), r.value().to_map()["customer"], r.operation()
({'id': 7}, 'ann', <Operation.INSERT: 'c'>)
>>> r.to_json()[:45]
'{"operation": "INSERT", "database": "shop", "'
"""

from __future__ import annotations

import enum
import json
from typing import Any

__all__ = ["Operation", "RecordPart", "ChangeRecord"]


class Operation(enum.Enum):
    """What a record reports (Jet's ``Operation``, with Debezium's codes as values)."""

    UNSPECIFIED = ""
    SYNC = "r"
    INSERT = "c"
    UPDATE = "u"
    DELETE = "d"


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


class RecordPart:
    """A row image: column name -> Python value (``to_map``), an object (``to_object(cls)``) or JSON."""

    __slots__ = ("_columns",)

    def __init__(self, columns: dict[str, Any]):
        self._columns = dict(columns)

    def to_map(self) -> dict[str, Any]:
        """A copy of the columns as a dict."""
        return dict(self._columns)

    def to_object(self, cls: type) -> Any:
        """``cls(**to_map())``, e.g. a dataclass or a pydantic model with the columns as fields."""
        return cls(**self._columns)

    def to_json(self) -> str:
        """The columns as a JSON object (values JSON has no type for, such as decimals, as strings)."""
        return _json(self._columns)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecordPart) and other._columns == self._columns

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._columns)))

    def __getstate__(self) -> dict:
        return {"columns": self._columns}

    def __setstate__(self, state: dict) -> None:
        self._columns = state["columns"]

    def __repr__(self) -> str:
        return f"RecordPart({self._columns!r})"


class ChangeRecord:
    """One row event of a CDC source (see the module docstring)."""

    __slots__ = ("_operation", "_database", "_schema", "_table", "_timestamp", "_source", "_sequence", "_key",
                 "_value", "_truncate")

    def __init__(self, operation: Operation, database: str, schema: str, table: str, timestamp: int,
                 sequence_source: int, sequence_value: int, key: dict[str, Any], value: dict[str, Any], *,
                 truncate: bool = False):
        if truncate and (operation is not Operation.UNSPECIFIED or key or value):
            raise ValueError(f"a TRUNCATE record of {schema}.{table} has operation UNSPECIFIED and no key or value, "
                             f"got {operation.name}, key {key!r}, value {value!r}")
        self._operation, self._database, self._schema, self._table = operation, database, schema, table
        self._timestamp, self._source, self._sequence = timestamp, sequence_source, sequence_value
        self._key, self._value = RecordPart(key), RecordPart(value)
        self._truncate = truncate

    def operation(self) -> Operation:
        """``SYNC``, ``INSERT``, ``UPDATE`` or ``DELETE``; ``UNSPECIFIED`` for a ``TRUNCATE``."""
        return self._operation

    def is_truncate(self) -> bool:
        """True if the record reports a ``TRUNCATE`` of its table (every row removed; no key, no value)."""
        return self._truncate

    def database(self) -> str:
        """The database's name."""
        return self._database

    def schema(self) -> str:
        """The table's schema."""
        return self._schema

    def table(self) -> str:
        """The table's name (without schema)."""
        return self._table

    def timestamp(self) -> int:
        """Commit time, epoch ms (``SYNC``: when the snapshot was read)."""
        return self._timestamp

    def sequence_source(self) -> int:
        """The first half of the record's order: the end LSN of its transaction (``SYNC``: the slot's start)."""
        return self._source

    def sequence_value(self) -> int:
        """The second half: the change's position in its transaction (``SYNC``: 0)."""
        return self._sequence

    def key(self) -> RecordPart:
        """The primary-key columns (empty for a ``TRUNCATE``)."""
        return self._key

    def value(self) -> RecordPart:
        """The new row; for ``DELETE`` the old one (its key columns unless ``REPLICA IDENTITY FULL``); empty for a
        ``TRUNCATE``."""
        return self._value

    def to_json(self) -> str:
        """The whole record as one JSON object (a ``TRUNCATE``'s with ``"truncate": true``)."""
        fields = {"operation": self._operation.name, "database": self._database, "schema": self._schema,
                  "table": self._table, "timestamp": self._timestamp, "sequence": [self._source, self._sequence],
                  "key": self._key.to_map(), "value": self._value.to_map()}
        if self._truncate:
            fields["truncate"] = True
        return _json(fields)

    def _fields(self) -> tuple:
        return (self._operation, self._database, self._schema, self._table, self._timestamp, self._source,
                self._sequence, self._key, self._value, self._truncate)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChangeRecord) and other._fields() == self._fields()

    def __hash__(self) -> int:
        return hash((self._operation, self._schema, self._table, self._source, self._sequence))

    def __reduce__(self):
        return (_rebuild, (self._operation, self._database, self._schema, self._table, self._timestamp,
                           self._source, self._sequence, self._key.to_map(), self._value.to_map(), self._truncate))

    def __repr__(self) -> str:
        what = "TRUNCATE" if self._truncate else self._operation.name
        return (f"ChangeRecord({what} {self._schema}.{self._table} key={self._key.to_map()} "
                f"seq=({self._source}, {self._sequence}))")


def _rebuild(*fields: Any) -> ChangeRecord:
    *plain, truncate = fields
    return ChangeRecord(*plain, truncate=truncate)
