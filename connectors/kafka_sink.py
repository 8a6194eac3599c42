"""``write_kafka_p``: the Kafka sink (Jet's ``WriteKafkaP``), at-least-once or transactional.

**Records.** ``to_record_fn(item) -> (topic, key, value)``; the default takes the sink's topic and
``extract_key_fn(item)`` / ``extract_value_fn(item)`` (defaults: the entry's ``item[0]`` / ``item[1]``).
Keys and values must be ``bytes``, ``str`` (sent as UTF-8) or ``None``; anything else fails the job with an
error naming the item's type and the vertex.

**At-least-once** (the default, and any job not ``EXACTLY_ONCE``): records are handed to the producer as they
come; the processor waits for every one to be acknowledged (``flush``) when a snapshot is taken
(``snapshot_commit_prepare``) and when its input completes, so what a snapshot covers is in Kafka. A failed
delivery fails the job, naming the vertex and the error.

**Exactly-once** (``exactly_once=True`` in an ``EXACTLY_ONCE`` job): the processor owns one transactional
producer whose ``transactional.id`` is ``jetspark-<job id>-<vertex>-<processor index>``, the same in every
execution of the job, so the producer of a restarted execution fences the one before it and Kafka ends the
transaction that one left open. Records go into one transaction per snapshot interval: it begins with the
first record, ``snapshot_commit_prepare`` flushes it, and ``snapshot_commit_finish(True)`` commits it, so a
``read_committed`` consumer sees the records of completed snapshots only. Between prepare and finish the
processor takes no new items (Kafka allows one open transaction per producer; Jet keeps two producers to
avoid that pause). A failed snapshot (``finish(False)``) keeps the transaction open: the next successful
snapshot commits it. When the input completes, the open transaction is committed.

**A crash between a snapshot's completion and the commit.** confluent-kafka cannot resume a transaction by id
(Jet and Flink reach into the Java client's internals for it): the restart's ``init_transactions`` aborts a
transaction whose commit the broker had not received, although the snapshot that covers its records is
complete and the sources will not replay them. So ``snapshot_commit_prepare`` also saves the transaction in
the snapshot (key ``broadcast_key(("write_kafka_p.txn", processor index))``): its records as sent
(``(topic, key, value)`` bytes since the last commit: one snapshot interval's, more after a failed snapshot;
kept in memory until the commit) and the position of its first acknowledged record (the *probe*). On
restore, the processor whose index is that index modulo the new parallelism asks
:func:`connectors.kafka_recovery.transaction_committed` whether the probe record is visible to
``read_committed`` consumers (a transaction is all or nothing): if so, nothing is done; if not, the saved
records are sent again as the first records of the new execution's first transaction, which the next
completed snapshot commits (and saves again, so a crash before that commit is covered the same way).
Every record is thus committed exactly once whether the commit happened before the crash or not. The
restored records travel to every processor of the vertex (a broadcast key) and are dropped by all but one.
``_commit_transaction`` is the one call that commits: tests override it to crash just before or after it.
"""

from __future__ import annotations

import functools
import logging
import operator
from typing import Any, Callable

from connectors.kafka_client import check_properties, confluent, describe_servers, fetch_partitions
from connectors.kafka_recovery import transaction_committed
from jetspark_base.errors import DagError, DagValidationError
from processors.api.processor import Processor
from processors.api.snapshot_keys import BroadcastKey, broadcast_key

__all__ = ["write_kafka_p", "WriteKafkaP", "FLUSH_TIMEOUT_S"]

FLUSH_TIMEOUT_S = 60.0
"""How long a flush or a transaction commit may take before the job fails."""

_log = logging.getLogger("jetspark.kafka")
_TXN_KEY = "write_kafka_p.txn"
_first = operator.itemgetter(0)
_second = operator.itemgetter(1)


def write_kafka_p(properties: dict[str, Any], topic: str | None, extract_key_fn: Callable[[Any], Any] | None = None,
                  extract_value_fn: Callable[[Any], Any] | None = None, exactly_once: bool = False,
                  to_record_fn: Callable[[Any], tuple] | None = None) -> Any:
    """A sink producing each item as a record of ``topic`` (see the module docstring); ``properties`` are
    confluent-kafka (librdkafka) producer settings.

    >>> sink = write_kafka_p({"bootstrap.servers": "localhost:9092"}, "counts",
    ...                      extract_key_fn=lambda e: e[0], extract_value_fn=lambda e: str(e[1]))
    >>> dag.new_vertex("kafkaSink(counts)", sink)   # doctest: +SKIP
    """
    from processors.api.suppliers import ProcessorMetaSupplier

    properties = check_properties("write_kafka_p", properties)
    if to_record_fn is None and (not isinstance(topic, str) or not topic):
        raise DagValidationError(f"write_kafka_p: topic must be a non-empty str, got {topic!r}")
    if not isinstance(exactly_once, bool):
        raise DagValidationError(f"write_kafka_p: exactly_once must be a bool, got {exactly_once!r}")
    for name, fn in (("extract_key_fn", extract_key_fn), ("extract_value_fn", extract_value_fn),
                     ("to_record_fn", to_record_fn)):
        if fn is not None and not callable(fn):
            raise DagValidationError(f"write_kafka_p: {name} must be callable or None, got {fn!r}")
    if to_record_fn is None:
        to_record_fn = _ToRecord(topic, extract_key_fn or _first, extract_value_fn or _second)
    return ProcessorMetaSupplier.of(functools.partial(WriteKafkaP, properties, topic, to_record_fn, exactly_once))


class _ToRecord:
    """``item -> (topic, key, value)`` from the sink's topic and extract functions."""

    def __init__(self, topic: str, key_fn: Callable[[Any], Any], value_fn: Callable[[Any], Any]):
        self.topic, self.key_fn, self.value_fn = topic, key_fn, value_fn

    def __call__(self, item: Any) -> tuple:
        return self.topic, self.key_fn(item), self.value_fn(item)


class WriteKafkaP(Processor):
    """The processor of :func:`write_kafka_p`."""

    def __init__(self, properties: dict[str, Any], topic: str | None, to_record_fn: Callable[[Any], tuple],
                 exactly_once: bool):
        self._properties = properties
        self._topic = topic
        self._to_record = to_record_fn
        self._exactly_once = exactly_once
        self._transactional = False
        self._producer: Any = None
        self._owner = "write_kafka_p"
        self._failure: Any = None
        self._in_transaction = False
        self._prepared = False  # flushed by snapshot_commit_prepare, waiting for its finish
        self._pending: list[tuple] = []  # (topic, key, value) sent in the open transaction
        self._probe: tuple[str, int, int] | None = None  # where its first acknowledged record is
        self._restored: list[tuple] = []  # (probe, records) of restored transactions this processor checks
        self._index, self._total = 0, 1
        self._offer_to_snapshot: Any = None

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        kafka = confluent()
        self._owner = f"vertex '{context.vertex_name}' (write_kafka_p, processor {context.global_processor_index})"
        self._index, self._total = context.global_processor_index, context.total_parallelism
        self._offer_to_snapshot = outbox.offer_to_snapshot
        guarantee = getattr(context.processing_guarantee, "value", context.processing_guarantee)
        self._transactional = self._exactly_once and guarantee == "EXACTLY_ONCE"
        # at least once: delivery reports of failed records only (no Python call per acknowledged record);
        # transactional: every report, for the position of each transaction's first record (its probe)
        settings = {**self._properties, "delivery.report.only.error": not self._transactional,
                    "on_delivery": self._on_delivery}
        if self._transactional:
            settings["transactional.id"] = (f"jetspark-{context.job_id}-{context.vertex_name}-"
                                            f"{context.global_processor_index}")
        self._producer = kafka.Producer(settings)
        if self._topic is not None:  # servers that never answer fail the job here, within a bound
            fetch_partitions(self._producer, (self._topic,), self._owner, self._properties)
        if self._transactional:  # fences an older execution's producer; Kafka ends what it left open
            self._call("init_transactions", self._producer.init_transactions, FLUSH_TIMEOUT_S)
            context.logger.info("write_kafka_p: transactional.id %s", settings["transactional.id"])

    # ------------------------------------------------------------------------------------------ records
    def process(self, ordinal: int, inbox) -> None:
        if self._prepared:  # one open transaction per producer: wait for the snapshot's phase 2
            return
        self._raise_failure()
        if self._transactional and not self._in_transaction and len(inbox):
            self._begin()
        self._refused_as_error(self._produce_all, inbox.take_all())

    def _refused_as_error(self, produce_fn: Callable[[list], None], records: list) -> None:
        try:
            produce_fn(records)
        except confluent().KafkaException as exc:
            raise DagError(f"{self._owner}: Kafka refused a record: {exc.args[0].str()}") from None

    def _begin(self) -> None:
        self._call("begin_transaction", self._producer.begin_transaction)
        self._in_transaction = True
        self._pending, self._probe = [], None

    def _produce_all(self, items: list) -> None:
        produce, to_record = self._producer.produce, self._to_record
        keep = self._pending.append if self._transactional else None
        for item in items:
            topic, key, value = to_record(item)
            if key is not None and key.__class__ is not bytes:
                key = self._encoded(key, item, "key")
            if value is not None and value.__class__ is not bytes:
                value = self._encoded(value, item, "value")
            try:
                produce(topic, value, key)
            except BufferError:
                self._produce_when_room(topic, key, value)
            if keep is not None:
                keep((topic, key, value))
        self._producer.poll(0)

    def _produce_when_room(self, topic: str, key: bytes | None, value: bytes | None) -> None:
        """Produce one record, letting the producer send while its queue is full."""
        while True:
            self._producer.poll(0.05)
            try:
                self._producer.produce(topic, value, key)
                return
            except BufferError:
                continue

    def _encoded(self, value: Any, item: Any, part: str) -> bytes:
        if isinstance(value, bytes):
            return value
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        raise DagError(
            f"{self._owner}: cannot encode the record {part} of type {type(value).__name__} (item of type "
            f"{type(item).__name__}: {item!r:.200}); a Kafka {part} must be bytes, str or None: convert it in "
            f"extract_{part}_fn, e.g. extract_{part}_fn=lambda e: str(e[{0 if part == 'key' else 1}])")

    def _on_delivery(self, error: Any, message: Any) -> None:
        if error is not None:
            if self._failure is None:
                self._failure = error
        elif self._probe is None:
            self._probe = (message.topic(), message.partition(), message.offset())

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise DagError(f"{self._owner}: Kafka did not take a record ({describe_servers(self._properties)}): "
                           f"{self._failure.str()}")

    def _flush(self) -> None:
        remaining = self._producer.flush(FLUSH_TIMEOUT_S)
        self._raise_failure()
        if remaining:
            raise DagError(f"{self._owner}: {remaining} records not acknowledged by "
                           f"{describe_servers(self._properties)} within {FLUSH_TIMEOUT_S:g} s")

    def _call(self, what: str, fn: Callable, *args: Any) -> Any:
        try:
            return fn(*args)
        except confluent().KafkaException as exc:
            raise DagError(f"{self._owner}: {what} failed on {describe_servers(self._properties)}: "
                           f"{exc.args[0].str()}") from None

    # ------------------------------------------------------------------------------------------ snapshots
    def snapshot_commit_prepare(self) -> bool:
        self._flush()
        self._prepared = self._transactional
        if self._transactional and self._pending:  # the transaction goes into the snapshot (module docstring)
            if self._probe is None:  # pragma: no cover - a flushed record without a report raised above
                raise DagError(f"{self._owner}: Kafka acknowledged no record of the open transaction")
            saved = (self._probe, self._pending)  # the outbox copies it at once
            if not self._offer_to_snapshot(broadcast_key((_TXN_KEY, self._index)), saved):
                raise DagError(  # pragma: no cover - the runtime's snapshot bucket is unbounded
                    f"{self._owner}: the snapshot bucket refused the open transaction")
        return True

    def snapshot_commit_finish(self, success: bool) -> bool:
        if not self._prepared:
            return True
        self._prepared = False
        if success and self._in_transaction:
            self._commit()
        return True

    def _commit(self) -> None:
        self._commit_transaction()
        self._in_transaction = False
        self._pending, self._probe = [], None

    def _commit_transaction(self) -> None:
        """Commit the open transaction: the one call tests override to crash just before or after a commit."""
        self._call("commit_transaction", self._producer.commit_transaction, FLUSH_TIMEOUT_S)

    def complete(self) -> bool:
        if self._prepared:
            return False
        self._flush()
        if self._in_transaction:
            self._commit()
        return True

    def restore_from_snapshot(self, inbox) -> None:
        for key, value in inbox.take_all():
            if not (isinstance(key, BroadcastKey) and isinstance(key.key, tuple) and key.key[0] == _TXN_KEY):
                raise ValueError(f"{self._owner}: unexpected snapshot key {key!r}")
            if key.key[1] % self._total == self._index:
                self._restored.append(value)

    def finish_snapshot_restore(self) -> bool:
        """Send again the records of every restored transaction that did not commit (module docstring)."""
        restored, self._restored = self._restored, []
        for probe, records in restored:
            if transaction_committed(self._properties, probe, self._owner):
                continue
            _log.info("%s: the restored snapshot's transaction (first record at %s) did not commit; sending its "
                      "%d records again", self._owner, probe, len(records))
            if not self._in_transaction:
                self._begin()
            self._refused_as_error(self._produce_again, records)
        return True

    def _produce_again(self, records: list) -> None:
        """Produce restored ``(topic, key, value)`` records into the open transaction."""
        for topic, key, value in records:
            try:
                self._producer.produce(topic, value, key)
            except BufferError:
                self._produce_when_room(topic, key, value)
        self._pending.extend(records)

    def close(self) -> None:
        producer, self._producer = self._producer, None
        if producer is None:
            return
        if not self._transactional:
            producer.flush(1)
        elif self._in_transaction and not self._prepared:  # records after the last snapshot: replayed later
            try:
                producer.abort_transaction(5)
            except confluent().KafkaException as exc:  # the next execution's producer fences it anyway
                _log.info("write_kafka_p: abort on close failed: %s", exc.args[0].str())
