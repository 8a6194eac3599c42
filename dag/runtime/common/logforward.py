"""Processor log records reach the driver's ``logging`` (pure Python, no pyspark).

Processors log on ``context.logger`` (``jetspark.<vertex>#<global index>``; ``peek_input_p``,
``peek_output_p``, ``peek_snapshot_p`` and ``write_logger_p`` use it too) inside Spark's Python workers, where
no logging is configured. So, for the time a task runs a processor, the runtime puts a
:class:`ChannelLogHandler` on that logger (:func:`forwarding`): it sends every record as plain JSON data on the
job's channel (topic ``"log"``, see ``jobchannel.py``), and the driver's handler :func:`reemit` rebuilds the
record and hands it to the driver's logger of the same name, so the driver's levels, handlers and formatters
apply (``logging.basicConfig(level=logging.INFO)`` on the driver shows ``peek_input_p``'s lines).

- **Level.** The driver's effective level for each processor's logger is computed when the job starts
  (:func:`driver_level`) and set on the worker's logger, so records the driver would drop are not even sent.
- **Order.** A worker process holds one connection per job and the driver handles a connection's messages in
  arrival order, so each processor's records are re-emitted in the order they were logged.
- **Before ``join()`` returns.** When a processor that logged finishes (or fails), its task asks the driver
  ``"log.flush"`` on the same connection and waits for the answer, which comes after every earlier record of
  that connection was re-emitted; Spark's task ends only after that, and the job after its tasks.

Any runtime uses the same two ends: :func:`forwarding` around a processor's run on the worker (with a
``jobchannel.ChannelRef`` or anything with a ``client()`` method) and :func:`register_log_topics` on the job's
channel on the driver.

>>> record = logging.LogRecord("jetspark.v#0", logging.INFO, "f.py", 3, "item %s", ("a",), None)
>>> record_to_data(record)["msg"]
'item a'
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable

from dag.runtime.common.channel import typed_fields

__all__ = ["LOG_TOPIC", "FLUSH_TOPIC", "ChannelLogHandler", "forwarding", "record_to_data", "reemit",
           "register_log_topics", "driver_level"]

LOG_TOPIC = "log"
FLUSH_TOPIC = "log.flush"
_PREFIX = "jetspark."
_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str, "levelno": int, "msg": str, "created": (int, float), "pathname": str, "lineno": int,
    "funcName": str, "process": int, "threadName": str,
}
_OPTIONAL = ("exc_text", "stack_info")


def record_to_data(record: logging.LogRecord) -> dict:
    """``record`` as plain data: the formatted message, where it was logged, and its formatted exception."""
    exc_text = record.exc_text
    if exc_text is None and record.exc_info:
        exc_text = logging.Formatter().formatException(record.exc_info)
    return {"name": record.name, "levelno": record.levelno, "msg": record.getMessage(), "created": record.created,
            "pathname": record.pathname, "lineno": record.lineno, "funcName": record.funcName or "",
            "process": record.process or 0, "threadName": record.threadName or "", "exc_text": exc_text,
            "stack_info": record.stack_info}


class ChannelLogHandler(logging.Handler):
    """Worker side: sends each record (:func:`record_to_data`) on ``client()``'s ``"log"`` topic.

    After a failure to send, it stops sending and says so once on the worker's stderr.
    """

    def __init__(self, client: Callable[[], Any], level: int = logging.NOTSET):
        super().__init__(level)
        self._client = client
        self.sent = 0
        self._broken = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._broken or getattr(record, "jetspark_forwarded", False):  # never send a re-emitted record back
            return
        try:
            self._client().send(LOG_TOPIC, record_to_data(record), as_json=True)
            self.sent += 1
        except Exception as exc:  # noqa: BLE001 - logging must never fail the processor
            self._broken = True
            sys.stderr.write(f"jetspark: log records of {record.name} no longer reach the driver: {exc!r}\n")

    def flush_to_driver(self) -> None:
        """Wait until the driver re-emitted every record this handler sent (no-op when none was sent)."""
        if self.sent and not self._broken:
            self._client().request(FLUSH_TOPIC, None, as_json=True)


@contextmanager
def forwarding(logger: logging.Logger, channel: Any, level: int | None) -> Iterator[None]:
    """Forward ``logger``'s records at ``level`` and above to the driver while the block runs (see the module
    docstring); ``channel`` has a ``client()`` method (a ``ChannelRef``). No-op when ``channel`` or ``level`` is
    None (no driver to send to)."""
    if channel is None or level is None:
        yield
        return
    handler = ChannelLogHandler(channel.client, level)
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False  # the worker has no logging of its own: the driver shows the record
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        try:
            handler.flush_to_driver()
        except Exception as exc:  # noqa: BLE001 - never hide the processor's own outcome
            sys.stderr.write(f"jetspark: could not confirm {logger.name}'s log records reached the driver: {exc!r}\n")


def driver_level(name: str) -> int:
    """The driver's effective level for the logger ``name`` (without creating it when it does not exist)."""
    existing = logging.root.manager.loggerDict.get(name)
    if isinstance(existing, logging.Logger):
        return existing.getEffectiveLevel()
    return logging.getLogger("jetspark").getEffectiveLevel()


def _validated(body: Any) -> dict:
    fields = typed_fields(body, _FIELDS, "log record")
    for key in _OPTIONAL:
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"log record field {key!r} must be a string or null")
        fields[key] = value
    if not fields["name"].startswith(_PREFIX):
        raise ValueError(f"log records must come from jetspark.* loggers, got {fields['name']!r}")
    return fields


def reemit(body: Any, on_record: Callable[[dict], None] | None = None) -> None:
    """Driver side: rebuild the record of ``body`` and hand it to the driver's logger of the same name;
    ``on_record`` also gets the validated fields (the job keeps its last records for its web page)."""
    fields = _validated(body)
    if on_record is not None:
        on_record(fields)
    logger = logging.getLogger(fields["name"])
    if not logger.isEnabledFor(fields["levelno"]):
        return
    fields["levelname"] = logging.getLevelName(fields["levelno"])
    fields["args"] = None
    fields["processName"] = "spark-worker"
    fields["jetspark_forwarded"] = True
    logger.handle(logging.makeLogRecord(fields))


def register_log_topics(job_channel: Any, on_record: Callable[[dict], None] | None = None) -> None:
    """Install the driver's handlers of ``"log"`` and ``"log.flush"`` on a job's channel; ``on_record`` (if
    given) sees every record's fields too (see :func:`reemit`)."""
    job_channel.register(LOG_TOPIC, lambda body: reemit(body, on_record))
    job_channel.register(FLUSH_TOPIC, lambda body: None)
