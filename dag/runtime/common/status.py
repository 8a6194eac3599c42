"""``JobStatus``: the states of a job (Jet's ``JobStatus``), below every module that reads or sets them.

``Job`` reports it, the runtimes set it (``SUSPENDED`` and back to ``RUNNING`` come from the pipelined
runtime's suspension loop), the web UI and Prometheus show it; none of them needs another for it.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["JobStatus"]


class JobStatus(str, Enum):
    """Jet's job states. A batch job goes through NOT_RUNNING, STARTING, RUNNING, COMPLETING and COMPLETED or
    FAILED; a PIPELINED job may also be SUSPENDED (not terminal)."""

    NOT_RUNNING = "NOT_RUNNING"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"  # a PIPELINED job stopped by job.suspend() after a snapshot; job.resume() restarts it
    COMPLETING = "COMPLETING"
    FAILED = "FAILED"
    COMPLETED = "COMPLETED"

    @property
    def is_terminal(self) -> bool:
        return self in (JobStatus.FAILED, JobStatus.COMPLETED)
