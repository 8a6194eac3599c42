"""Job-level publication for ``write_file_p``: stage the whole job's files, publish them only on success.

The meta supplier of a (non-``exactly_once``) ``write_file_p`` runs on the driver once per job (once per
execution of a restarting job):

- ``init`` checks the directory (a path that exists but is no directory is refused with "is not a
  directory"), creates it, and creates the job's *staging directory* inside it,
  ``directory/.jetspark-job-<random>`` (hidden, on the same file system, so publishing is a rename). Every
  processor of the job writes its file ``<global processor index>`` there, never under a final name.
- ``close(None)`` (the job succeeded) publishes: each staged file is renamed to ``directory/<index>``
  (``os.replace``, atomic per file), or in append mode appended to it. Without append, numbered files an
  earlier run left in ``directory`` that this job did not write are deleted, so the directory then holds
  exactly this job's output (*stale output is replaced*: running with 4 then 2 processors leaves ``0`` and
  ``1``). Other files in ``directory`` are never touched. The staging directory is removed.
- ``close(error)`` (the job failed or was cancelled) removes the staging directory: nothing of the job is
  published. The runtime calls it after every task of the job has ended.

A pipelined job that restarts from a snapshot (guarantee other than NONE) inits the meta supplier again for
the same job: the staging directory is kept and the processors append to their staged files (the lines of
earlier executions stay; what followed the snapshot is written again: at-least-once). An execution from
scratch (guarantee NONE: ``job.restart()``) gets a new staging directory, the old one removed.

In a stream job (``context.unbounded``; also for ``exactly_once=True`` unless the guarantee is
``EXACTLY_ONCE``) nothing is staged: the processors append to the final files live (``processors.io.files``),
and ``init`` deletes the earlier run's numbered files (not with ``append=True``) once per job id, so a restart,
which inits the meta supplier again, keeps what the job already wrote.

Publication renames file by file after the last task ended (as Spark's ``FileOutputCommitter`` moves task
output at job commit): a reader that lists the directory during those milliseconds may see part of the new
set. The driver and the processors must see the same file system (local mode, ``local-cluster``, or a shared
file system on a cluster); a processor that finds no staging directory fails the job saying so. A driver that
dies mid-job leaves its hidden ``.jetspark-job-*`` directory behind (delete it by hand).
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, Callable

from jetspark_base.errors import DagValidationError
from processors.api.suppliers import ProcessorMetaSupplier, ProcessorSupplier


def _is_none(context: Any) -> bool:
    guarantee = getattr(context, "processing_guarantee", None)
    return getattr(guarantee, "value", guarantee) in (None, "NONE")

__all__ = ["STAGING_PREFIX", "WriteFileMetaSupplier", "checked_directory", "is_exactly_once"]

STAGING_PREFIX = ".jetspark-job-"
_log = logging.getLogger("jetspark.write_file_p")


def is_exactly_once(context: Any) -> bool:
    """Whether ``context``'s job runs with the ``EXACTLY_ONCE`` guarantee."""
    guarantee = getattr(context, "processing_guarantee", None)
    return getattr(guarantee, "value", guarantee) == "EXACTLY_ONCE"


def checked_directory(directory: str, vertex: str) -> Path:
    """``directory`` created if missing; a path that exists but is no directory is a clear error."""
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise DagValidationError(
            f"write_file_p (vertex '{vertex}'): '{directory}' is not a directory (it is a file); pass the path "
            "of a directory to write the processors' files into"
        )
    path.mkdir(parents=True, exist_ok=True)
    return path


class WriteFileMetaSupplier(ProcessorMetaSupplier):
    """The meta supplier of ``write_file_p`` (see the module docstring).

    ``factory(staging, append)`` returns a new processor writing into ``staging`` (a path, or None outside a
    job, where each processor publishes its own file in ``complete()``).
    """

    def __init__(self, directory: str, factory: Callable[..., Any], append: bool, staged: bool = True):
        self._directory, self._factory, self._append, self._staged = directory, factory, append, staged
        self._staging: Path | None = None
        self._vertex = ""
        self._replaced_for: int | None = None  # the job whose live output replaced the earlier run's
        self._staged_for: int | None = None  # the job that made the staging directory
        self._resumed = False  # this execution restarts from a snapshot: processors append to their staged files

    def init(self, context: Any) -> None:
        self._vertex = context.vertex_name
        path = checked_directory(self._directory, self._vertex)
        if getattr(context, "unbounded", False) and (self._staged or not is_exactly_once(context)):
            if not self._append and self._replaced_for != context.job_id:  # once per job, not per restart
                self._replaced_for = context.job_id
                self._remove_numbered(path, keep=set())
            return
        if self._staged:
            earlier, self._staging, self._resumed = self._staging, None, False
            if earlier is not None and earlier.exists():
                if self._staged_for == context.job_id and not _is_none(context):  # a restart from a snapshot
                    self._staging, self._resumed = earlier, True
                    return
                shutil.rmtree(earlier, ignore_errors=True)  # an execution from scratch starts clean
            self._staging = path / f"{STAGING_PREFIX}{uuid.uuid4().hex}"
            self._staging.mkdir()
            self._staged_for = context.job_id

    def get(self, member_indices: list[int]) -> Callable[[int], ProcessorSupplier]:
        staging = None if self._staging is None else str(self._staging)
        supplier = ProcessorSupplier.of(functools.partial(self._factory, staging, self._append, resume=self._resumed))
        return lambda member: supplier

    def close(self, error: BaseException | None) -> None:
        staging, self._staging = self._staging, None
        if staging is None or not staging.exists():
            return
        try:
            if error is None:
                self._publish(staging)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _publish(self, staging: Path) -> None:
        directory = staging.parent
        written = {p.name for p in staging.iterdir() if p.name.isdigit()}
        for name in sorted(written, key=int):
            if self._append:
                with open(staging / name, "rb") as src, open(directory / name, "ab") as dst:
                    shutil.copyfileobj(src, dst)
            else:
                os.replace(staging / name, directory / name)
        if not self._append:
            self._remove_numbered(directory, keep=written)

    def _remove_numbered(self, directory: Path, keep: set[str]) -> None:
        """Delete the numbered files an earlier run left in ``directory`` (but those in ``keep``)."""
        for stale in directory.iterdir():
            if stale.name.isdigit() and stale.name not in keep and stale.is_file():
                _log.info("write_file_p (vertex '%s'): removing %s of an earlier run", self._vertex, stale)
                stale.unlink()

    def __repr__(self) -> str:
        return f"write_file_p({self._directory!r})"
