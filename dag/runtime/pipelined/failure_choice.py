"""Which failure a failed pipelined execution reports: a processor's own failure, not the broken links it caused.

When a processor fails, its task reports the failure to the driver and stops (``runner.py``: the report comes
first, while the task's links are still open). Its peers then see their links to it break and report that too,
as *infrastructure* failures (``"restartable": True`` in the record). Spark fails the stage with whichever task
failed first, so the record Spark's error names may be such an echo. :func:`choose_failure` picks:

1. the record named in Spark's error (the last id found in its text), else the first record of the execution;
2. if that one is an infrastructure record, the execution's first record that is not, waiting for it while a
   task of the job still runs (at most :data:`CAUSE_WAIT` seconds): a processor's failure record is
   acknowledged by the driver before its task ends, so none can come after the last task ended.

Both the execution loop of a job without snapshots (``suspension.py``) and the restart loop of a job with
snapshots (``restarts.py``) choose this way, and raise :func:`naming` the chosen record: the job reports the
record whose id the error names (``failures.decode_failure``).
"""

from __future__ import annotations

import time
from typing import Any, Callable

from dag.runtime.common.failures import _ID_RE, ID_PREFIX, RECORD_WAIT, _text
from jetspark_base.errors import JobFailedError

__all__ = ["CAUSE_WAIT", "choose_failure", "naming"]

CAUSE_WAIT = 5.0
"""At most this many seconds a broken link's failure waits for a peer's own failure that may have caused it."""
_POLL = 0.02


def choose_failure(channel: Any, error: BaseException | None, records_before: int,
                   tasks_running: Callable[[], bool]) -> dict | None:
    """The failure record of the execution that failed with Spark's ``error`` (None: the tasks ended after
    reporting), among the ``channel``'s records after the first ``records_before`` (see the module docstring);
    None when no task reported one."""
    ids = _ID_RE.findall(_text(error)) if error is not None else []
    chosen = None
    for failure_id in reversed(ids):
        chosen = channel.failure_record(failure_id, wait=RECORD_WAIT if failure_id == ids[-1] else 0.0)
        if chosen is not None:
            break
    if chosen is None:
        recent = channel.records_since(records_before)
        chosen = recent[0] if recent else None
    if chosen is None or not chosen.get("restartable"):
        return chosen
    deadline = time.monotonic() + CAUSE_WAIT
    while True:
        cause = next((r for r in channel.records_since(records_before) if not r.get("restartable")), None)
        if cause is not None:
            return cause
        if not tasks_running() or time.monotonic() >= deadline:
            return chosen
        time.sleep(_POLL)


def naming(job_name: str, record: dict) -> JobFailedError:
    """The error that makes job ``job_name`` report ``record`` (its id in the text; raise it from Spark's error).

    >>> str(naming("j", {"id": "ab12"})).endswith("ab12]")
    True
    """
    return JobFailedError(f"Job '{job_name}' failed [{ID_PREFIX}{record['id']}]")
