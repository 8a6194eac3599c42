"""``CdcSinks.map(name, key_fn, value_fn)``: change records applied to a driver map (Jet's ``CdcSinks.map``).

Each processor turns a record into ``(table, key, sequence, action, value)`` (``table`` is ``(database, schema,
table)``) and sends its batch to the driver (topic ``sink.map.apply`` of :mod:`processors.io.driver_protocol`),
which applies it under a lock (:class:`dag.runtime.common.driver_topics.MapMirror`): a ``DELETE`` removes the
key, a ``TRUNCATE`` record (``is_truncate()``) removes every key its table put before it (the map may mirror
several tables: the driver remembers which table put each key), anything else puts the value. A record whose
``(sequence_source, sequence_value)`` is not newer than the last one applied to its key, or than its table's
last truncate, is ignored. That makes the sink idempotent and order-safe: records of one key may reach
different processors, and a restarted job's replay changes nothing already applied (a row inserted before a
truncate cannot come back), so the map ends equal to the table under any processing guarantee. ``key_fn`` and
``value_fn`` never see a truncate record. It runs in PIPELINED jobs (CDC sources are streams).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from connectors.cdc_records import ChangeRecord, Operation
from jetspark_base.errors import DagValidationError
from processors.io import driver_protocol as topics
from processors.api.processor import Processor
from processors.api.suppliers import ProcessorMetaSupplier, ProcessorSupplier

__all__ = ["cdc_map_sink", "CdcMapSinkP"]


def cdc_map_sink(name: str, key_fn: Callable[[ChangeRecord], Any], value_fn: Callable[[ChangeRecord], Any]) -> Any:
    """The pipeline ``Sink`` of ``CdcSinks.map`` (vertex ``mapCdcSink(NAME)``)."""
    from pipeline.connectors import Sink

    if not isinstance(name, str) or not name:
        raise DagValidationError(f"CdcSinks.map: name must be a non-empty string, got {name!r}")
    for label, fn in (("key_fn", key_fn), ("value_fn", value_fn)):
        if not callable(fn):
            raise DagValidationError(f"CdcSinks.map: {label} must be a function, got {fn!r}")
    supplier = ProcessorSupplier.of(lambda: CdcMapSinkP(name, key_fn, value_fn))
    return Sink(f"mapCdcSink({name})", ProcessorMetaSupplier.of(supplier, preferred_local_parallelism=1))


class CdcMapSinkP(Processor):
    """Sends ``(table, key, sequence, action, value)`` per record to the driver; ``complete()`` waits until
    stored."""

    def __init__(self, name: str, key_fn: Callable, value_fn: Callable):
        self._name, self._key_fn, self._value_fn = name, key_fn, value_fn
        self._driver: Any = None

    def is_cooperative(self) -> bool:
        return False  # sending may block on the socket

    def init(self, outbox, context) -> None:
        self._vertex = context.vertex_name
        self._driver = topics.require_driver(context, f"CdcSinks.map({self._name!r})")

    def process(self, ordinal: int, inbox) -> None:
        items = []
        for record in inbox.take_all():
            if not isinstance(record, ChangeRecord):
                raise DagValidationError(f"vertex '{self._vertex}': CdcSinks.map({self._name!r}) takes "
                                         f"ChangeRecord items, got {type(record).__name__}: {record!r:.80}")
            table = (record.database(), record.schema(), record.table())
            sequence = (record.sequence_source(), record.sequence_value())
            if record.is_truncate():
                items.append((table, None, sequence, topics.APPLY_TRUNCATE, None))
            elif record.operation() is Operation.DELETE:
                items.append((table, self._key_fn(record), sequence, topics.APPLY_DELETE, None))
            else:
                items.append((table, self._key_fn(record), sequence, topics.APPLY_PUT, self._value_fn(record)))
        if items:
            self._driver.send(topics.SINK_MAP_APPLY, {"name": self._name, "items": items})

    def complete(self) -> bool:
        self._driver.request(topics.SINK_FLUSH, {})
        return True
