"""Failure transport: a processor's exception on a worker becomes a clean ``JobFailedError`` on the driver.

On the worker, the vertex runner that sees an exception first records where it happened (vertex, global
processor index) on it; the stage task then raises :class:`TaskFailure`, whose message carries one marker
line ``JETSPARK-FAILURE:<base64 of a pickled dict>`` (vertex, processor index, exception type, message and the
traceback of the user's code). Spark ships that message to the driver inside a wall of JVM and py4j text;
:func:`decode_failure` finds the marker and rebuilds a ``JobFailedError`` without the wall.

The user traceback keeps the frames of user code and of the processor library, and drops those of pyspark
and of the runtime itself (``dag/runtime``); the driver's notes (which processor, which method) are kept.
"""

from __future__ import annotations

import base64
import os
import pickle
import re
import traceback
from typing import Any

from dag.errors import JobFailedError

__all__ = ["MARKER", "TaskFailure", "mark_origin", "encode_failure", "decode_failure"]

MARKER = "JETSPARK-FAILURE:"
_MARKER_RE = re.compile(re.escape(MARKER) + r"([A-Za-z0-9+/=]+)")
_ORIGIN_ATTR = "_jetspark_origin"
_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))


class TaskFailure(RuntimeError):
    """Raised by a stage task; its message carries the marker line (see the module docstring)."""


def mark_origin(exc: BaseException, vertex: str, processor_index: int) -> None:
    """Record on ``exc`` the processor it came from, unless an inner (upstream) runner already did."""
    if getattr(exc, _ORIGIN_ATTR, None) is None:
        try:
            setattr(exc, _ORIGIN_ATTR, (vertex, processor_index))
        except (AttributeError, TypeError):  # exceptions with __slots__: report the stage instead
            pass


def _user_frames(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "pyspark" not in f.filename and not f.filename.startswith(_RUNTIME_DIR)]
    text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return text


def encode_failure(exc: BaseException, stage_vertices: list[str], partition: int) -> TaskFailure:
    """The :class:`TaskFailure` to raise in a task for ``exc``."""
    vertex, index = getattr(exc, _ORIGIN_ATTR, None) or (stage_vertices[0], partition)
    payload = {
        "vertex": vertex,
        "processor_index": index,
        "exc_type": type(exc).__qualname__,
        "exc_message": str(exc),
        "user_traceback": _user_frames(exc),
    }
    blob = base64.b64encode(pickle.dumps(payload, protocol=4)).decode("ascii")
    return TaskFailure(f"{type(exc).__qualname__} in vertex '{vertex}' processor #{index}\n{MARKER}{blob}\n")


def decode_failure(error: BaseException, job_name: str) -> JobFailedError | None:
    """The ``JobFailedError`` carried by a Spark/py4j ``error``, or None when it carries no marker."""
    match = _MARKER_RE.search(str(error))
    if match is None:
        return None
    payload: dict[str, Any] = pickle.loads(base64.b64decode(match.group(1)))
    message = (f"Job '{job_name}' failed: {payload['exc_type']} in vertex '{payload['vertex']}', processor "
               f"#{payload['processor_index']}: {payload['exc_message']}\n{payload['user_traceback']}")
    return JobFailedError(message, job_name=job_name, **payload)


def summarize_spark_error(error: BaseException, job_name: str) -> JobFailedError:
    """A ``JobFailedError`` for a failure without marker (e.g. an executor lost): the first meaningful line."""
    text = str(error)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = next((ln for ln in lines if "Exception" in ln or "Error" in ln), lines[0] if lines else repr(error))
    return JobFailedError(f"Job '{job_name}' failed: {first[:2000]}", job_name=job_name,
                          exc_type=type(error).__name__, exc_message=first[:2000])
