"""What the Kafka source and sink share: the lazy import of confluent-kafka, the check of their properties and
the bounded first contact with the cluster.

- :func:`confluent` imports ``confluent_kafka`` when a connector is first used; a missing one is an
  ``ImportError`` naming the extra to install.
- :func:`check_properties` refuses what is not a ``dict`` of ``str`` keys (at DAG build time) and keeps the
  settings as :class:`Properties`: printed (a supplier's or processor's ``repr``, a log line), the values of
  secret settings (``sasl.password``, ``ssl.key.pem``, ...) show as ``***``. Messages name the bootstrap
  servers only (:func:`describe_servers`).
- :func:`fetch_partitions` asks the cluster for the partitions of some topics with a deadline: bootstrap
  servers that never answer (nothing listening, a firewall dropping packets) become, after
  :data:`METADATA_TIMEOUT_S` seconds, a :class:`~dag.errors.DagError` naming the vertex and the servers,
  instead of librdkafka's endless reconnecting.
"""

from __future__ import annotations

import re
from typing import Any

from jetspark_base.errors import DagError, DagValidationError

__all__ = ["confluent", "check_properties", "Properties", "fetch_partitions", "describe_servers",
           "METADATA_TIMEOUT_S"]

METADATA_TIMEOUT_S = 10.0
"""How long a processor waits for the cluster's first metadata answer before failing the job."""


def confluent() -> Any:
    """The ``confluent_kafka`` module, or an ``ImportError`` that says how to install it."""
    try:
        import confluent_kafka
    except ImportError as exc:
        raise ImportError("connectors.kafka needs confluent-kafka: pip install 'jetspark[kafka]'") from exc
    return confluent_kafka


_SECRET_SETTING = re.compile(r"password|secret|token|key\.pem|oauthbearer\.config|jaas", re.IGNORECASE)


class Properties(dict):
    """librdkafka settings, used as the dict they are, printed with the values of secret settings masked.

    >>> Properties({"bootstrap.servers": "b:9092", "sasl.password": "pw"})
    {'bootstrap.servers': 'b:9092', 'sasl.password': '***'}
    """

    def __repr__(self) -> str:
        return repr({k: "***" if _SECRET_SETTING.search(k) else v for k, v in self.items()})

    __str__ = __repr__


def check_properties(owner: str, properties: Any) -> Properties:
    """A copy of ``properties`` (librdkafka settings), or a ``DagValidationError`` naming ``owner``; the message
    shows the type and the keys it found, never a value (``sasl.password`` and the like).

    >>> check_properties("write_kafka_p", [("sasl.password", "pw")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    dag.errors.DagValidationError: write_kafka_p: properties must be a dict of librdkafka settings ..., got a list
    """
    if not isinstance(properties, dict):
        raise DagValidationError(
            f"{owner}: properties must be a dict of librdkafka settings such as "
            f"{{'bootstrap.servers': 'host:9092'}}, got a {type(properties).__name__}")
    odd = [k for k in properties if not isinstance(k, str)]
    if odd:
        raise DagValidationError(
            f"{owner}: properties must have str keys (librdkafka setting names such as 'bootstrap.servers'), got "
            f"the key(s) {', '.join(f'{type(k).__name__} {k!r:.40}' for k in odd)}")
    if "bootstrap.servers" not in properties and "test.mock.num.brokers" not in properties:
        raise DagValidationError(f"{owner}: properties have no 'bootstrap.servers'; add e.g. "
                                 "{'bootstrap.servers': 'host:9092'}")
    return Properties(properties)


def describe_servers(properties: dict[str, Any]) -> str:
    """The bootstrap servers for a message (never another property: they may hold passwords)."""
    return str(properties.get("bootstrap.servers", "(mock cluster)"))


def fetch_partitions(client: Any, topics: tuple[str, ...], owner: str, properties: dict[str, Any],
                     timeout_s: float | None = None) -> dict[str, int]:
    """``{topic: partition count}`` from ``client``'s metadata, within ``timeout_s`` (default
    :data:`METADATA_TIMEOUT_S`). A topic the cluster does not know counts 0 partitions."""
    kafka = confluent()
    timeout = METADATA_TIMEOUT_S if timeout_s is None else timeout_s
    counts = {}
    for topic in topics:
        try:
            metadata = client.list_topics(topic, timeout=timeout)
        except kafka.KafkaException as exc:
            raise DagError(
                f"{owner}: no metadata for topic '{topic}' from the bootstrap servers "
                f"'{describe_servers(properties)}' within {timeout:g} s ({exc.args[0].str()}); are the servers "
                "running and reachable from every Spark worker?") from None
        described = metadata.topics.get(topic)
        counts[topic] = len(described.partitions) if described is not None and described.error is None else 0
    return counts
