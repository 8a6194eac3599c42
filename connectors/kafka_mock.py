"""librdkafka's in-process mock Kafka cluster, for tests, examples and benchmarks without a broker.

librdkafka (the C library inside confluent-kafka) carries a mock cluster: brokers that speak the Kafka protocol
on loopback ports, run by threads of the process that created them. Any client of any process on the machine
reaches them through their ``bootstrap.servers``, so Spark's Python workers can read and write topics the
driver's mock holds.

confluent-kafka offers no Python API for it beyond the ``test.mock.num.brokers`` client property, and through
that property the cluster cannot create topics (the mock answers ``CreateTopics`` and ``CreatePartitions`` as
an old broker that lacks them) and reports a controller that does not exist. :class:`MockCluster` therefore
calls librdkafka's own mock API (``rd_kafka_mock_cluster_new``, ``rd_kafka_mock_topic_create``, ...) through
:mod:`ctypes`, on the copy of librdkafka that confluent-kafka loads.

What the mock does NOT do (librdkafka 2.16, checked by hand): it accepts the transactional API
(``init_transactions``, ``commit_transaction``, ...) and writes a commit or abort marker (an offset of its
own), but it gives ``read_committed`` consumers the records of open and aborted transactions too, does not
fence an older producer of the same ``transactional.id`` (its commit still succeeds), and drops the
consumer-group offsets that ``send_offsets_to_transaction`` commits (``Consumer.committed`` finds none,
committed or aborted). A topic cannot grow: :meth:`MockCluster.recreate_topic` replaces it (its records are
lost) by one with more partitions.
A partition keeps about 5 MB of records: older ones are dropped, as by a broker's retention.

>>> with MockCluster(brokers=2) as cluster:                      # doctest: +SKIP
...     cluster.create_topic("lines", partitions=4)
...     producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
"""

from __future__ import annotations

import ctypes
import glob
import os
from typing import Any

__all__ = ["MockCluster"]

_PRODUCER = 0


def _librdkafka() -> ctypes.CDLL:
    """The librdkafka that confluent-kafka loaded (its wheel bundles one; else the system's)."""
    from connectors.kafka_client import confluent

    package_dir = os.path.dirname(os.path.dirname(confluent().__file__))
    bundled = glob.glob(os.path.join(package_dir, "confluent_kafka.libs", "librdkafka*.so*"))
    lib = ctypes.CDLL(bundled[0] if bundled else "librdkafka.so.1")
    void_p, char_p, c_int = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    signatures = {
        "rd_kafka_conf_new": ([], void_p),
        "rd_kafka_conf_set": ([void_p, char_p, char_p, char_p, ctypes.c_size_t], c_int),
        "rd_kafka_new": ([c_int, void_p, char_p, ctypes.c_size_t], void_p),
        "rd_kafka_destroy": ([void_p], None),
        "rd_kafka_mock_cluster_new": ([void_p, c_int], void_p),
        "rd_kafka_mock_cluster_destroy": ([void_p], None),
        "rd_kafka_mock_cluster_bootstraps": ([void_p], char_p),
        "rd_kafka_mock_set_controller_id": ([void_p, ctypes.c_int32], c_int),
        "rd_kafka_mock_topic_create": ([void_p, char_p, c_int, c_int], c_int),
        "rd_kafka_mock_topic_delete": ([void_p, char_p], c_int),
    }
    for name, (argtypes, restype) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
    return lib


class MockCluster:
    """A mock Kafka cluster of ``brokers`` brokers on loopback, alive until :meth:`close` (or the ``with``
    block's end). Topics must be created with :meth:`create_topic` (auto-created topics get 4 partitions)."""

    def __init__(self, brokers: int = 1):
        if isinstance(brokers, bool) or not isinstance(brokers, int) or brokers < 1:
            raise ValueError(f"MockCluster: brokers must be an int >= 1, got {brokers!r}")
        self._lib = _librdkafka()
        error = ctypes.create_string_buffer(512)
        conf = self._lib.rd_kafka_conf_new()
        # the owner has no bootstrap.servers of its own: keep librdkafka from logging a warning about it
        self._lib.rd_kafka_conf_set(conf, b"log_level", b"3", error, len(error))
        self._handle = self._lib.rd_kafka_new(_PRODUCER, conf, error, len(error))
        if not self._handle:
            raise RuntimeError(f"MockCluster: librdkafka refused a client: {error.value.decode()}")
        self._cluster = self._lib.rd_kafka_mock_cluster_new(self._handle, brokers)
        if not self._cluster:
            self._lib.rd_kafka_destroy(self._handle)
            raise RuntimeError("MockCluster: librdkafka could not start a mock cluster")
        self._lib.rd_kafka_mock_set_controller_id(self._cluster, 1)
        self.bootstrap_servers: str = self._lib.rd_kafka_mock_cluster_bootstraps(self._cluster).decode()

    def create_topic(self, name: str, partitions: int) -> None:
        """Create topic ``name`` with ``partitions`` partitions (replication factor 1)."""
        code = self._lib.rd_kafka_mock_topic_create(self._cluster, name.encode(), partitions, 1)
        if code:
            raise RuntimeError(f"MockCluster: could not create topic '{name}' (librdkafka error code {code})")

    def recreate_topic(self, name: str, partitions: int) -> None:
        """Replace topic ``name`` by an empty one of ``partitions`` partitions: the mock's only way to add
        partitions (it lacks ``CreatePartitions``); the topic's records are lost."""
        self._lib.rd_kafka_mock_topic_delete(self._cluster, name.encode())
        self.create_topic(name, partitions)

    def close(self) -> None:
        """Stop the brokers (their clients then see connections refused)."""
        if self._cluster:
            self._lib.rd_kafka_mock_cluster_destroy(self._cluster)
            self._cluster = None
            self._lib.rd_kafka_destroy(self._handle)
            self._handle = None

    def __enter__(self) -> "MockCluster":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
