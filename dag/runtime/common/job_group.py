"""A job's Spark job group (``jetspark-<job id>``): cancelling it and waiting until its tasks are gone.

Every Spark job a jetspark job submits runs in the job's group, so cancelling the group cancels exactly that
job's Spark work. Both runtimes use these helpers: the job when it fails or is cancelled, the staged runtime's
cancel, the pipelined runtime's failure hook and its restarts.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

__all__ = ["TASKS_GONE_TIMEOUT", "active_tasks", "await_tasks_gone", "cancel_in_background", "group_id_of"]

TASKS_GONE_TIMEOUT = 60.0
"""Seconds a failed or cancelled job waits for Spark to report its killed tasks ended (then it logs them)."""
_log = logging.getLogger("jetspark.runtime")


def group_id_of(job_id: int) -> str:
    """The Spark job group of job ``job_id``.

    >>> group_id_of(7)
    'jetspark-7'
    """
    return f"jetspark-{job_id}"


def cancel_in_background(sc: Any, group_id: str, job_id: int) -> None:
    """Cancel the job group ``group_id`` from a daemon thread (a channel handler must not block on Spark)."""
    threading.Thread(target=sc.cancelJobGroup, args=(group_id,), name=f"jetspark-fail-{job_id}",
                     daemon=True).start()


def active_tasks(sc: Any, group_id: str) -> int:
    """How many tasks of the job group ``group_id`` Spark reports running now."""
    tracker = sc.statusTracker()
    active = 0
    for job_id in tracker.getJobIdsForGroup(group_id):
        info = tracker.getJobInfo(job_id)
        for stage_id in (info.stageIds if info is not None else ()):
            stage = tracker.getStageInfo(stage_id)
            active += stage.numActiveTasks if stage is not None else 0
    return active


def await_tasks_gone(sc: Any, group_id: str, timeout: float = TASKS_GONE_TIMEOUT, warn: bool = True) -> None:
    """Wait until Spark reports no running task in the job group ``group_id`` (killed tasks included: Spark
    kills a cancelled task's Python worker after ``spark.python.task.killTimeout``), at most ``timeout``
    seconds; then, with ``warn``, log how many still run."""
    deadline = time.monotonic() + timeout
    while True:
        active = active_tasks(sc, group_id)
        if active == 0:
            return
        if time.monotonic() > deadline:
            if warn:
                _log.warning("jetspark: %d task(s) of job group %s still running %.0f s after the job ended",
                             active, group_id, timeout)
            return
        time.sleep(0.1)
