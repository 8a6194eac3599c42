"""``stream_kafka_p``: the Kafka stream source (Jet's ``StreamKafkaP``).

**Partitions.** Each processor reads a fixed share of the topics' partitions: partition ``p`` of the ``t``-th
topic belongs to the processor whose global index is ``(p + t) % total_parallelism``, so every partition is read
by exactly one processor of the job, on whatever member it runs, and the first partitions of several topics land
on different processors. The processor *assigns* its partitions to its own consumer (no group rebalancing,
as Jet) and asks the cluster for the topics' partition counts every :data:`METADATA_INTERVAL_S` seconds:
partitions added while the job runs are assigned to their owners and read from their beginning. Cluster
metadata that does not come within ``METADATA_TIMEOUT_S`` fails the job the first time (servers that never
answer) and is only logged later (the consumer itself rides out broker restarts).

**Items.** ``(key, value)`` of the raw bytes (``None`` for a missing key), or ``projection_fn(message)`` of
confluent's ``Message`` (``None`` drops it).

**Event time.** With ``event_time_params`` (``wm_gen_params``), one watermark policy per owned partition;
items are stamped with the message's own timestamp when the params have no ``timestamp_fn`` (native
timestamps), else with ``timestamp_fn(item)``. The processor's watermark is the minimum over its partitions that
are not idle; when all its partitions are idle (or it owns none) it sends the idle message once (Jet's rule,
:class:`~processors.windowing.event_time.EventTimeMapper`).

**Offsets.** Under a processing guarantee the processor commits nothing to Kafka: it saves, per owned
partition, ``broadcast_key(("kafka", topic, partition)) -> (next offset, watermark)`` in each snapshot and, on a
restart, seeks every partition it owns to its saved offset (a partition missing from the snapshot appeared
after it and is read from its beginning). A fresh start begins at the end or the beginning of each partition
as ``auto.offset.reset`` says (``latest`` by default), resolved to a concrete offset at once so a snapshot never
holds a symbolic one. Without a guarantee the consumer starts where the properties' ``group.id`` committed
(``auto.offset.reset`` when nothing is) and follows their auto-commit settings.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable

from connectors.kafka_client import check_properties, confluent, describe_servers, fetch_partitions
from jetspark_base.errors import DagError, DagValidationError
from processors.api.snapshot_keys import broadcast_key
from processors.io.partitioned_source import PartitionedStreamSource
from processors.io.text_streams import mark_stream_source
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["stream_kafka_p", "StreamKafkaP", "owner_of_partition", "METADATA_INTERVAL_S", "POLL_BATCH"]

METADATA_INTERVAL_S = 1.0
"""How often a processor looks for partitions added to its topics."""
POLL_BATCH = 1024
"""The most messages one ``complete()`` call takes from the consumer."""
_EARLIEST = {"earliest", "smallest", "beginning"}
_SNAPSHOT_TAG = "kafka"


def owner_of_partition(topic_index: int, partition: int, total_parallelism: int) -> int:
    """The global index of the processor reading ``partition`` of the ``topic_index``-th topic.

    >>> [owner_of_partition(0, p, 4) for p in range(6)], owner_of_partition(1, 0, 4)
    ([0, 1, 2, 3, 0, 1], 1)
    """
    return (partition + topic_index) % total_parallelism


def stream_kafka_p(properties: dict[str, Any], *topics: str, projection_fn: Callable[[Any], Any] | None = None,
                   event_time_params: Any = None) -> ProcessorMetaSupplier:
    """A stream source of the records of ``topics`` (see the module docstring); ``properties`` are
    confluent-kafka (librdkafka) consumer settings.

    >>> src = stream_kafka_p({"bootstrap.servers": "localhost:9092"}, "trades",
    ...                      projection_fn=lambda m: m.value().decode())
    >>> dag.new_vertex("kafkaSource(trades)", src)   # doctest: +SKIP
    """
    properties = check_properties("stream_kafka_p", properties)
    if not topics or not all(isinstance(t, str) and t for t in topics):
        raise DagValidationError(f"stream_kafka_p: give one or more topic names (non-empty str), got {topics!r}")
    if projection_fn is not None and not callable(projection_fn):
        raise DagValidationError(f"stream_kafka_p: projection_fn must be callable or None, got {projection_fn!r}")
    factory = functools.partial(StreamKafkaP, properties, tuple(topics), projection_fn, event_time_params)
    return mark_stream_source(ProcessorMetaSupplier.of(factory))


def _entry(message: Any) -> tuple:
    return message.key(), message.value()


class StreamKafkaP(PartitionedStreamSource):
    """The processor of :func:`stream_kafka_p`."""

    def __init__(self, properties: dict[str, Any], topics: tuple[str, ...], projection_fn: Callable | None,
                 event_time_params: Any):
        super().__init__()
        self._properties = properties
        self._topics = topics
        self._projection = projection_fn or _entry
        self._params = event_time_params
        self._consumer: Any = None
        self._owner = "stream_kafka_p"
        self._guaranteed = False
        self._index, self._total = 0, 1
        self._index_of: dict[tuple[str, int], int] = {}  # owned partition -> its index in the mapper
        self._offsets: dict[tuple[str, int], int] = {}  # owned partition -> next offset (under a guarantee)
        self._counts: dict[str, int] = {}
        self._restored: dict[tuple[str, int], tuple] | None = None
        self._next_metadata = 0.0

    # ------------------------------------------------------------------------------------------ lifecycle
    def init_source(self, context) -> None:
        kafka = confluent()
        self._owner = f"vertex '{context.vertex_name}' (stream_kafka_p, processor {context.global_processor_index})"
        self._index, self._total = context.global_processor_index, context.total_parallelism
        guarantee = getattr(context.processing_guarantee, "value", context.processing_guarantee)
        self._guaranteed = guarantee in ("EXACTLY_ONCE", "AT_LEAST_ONCE")
        settings = {"group.id": f"jetspark-{context.job_id}-{context.vertex_name}", **self._properties}
        if self._guaranteed:  # the snapshots hold the offsets; the consumer group learns nothing
            settings.update({"enable.auto.commit": False, "enable.auto.offset.store": False})
        self._consumer = kafka.Consumer(settings)
        if self._params is not None:
            from processors.windowing.event_time import EventTimeMapper

            self._mapper = EventTimeMapper(self._params, 0, owner=self._owner)
        context.logger.info("stream_kafka_p reads %s from %s", ",".join(self._topics),
                            describe_servers(self._properties))

    def restore_from_snapshot(self, inbox) -> None:
        restored = self._restored if self._restored is not None else {}
        for key, value in inbox.take_all():
            tag, topic, partition = key.key
            if tag == _SNAPSHOT_TAG and topic in self._topics:
                restored[(topic, partition)] = value
        self._restored = restored

    def complete(self) -> bool:
        if not self._emit_pending():
            return False
        now = time.monotonic()
        if now >= self._next_metadata:
            self._next_metadata = now + METADATA_INTERVAL_S
            self._assign_new_partitions()
        self._pending = self._poll()
        self._emit_pending()
        return False

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    # ------------------------------------------------------------------------------------------ partitions
    def _assign_new_partitions(self) -> None:
        """Assign the owned partitions not assigned yet: all of them at the first call, later the added ones."""
        first = not self._counts
        try:
            counts = fetch_partitions(self._consumer, self._topics, self._owner, self._properties)
        except DagError as exc:
            if first:  # servers that never answered: the job fails, naming them
                raise
            self._context.logger.warning("stream_kafka_p: %s; looking again in %g s", exc, METADATA_INTERVAL_S)
            return
        new = [(topic, p) for t, topic in enumerate(self._topics)
               for p in range(self._counts.get(topic, 0), counts[topic])
               if owner_of_partition(t, p, self._total) == self._index]
        self._counts = {topic: max(n, self._counts.get(topic, 0)) for topic, n in counts.items()}
        if not new:
            return
        kafka = confluent()
        assignments = [kafka.TopicPartition(topic, p, self._start_offset(topic, p, first)) for topic, p in new]
        for topic, p in new:
            self._index_of[(topic, p)] = len(self._index_of)
        if self._mapper is not None:
            self._mapper.add_partitions(len(new))
            for tp in new:
                wm = (self._restored or {}).get(tp, (None, None))[1]
                if wm is not None:
                    self._mapper.restore_watermark(self._index_of[tp], wm)
        self._consumer.incremental_assign(assignments)
        if self._guaranteed:
            self._offsets.update((tp, a.offset) for tp, a in zip(new, assignments))

    def _start_offset(self, topic: str, partition: int, first: bool) -> int:
        """Where an owned partition starts (see the module docstring)."""
        kafka = confluent()
        if not self._guaranteed:
            return kafka.OFFSET_STORED if first else kafka.OFFSET_BEGINNING
        if self._restored is not None and (topic, partition) in self._restored:
            return self._restored[(topic, partition)][0]
        tp = kafka.TopicPartition(topic, partition)
        low, high = self._consumer.get_watermark_offsets(tp, timeout=10)
        from_start = (not first or self._restored is not None
                      or str(self._properties.get("auto.offset.reset", "latest")).lower() in _EARLIEST)
        return low if from_start else high

    # ------------------------------------------------------------------------------------------ reading
    def _poll(self) -> list:
        """Items (and watermarks) of the messages waiting in the consumer."""
        messages = self._consumer.consume(POLL_BATCH, 0) if self._index_of else []
        out: list = []
        projection, mapper, offsets, add = self._projection, self._mapper, self._offsets, self._add_item
        native = mapper is not None and self._params.timestamp_fn is None
        for message in messages:
            if message.error() is not None:
                self._on_error(message.error())
                continue
            if self._guaranteed:
                offsets[message.topic(), message.partition()] = message.offset() + 1
            index = self._index_of[message.topic(), message.partition()] if mapper is not None else 0
            add(out, projection(message), index, message.timestamp()[1] if native else None)
        if mapper is not None and not messages:
            out = mapper.handle_no_event()
        return out

    def _on_error(self, error: Any) -> None:
        if error.fatal() or not (error.retriable() or error.code() < 0):
            raise DagError(f"{self._owner}: Kafka error from {describe_servers(self._properties)}: {error.str()}")
        self._context.logger.warning("stream_kafka_p: %s (librdkafka retries)", error.str())

    # ------------------------------------------------------------------------------------------ snapshots
    def _snapshot_entries(self) -> list[tuple[Any, Any]]:
        return [(broadcast_key((_SNAPSHOT_TAG, topic, p)), (offset, self._watermark(self._index_of[(topic, p)])))
                for (topic, p), offset in self._offsets.items()]
