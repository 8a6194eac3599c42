"""Failure transport: a processor's exception on a worker becomes a clean ``JobFailedError`` on the driver.

On the worker, the vertex runner that sees an exception first records where it happened (vertex, global
processor index) on it. The stage task then calls :func:`encode_failure`: it sends the failure record
(vertex, processor index, exception type, message and the traceback of the user's code, all plain strings
and ints) to the driver on the job's authenticated channel as JSON (``jobchannel.py``), waits for the
driver's acknowledgement, and returns the :class:`TaskFailure` to raise, whose message carries only a short
summary and the record's random id (``jetspark-failure-id <32 hex digits>``).

On the driver, :func:`decode_failure` looks the ids found in Spark's error text up among the records the
channel received (nothing found in error text is ever decoded: the text may contain data), and falls back
to the job's first record (a user failure cancels the job group, so Spark's error then names no task) and
finally to :func:`summarize_spark_error`. A malformed record fails the job like any other failure.

The user traceback keeps the frames of user code (of jetspark's own packages only when the exception comes
from them, e.g. a built-in processor's check) and drops those of pyspark and of the runtime itself
(``dag/runtime``); the driver's notes (which processor, which method) are kept.

Chaining (:func:`chained`): Spark's exception becomes the ``JobFailedError``'s ``__cause__`` only when it
*is* the cause (a lost executor, a JVM out of memory, a dead Python worker). After a processor's failure
Spark's error is jetspark's own cancel of the other tasks, so a user's failure prints as their traceback
plus jetspark's message, without JVM frames.
"""

from __future__ import annotations

import logging
import os
import re
import time
import traceback
import uuid
from typing import TYPE_CHECKING, Any

from jetspark_base.errors import JobFailedError

if TYPE_CHECKING:
    from dag.runtime.common.jobchannel import ChannelRef, JobChannel

__all__ = ["ID_PREFIX", "TaskFailure", "mark_origin", "mark_infrastructure", "encode_failure", "decode_failure",
           "failure_record", "summarize_spark_error", "failed_task_index", "spark_is_cause", "chained"]

ID_PREFIX = "jetspark-failure-id "
_ID_RE = re.compile(re.escape(ID_PREFIX) + r"([0-9a-f]{32})")
_ORIGIN_ATTR = "_jetspark_origin"
_INFRASTRUCTURE_ATTR = "_jetspark_infrastructure"
_RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # dag/runtime
_ROOT = os.path.dirname(os.path.dirname(_RUNTIME_DIR))
_LIBRARY_DIRS = tuple(os.path.join(_ROOT, package) + os.sep
                      for package in ("dag", "processors", "edges", "pipeline", "connectors", "jetspark_cli", "jetspark_base"))
_ACK_TIMEOUT = 30.0
RECORD_WAIT = 5.0
"""Seconds the driver waits for the record of a failure id it found (normally stored before the task fails)."""

_log = logging.getLogger("jetspark.runtime")


class TaskFailure(RuntimeError):
    """Raised by a stage task: a one-line summary and the failure record's id (see the module docstring).
    ``record``: the failure record when the driver acknowledged it, else None."""

    def __init__(self, message: str, record: dict[str, Any] | None = None):
        super().__init__(message)
        self.record = record


def mark_origin(exc: BaseException, vertex: str, processor_index: int) -> None:
    """Record on ``exc`` the processor it came from, unless an inner (upstream) runner already did."""
    if getattr(exc, _ORIGIN_ATTR, None) is None:
        try:
            setattr(exc, _ORIGIN_ATTR, (vertex, processor_index))
        except (AttributeError, TypeError):  # exceptions with __slots__: report the stage instead
            pass


def mark_infrastructure(exc: BaseException) -> None:
    """Mark ``exc`` as an infrastructure failure (a lost task or link, not user code): its record says
    ``"restartable": True``, so a job that takes snapshots restarts (``snapshot_coordinator.is_restartable``)."""
    setattr(exc, _INFRASTRUCTURE_ATTR, True)


def _user_frames(exc: BaseException) -> str:
    """The traceback of ``exc`` as the user should read it: the frames of their code only, or, when the
    exception comes from jetspark's processor library itself, the library's frames (never pyspark's or the
    runtime's); then the exception line and its notes (which processor, which method)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "pyspark" not in f.filename and not f.filename.startswith(_RUNTIME_DIR)]
    users = [f for f in frames if not f.filename.startswith(_LIBRARY_DIRS)]
    frames = users or frames
    text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return text


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not hide the failure
        return f"<{type(exc).__qualname__} whose str() failed>"


def failure_record(exc: BaseException, stage_vertices: list[str], partition: int) -> dict[str, Any]:
    """The JSON-able failure record of ``exc`` (a fresh random ``id`` included)."""
    vertex, index = getattr(exc, _ORIGIN_ATTR, None) or (stage_vertices[0], partition)
    record = {
        "id": uuid.uuid4().hex,
        "vertex": str(vertex),
        "processor_index": int(index),
        "exc_type": type(exc).__qualname__,
        "exc_message": _text(exc),
        "user_traceback": _user_frames(exc),
        "time": time.time(),  # when the task reported it (a restart's timeline starts here)
    }
    if getattr(exc, _INFRASTRUCTURE_ATTR, False):
        record["restartable"] = True
    return record


def encode_failure(exc: BaseException, stage_vertices: list[str], partition: int,
                   channel: ChannelRef | None = None) -> TaskFailure:
    """Report ``exc`` on the job's ``channel`` and return the :class:`TaskFailure` for the task to raise.

    Without a channel (or when it cannot be reached) the exception only carries its one-line summary, which
    the driver reports like any Spark error.
    """
    record = failure_record(exc, stage_vertices, partition)
    summary = f"{record['exc_type']} in vertex '{record['vertex']}' processor #{record['processor_index']}"
    if channel is not None:
        try:
            channel.client().request("failure", record, as_json=True, timeout=_ACK_TIMEOUT)
            return TaskFailure(f"{summary} [{ID_PREFIX}{record['id']}]", record=record)
        except Exception as err:  # noqa: BLE001 - the driver may be gone; the task still fails
            _log.warning("jetspark: could not report a failure to the driver: %r", err)
    return TaskFailure(f"{summary}: {record['exc_message'][:500]}")


def _job_failed(record: dict, job_name: str, spark_error: BaseException) -> JobFailedError:
    message = (f"Job '{job_name}' failed: {record['exc_type']} in vertex '{record['vertex']}', processor "
               f"#{record['processor_index']}: {record['exc_message']}\n{record['user_traceback']}")
    fields = {k: record[k] for k in ("vertex", "processor_index", "exc_type", "exc_message", "user_traceback")}
    if isinstance(spark_error, JobFailedError) and spark_error.__cause__ is not None:
        spark_error = spark_error.__cause__  # the pipelined restart loop's "failed [id]", raised from Spark's error
    return chained(JobFailedError(message, job_name=job_name, **fields), spark_error)


_NOT_THE_CAUSE = ("SPARK_JOB_CANCELLED", "cancelled part of cancelled job group", "TaskFailure", ID_PREFIX)


def spark_is_cause(spark_error: BaseException) -> bool:
    """True when Spark's error is itself the cause of a job's failure: it names an infrastructure failure (an
    executor lost, a JVM out of memory, a Python worker that died) or is any other error of Spark's own. False
    when it only reports what jetspark did after a processor failed: its cancel of the job's other tasks
    (``[SPARK_JOB_CANCELLED] ... cancelled part of cancelled job group``, with a page of JVM frames) or the
    failing task's own :class:`TaskFailure`.

    >>> spark_is_cause(RuntimeError("[SPARK_JOB_CANCELLED] Job 0 cancelled part of cancelled job group x"))
    False
    >>> spark_is_cause(RuntimeError("ExecutorLostFailure (executor 1 exited caused by one of the running tasks)"))
    True
    """
    text = _text(spark_error)
    if _named_cause(text) is not None:
        return True
    return not any(marker in text for marker in _NOT_THE_CAUSE)


def chained(failed: JobFailedError, spark_error: BaseException | None) -> JobFailedError:
    """``failed`` with ``spark_error`` as its ``__cause__`` when :func:`spark_is_cause`, else with no cause and
    no context shown: a user's failure prints as their traceback and jetspark's message, nothing of the JVM.

    >>> chained(JobFailedError("x"), RuntimeError("[SPARK_JOB_CANCELLED] Job 0 cancelled")).__cause__ is None
    True
    >>> chained(JobFailedError("x"), RuntimeError("ExecutorLostFailure (exit code 137)")).__cause__
    RuntimeError('ExecutorLostFailure (exit code 137)')
    """
    if spark_error is not None and spark_is_cause(spark_error):
        failed.__cause__ = spark_error
    else:
        failed.__cause__ = None
        failed.__suppress_context__ = True
    return failed


def decode_failure(error: BaseException, job_name: str, channel: JobChannel | None) -> JobFailedError | None:
    """The ``JobFailedError`` for a failed Spark action: the record of a failure id found in its text, else the
    job's first failure record; None when the channel holds no record for this failure."""
    if channel is None:
        return None
    ids = _ID_RE.findall(_text(error))
    for failure_id in ids:
        record = channel.failure_record(failure_id, wait=RECORD_WAIT if failure_id == ids[-1] else 0.0)
        if record is not None:
            return _job_failed(record, job_name, error)
    record = channel.failure_record(None)
    return None if record is None else _job_failed(record, job_name, error)


_FAILED_TASK = re.compile(r"stage failure: Task (\d+) in stage \d+\.\d+ failed")


def failed_task_index(error: BaseException) -> int | None:
    """The partition index of the task Spark names first in a failed job's error (``Job aborted due to stage
    failure: Task 1 in stage 7.0 failed ...``, Spark's own words before any task's text), else None. It only
    chooses which processors an infrastructure failure without a record is reported against."""
    found = _FAILED_TASK.search(_text(error))
    return int(found.group(1)) if found else None


_EXIT = re.compile(r"exit(?:ed)?(?: with)?(?: code| status)?[: ]+(-?\d+)", re.IGNORECASE)
_CAUSES = (
    ("ExecutorLostFailure", "an executor was lost"),
    ("OutOfMemoryError", "a JVM ran out of memory: raise spark.driver.memory (local mode: the driver runs every "
                         "task) or spark.executor.memory in EngineConfig.spark_conf"),
    ("Python worker exited unexpectedly", "a Python worker died (killed, e.g. by the kernel's out-of-memory "
                                          "killer; raise the machine's memory or lower the parallelism)"),
)


def _named_cause(text: str) -> str | None:
    """A plain-words cause for Spark's infrastructure failures (executor lost with its exit code, OOM)."""
    for needle, cause in _CAUSES:
        if needle in text:
            if needle == "ExecutorLostFailure":
                code = _EXIT.search(text[text.index(needle):])
                cause += f" (exit code {code.group(1)})" if code else ""
            return cause
    return None


def summarize_spark_error(error: BaseException, job_name: str, python: str | None = None) -> JobFailedError:
    """A ``JobFailedError`` for a failure without a record (e.g. an executor lost): the cause in plain words
    when Spark's text names one, and the first meaningful line; ``error`` is chained as the cause when it is one
    (:func:`chained`). ``python``: the workers' Python (``SparkContext.pythonExec``), named when that Python
    cannot start or import a module (:func:`dag.runtime.common.cluster.explain_python_failure`)."""
    from dag.runtime.common.cluster import explain_python_failure

    text = _text(error)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = next((ln for ln in lines if "Exception" in ln or "Error" in ln), lines[0] if lines else repr(error))
    cause = explain_python_failure(text, python) or _named_cause(text)
    summary = f"{cause}: {first[:2000]}" if cause else first[:2000]
    failed = JobFailedError(f"Job '{job_name}' failed: {summary}", job_name=job_name,
                            exc_type=type(error).__name__, exc_message=summary)
    return chained(failed, error)
