"""Did a Kafka transaction commit? The question the exactly-once Kafka sink asks after a restart.

The sink (``connectors/kafka_sink.py``) commits a processor's transaction in the snapshot's phase 2, after the
coordinator recorded the snapshot as complete. An execution that dies between the two leaves a transaction
that the restart's ``init_transactions`` (same ``transactional.id``) either completes (the broker had the
commit request) or aborts (it had not). confluent-kafka cannot resume a transaction by id, so the sink keeps
the transaction's records in the snapshot and, on restore, asks :func:`transaction_committed` whether to send
them again.

**The probe.** A transaction is atomic: all its records become visible to ``read_committed`` consumers or none
does. So one record is enough to tell: the sink remembers the position ``(topic, partition, offset)`` of the
first record of the transaction that Kafka acknowledged (its *probe*), and a ``read_committed`` consumer
assigned at that offset then reads:

- the record at exactly that offset: the transaction committed;
- a record at a later offset, or the end of the partition past that offset: a ``read_committed`` consumer
  skips the records of aborted transactions, so it was aborted;
- the end of the partition at or before that offset while the log holds it: the last stable offset is held
  back by another producer's open transaction; the consumer waits (at most ``timeout_s``) for it to end;
- an offset the log no longer has: below its start (retention removed it: after so long, taken as committed,
  with a warning), or at or past its end, or a partition the cluster does not have (the log lost it: the
  topic was deleted, recreated or truncated): not committed.

On a compacted topic a record can also vanish because a newer one of its key exists; the probe would then
take its transaction as aborted. Compaction never touches a partition's active segment, where the record of
a transaction that was open when the execution died still sits, so this needs a restart long after the crash.

The question is asked after the restarted producer's ``init_transactions``, which returns only once the broker
finished the old transaction, so the answer is stable. The probe needs ``Read`` on the sink's topics (a
consumer, the sink's own properties, no group membership, nothing committed).

librdkafka's mock cluster (``connectors/kafka_mock.py``, librdkafka 2.16) neither hides aborted records from
``read_committed`` consumers nor keeps the consumer-group offsets that ``send_offsets_to_transaction`` commits
(which is why the sink's marker is a record position, not such an offset): on it, a transaction's records are
visible as soon as they are acknowledged, committed or not, and the probe answers accordingly.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from connectors.kafka_client import confluent, describe_servers, fetch_partitions
from jetspark_base.errors import DagError, RestartableError

__all__ = ["RECOVERY_TIMEOUT_S", "transaction_committed"]

RECOVERY_TIMEOUT_S = 60.0
"""How long :func:`transaction_committed` waits for an answer before restarting the job."""

_log = logging.getLogger("jetspark.kafka")
_POLL_S = 0.2


def transaction_committed(properties: dict[str, Any], probe: tuple[str, int, int], owner: str,
                          timeout_s: float = RECOVERY_TIMEOUT_S) -> bool:
    """Whether the transaction whose record sits at ``probe = (topic, partition, offset)`` committed (see the
    module docstring); ``properties`` are the sink's librdkafka settings, ``owner`` names the vertex in
    messages. An error of the cluster fails the job (a :class:`DagError`); no answer within ``timeout_s``
    restarts it (a :class:`RestartableError`: the restart asks again).

    >>> transaction_committed({"bootstrap.servers": "b:9092"}, ("counts", 0, 41), "vertex 'sink'")  # doctest: +SKIP
    True
    """
    kafka = confluent()
    topic, partition, offset = probe
    position = kafka.TopicPartition(topic, partition, offset)
    consumer = kafka.Consumer({**properties, "group.id": "jetspark-transaction-probe", "enable.auto.commit": False,
                               "isolation.level": "read_committed", "enable.partition.eof": True,
                               "auto.offset.reset": "error"})
    where = f"topic '{topic}' partition {partition} offset {offset}"
    deadline = time.monotonic() + timeout_s
    try:
        if partition >= fetch_partitions(consumer, (topic,), owner, properties)[topic]:
            _log.warning("%s: the restored snapshot's transaction wrote to %s, which the cluster does not have "
                         "(any more); sending its records again", owner, where)
            return False
        consumer.assign([position])
        while time.monotonic() < deadline:
            message = consumer.poll(_POLL_S)
            if message is None:
                continue
            error = message.error()
            if error is None:
                return message.offset() == offset
            code = error.code()
            if code == kafka.KafkaError._PARTITION_EOF:
                if message.offset() > offset:
                    return False  # read_committed skipped it: aborted
                if _high_watermark(consumer, position) <= offset:
                    return False  # the log does not hold it (any more)
                continue  # another producer's open transaction holds the stable offset back: wait
            if code == kafka.KafkaError._AUTO_OFFSET_RESET:  # the offset is out of the log's range
                low = consumer.get_watermark_offsets(position, timeout=max(deadline - time.monotonic(), 1.0))[0]
                if offset < low:
                    _log.warning("%s: the record of a restored transaction (%s) was removed by retention; taking "
                                 "the transaction as committed (its records are not sent again)", owner, where)
                    return True
                return False
            raise DagError(f"{owner}: reading {where} from {describe_servers(properties)} to see whether the "
                           f"restored snapshot's transaction committed failed: {error.str()}")
    except kafka.KafkaException as exc:
        raise DagError(f"{owner}: reading {where} from {describe_servers(properties)} to see whether the restored "
                       f"snapshot's transaction committed failed: {exc.args[0].str()}") from None
    finally:
        consumer.close()
    raise RestartableError(
        f"{owner}: could not tell within {timeout_s:g} s whether the restored snapshot's transaction committed: "
        f"{where} on {describe_servers(properties)} stayed behind the last stable offset (another producer's "
        "transaction open that long?); the job restarts and asks again")


def _high_watermark(consumer: Any, position: Any) -> int:
    """The partition's end offset, asked of the broker (not the consumer's cached value)."""
    return consumer.get_watermark_offsets(position, timeout=10.0, cached=False)[1]
