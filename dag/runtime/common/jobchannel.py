"""The job's channel: how the tasks of one job talk back to its driver (pure Python, no pyspark).

Every job opens one :class:`JobChannel` on the driver: a :class:`~dag.runtime.common.channel.DriverChannel` with a
fresh per-job secret, listening on loopback in local mode and on the driver's host (``spark.driver.host``)
on a cluster. Its :class:`ChannelRef` (address and secret, a small picklable value) travels to the tasks
inside the task closure; a task calls :func:`task_client` (``ref.client()``) for its process's cached
:class:`~dag.runtime.common.channel.ChannelClient` (one connection per worker process and job, opened on first
use, reused by every task of the job that the process runs, dropped after a connection error).

Topics (the bodies of these two are plain JSON data, so the driver decodes them without ``pickle``; the
collection topics of ``driver_topics``, registered on every job's channel, carry pickled items, which the
channel decodes only from peers that passed its handshake):

- ``"failure"`` (request, answered once the record is stored): a task that fails sends
  ``{"id", "vertex", "processor_index", "exc_type", "exc_message", "user_traceback"}`` (see
  ``failures.py``) before it raises an exception that carries only the short random id. The driver stores
  the record and calls the job's ``on_failure`` hook (the job cancels its Spark job group there, so a user
  exception fails the job at once even though Spark may retry tasks).
- ``"log"``: reserved for processors' log records forwarded to the driver's ``logging``; registered with
  :meth:`JobChannel.register` by whoever implements it.
- ``"source.deal"`` (request): a task of a STAGED driver source asks for its next chunk of entries
  (``dealer.py``); registered by the run when its plan deals a source.

>>> channel = JobChannel("local[2]")
>>> channel.ref.client().request("failure", {"id": "f1", "vertex": "v", "processor_index": 0,
...     "exc_type": "ValueError", "exc_message": "bad", "user_traceback": ""}, as_json=True)
>>> channel.failure_record("f1")["vertex"]
'v'
>>> channel.close()
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

from dag.runtime.common.channel import ChannelClient, DriverChannel, bind_host, new_secret, typed_fields

__all__ = ["ChannelRef", "JobChannel", "task_client"]

_log = logging.getLogger("jetspark.runtime")
_MAX_CACHED_CLIENTS = 8
_FIELDS = {"id": str, "vertex": str, "processor_index": int, "exc_type": str, "exc_message": str,
           "user_traceback": str}


@dataclass(frozen=True)
class ChannelRef:
    """Where a task reaches its job's driver channel: ``address`` and the per-job ``secret``."""

    address: tuple[str, int]
    secret: bytes

    def client(self) -> ChannelClient:
        """This process's cached client for the channel (see :func:`task_client`)."""
        return task_client(self)


_clients: OrderedDict[ChannelRef, ChannelClient] = OrderedDict()
_clients_lock = threading.Lock()


def task_client(ref: ChannelRef) -> ChannelClient:
    """The worker process's client for ``ref`` (created on first use; the oldest of more than eight jobs'
    clients is closed, since a reused worker process serves job after job)."""
    with _clients_lock:
        client = _clients.get(ref)
        if client is None:
            client = _clients[ref] = _ResettingClient(ref.address, ref.secret)
            while len(_clients) > _MAX_CACHED_CLIENTS:
                _clients.popitem(last=False)[1].close()
        else:
            _clients.move_to_end(ref)
        return client


class _ResettingClient(ChannelClient):
    """A client that drops its connection after an error, so the next message reconnects."""

    def send(self, topic: str, body: Any, *, as_json: bool = False) -> None:
        try:
            super().send(topic, body, as_json=as_json)
        except OSError:
            self.close()
            raise

    def request(self, topic: str, body: Any, *, as_json: bool = False, timeout: float | None = None) -> Any:
        try:
            return super().request(topic, body, as_json=as_json, timeout=timeout)
        except OSError:
            self.close()
            raise


class JobChannel:
    """The driver side: a per-job :class:`DriverChannel` that stores the failure records of the job's tasks.

    Args:
        master: Spark's master URL (loopback for local masters).
        driver_host: the address executors reach the driver at (required for a non-local master).
        on_failure: called with each stored failure record (on the channel's reader thread: keep it short).
    """

    def __init__(self, master: str | None, driver_host: str | None = None,
                 on_failure: Callable[[dict], None] | None = None):
        secret = new_secret()
        self._server = DriverChannel(secret, bind_host(master, driver_host))
        self.ref = ChannelRef(tuple(self._server.address), secret)  # type: ignore[arg-type]
        self._records: dict[str, dict] = {}
        self._order: list[str] = []
        self._arrived = threading.Condition()
        self._on_failure = on_failure
        self._server.register("failure", self.store_failure)

    def register(self, topic: str, handler: Callable[[Any], Any]) -> None:
        """Handle messages of another topic (e.g. ``"log"``); see :meth:`DriverChannel.register`."""
        self._server.register(topic, handler)

    def store_failure(self, body: Any) -> None:
        """Store a failure record (a task's, arriving on the channel, or the driver's own, e.g. a lost task)
        and tell the job (``on_failure``)."""
        record = validated_record(body)
        with self._arrived:
            if record["id"] not in self._records:
                self._records[record["id"]] = record
                self._order.append(record["id"])
            self._arrived.notify_all()
        if self._on_failure is not None:
            self._on_failure(record)

    def failure_record(self, failure_id: str | None = None, wait: float = 0.0) -> dict | None:
        """The record of ``failure_id`` (or the first record of the job when None), waiting up to ``wait`` s."""
        with self._arrived:
            self._arrived.wait_for(lambda: self._find(failure_id) is not None, timeout=wait)
            return self._find(failure_id)

    def record_count(self) -> int:
        """How many failure records arrived so far."""
        with self._arrived:
            return len(self._order)

    def records_since(self, count: int) -> list[dict]:
        """The records that arrived after the first ``count`` (a restarted job's newer failures)."""
        with self._arrived:
            return [self._records[i] for i in self._order[count:]]

    def _find(self, failure_id: str | None) -> dict | None:
        if failure_id is None:
            return self._records[self._order[0]] if self._order else None
        return self._records.get(failure_id)

    def close(self) -> None:
        self._server.close()


def validated_record(body: Any) -> dict:
    """``body`` checked to be a failure record of plain strings and ints (``ValueError`` otherwise)."""
    record = typed_fields(body, _FIELDS, "failure record")
    when = body.get("time")  # optional: when the task reported it (seconds since the epoch)
    if isinstance(when, (int, float)) and not isinstance(when, bool):
        record["time"] = float(when)
    if body.get("restartable") is True:  # optional: an infrastructure failure (failures.mark_infrastructure)
        record["restartable"] = True
    return record
