"""Kafka through confluent-kafka (extra ``kafka``): Jet's Kafka connector.

=================================================  ================================  =============================
API                                                vertex                            runs
=================================================  ================================  =============================
``KafkaSources.kafka(properties, *topics, ...)``   ``kafkaSource(T1[,T2...])``       :func:`stream_kafka_p`
``KafkaSinks.kafka(properties, topic, ...)``       ``kafkaSink(TOPIC)``              :func:`write_kafka_p`
``KafkaSinks.kafka_builder(properties)...build()``  ``kafkaSink(TOPIC)``              :func:`write_kafka_p`
=================================================  ================================  =============================

The source (:mod:`connectors.kafka_source`) spreads the topics' partitions over every processor of the job,
picks up added partitions within seconds, stamps items with the messages' timestamps and keeps per-partition
watermarks; under a guarantee its offsets live in snapshots. The sink (:mod:`connectors.kafka_sink`) is
at-least-once, or transactional in an ``EXACTLY_ONCE`` job. Tests run against librdkafka's mock cluster
(:mod:`connectors.kafka_mock`), which does not honour ``read_committed``: see README's Kafka section.

Importing this module imports no confluent_kafka; building a processor's consumer or producer does.

>>> from pipeline import Pipeline
>>> p = Pipeline.create()
>>> (p.read_from(KafkaSources.kafka({"bootstrap.servers": "localhost:9092"}, "lines"))
...   .with_native_timestamps(0)
...   .write_to(KafkaSinks.kafka({"bootstrap.servers": "localhost:9092"}, "copies")))
SinkStage('kafkaSink(copies)')
"""

from __future__ import annotations

from typing import Any, Callable

from connectors.kafka_sink import write_kafka_p
from connectors.kafka_source import stream_kafka_p
from jetspark_base.errors import DagValidationError

__all__ = ["KafkaSources", "KafkaSinks", "KafkaSinkBuilder", "stream_kafka_p", "write_kafka_p"]


class KafkaSources:
    """Pipeline sources reading Kafka (Jet's ``KafkaSources``)."""

    @staticmethod
    def kafka(properties: dict[str, Any], *topics: str, projection_fn: Callable[[Any], Any] | None = None) -> Any:
        """A stream source of the records of ``topics``: ``(key, value)`` bytes, or ``projection_fn(message)``
        (``None`` drops the message); native timestamps are the messages' own.

        >>> KafkaSources.kafka({"bootstrap.servers": "b:9092"}, "a", "b").name
        'kafkaSource(a,b)'
        """
        from pipeline.connectors import StreamSource

        def supplier(params: Any) -> Any:
            return stream_kafka_p(properties, *topics, projection_fn=projection_fn, event_time_params=params)

        return StreamSource(f"kafkaSource({','.join(map(str, topics))})", supplier(None), supplier,
                            native_timestamps=True, accepts_timestamp_fn=True)


class KafkaSinks:
    """Pipeline sinks writing to Kafka (Jet's ``KafkaSinks``)."""

    @staticmethod
    def kafka(properties: dict[str, Any], topic: str, extract_key_fn: Callable[[Any], Any] | None = None,
              extract_value_fn: Callable[[Any], Any] | None = None) -> Any:
        """A sink producing each item to ``topic``: key ``extract_key_fn(item)`` (default ``item[0]``), value
        ``extract_value_fn(item)`` (default ``item[1]``), each ``bytes``, ``str`` or ``None``. At-least-once;
        use :meth:`kafka_builder` for the exactly-once sink.

        >>> KafkaSinks.kafka({"bootstrap.servers": "b:9092"}, "out").name
        'kafkaSink(out)'
        """
        from pipeline.connectors import Sink

        return Sink(f"kafkaSink({topic})", write_kafka_p(properties, topic, extract_key_fn, extract_value_fn))

    @staticmethod
    def kafka_builder(properties: dict[str, Any]) -> "KafkaSinkBuilder":
        """A builder of a Kafka sink (Jet's ``KafkaSinks.kafka(properties)`` builder).

        >>> (KafkaSinks.kafka_builder({"bootstrap.servers": "b:9092"}).topic("out")
        ...  .extract_value_fn(str).build().name)
        'kafkaSink(out)'
        """
        return KafkaSinkBuilder(properties)


class KafkaSinkBuilder:
    """Builds a Kafka sink: ``.topic(t)``, ``.extract_key_fn(fn)``, ``.extract_value_fn(fn)``,
    ``.to_record_fn(fn(item) -> (topic, key, value))`` (instead of the other three), ``.exactly_once(bool)``
    (default True: transactional in an ``EXACTLY_ONCE`` job), ``.build()``."""

    def __init__(self, properties: dict[str, Any]):
        self._properties = properties
        self._topic: str | None = None
        self._key_fn: Callable | None = None
        self._value_fn: Callable | None = None
        self._record_fn: Callable | None = None
        self._exactly_once = True

    def topic(self, topic: str) -> "KafkaSinkBuilder":
        """The topic of every record (not with ``to_record_fn``)."""
        self._topic = topic
        return self

    def extract_key_fn(self, fn: Callable[[Any], Any]) -> "KafkaSinkBuilder":
        """``item -> key`` (``bytes``, ``str`` or ``None``); default ``item[0]``."""
        self._key_fn = fn
        return self

    def extract_value_fn(self, fn: Callable[[Any], Any]) -> "KafkaSinkBuilder":
        """``item -> value`` (``bytes``, ``str`` or ``None``); default ``item[1]``."""
        self._value_fn = fn
        return self

    def to_record_fn(self, fn: Callable[[Any], tuple]) -> "KafkaSinkBuilder":
        """``item -> (topic, key, value)``: each item picks its topic."""
        self._record_fn = fn
        return self

    def exactly_once(self, enable: bool = True) -> "KafkaSinkBuilder":
        """Transactional in an ``EXACTLY_ONCE`` job (the default); ``False``: at-least-once always."""
        self._exactly_once = enable
        return self

    def build(self) -> Any:
        """The sink; its vertex is ``kafkaSink(TOPIC)`` (``kafkaSink`` with ``to_record_fn`` alone)."""
        from pipeline.connectors import Sink

        if self._record_fn is not None and (self._topic or self._key_fn or self._value_fn):
            raise DagValidationError("KafkaSinks.kafka_builder: give either to_record_fn or topic/extract_key_fn/"
                                     "extract_value_fn, not both")
        if self._record_fn is None and self._topic is None:
            raise DagValidationError("KafkaSinks.kafka_builder: call .topic(name) (or .to_record_fn(fn)) before "
                                     ".build()")
        supplier = write_kafka_p(self._properties, self._topic, self._key_fn, self._value_fn,
                                 exactly_once=self._exactly_once, to_record_fn=self._record_fn)
        return Sink(f"kafkaSink({self._topic})" if self._topic else "kafkaSink", supplier)
