"""The snapshot store of PIPELINED jobs: files under ``EngineConfig.snapshot_dir``, written so that a crash at
any moment never leaves a snapshot that looks complete.

Layout (one directory per job, one per snapshot id, one per vertex)::

    <snapshot_dir>/<job_key>/
        snapshot-0000000007/
            <quoted vertex name>/<global processor index>.snap   the processor's saved entries
            COMPLETE                                            written last, by the coordinator

- A processor's entries go to a temporary file (``.tmp-...``, a name starting with ``.``) in the vertex
  directory, which is flushed, ``fsync``-ed and renamed to ``<index>.snap`` (an atomic ``os.replace``); the
  directory is ``fsync``-ed too. Workers on any executor write their own processors' files, so on a cluster the
  directory must be shared by the driver and every executor.
- The coordinator writes ``COMPLETE`` (JSON: snapshot id, processor count per vertex) the same way once every
  processor reported its file durable. Only a snapshot with ``COMPLETE`` is ever restored; a crash mid-write
  leaves at worst a directory without it, which :meth:`SnapshotStore.discard_incomplete` deletes.
- Once snapshot n completes, :meth:`SnapshotStore.prune` deletes every older snapshot (Jet keeps only the
  latest successful one).
- A ``.snap`` file is ``MAGIC`` + HMAC-SHA256 (per-job secret) of the payload + the payload (pickled list of
  ``(key, value)`` entries). The MAC is checked with ``hmac.compare_digest`` before a byte is unpickled, so a
  file that someone else put into a shared directory is refused, never executed.

>>> import tempfile
>>> store = SnapshotStore(tempfile.mkdtemp(), "job-1", secret=b"k" * 32)
>>> store.write(0, "counter", 0, [("a", 1)])
>>> store.latest_complete() is None
True
>>> store.mark_complete(0, {"counter": 1})
>>> store.latest_complete(), store.read(0, "counter")
(0, [('a', 1)])
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pickle
import re
import shutil
import tempfile
import urllib.parse
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

from jetspark_base.errors import DagValidationError, JobFailedError

__all__ = ["SnapshotStore", "resolve_snapshot_dir", "MAGIC", "COMPLETE_MARKER"]

MAGIC = b"JETSPARK-SNAPSHOT-1\n"
COMPLETE_MARKER = "COMPLETE"
_SNAPSHOT_DIR = re.compile(r"^snapshot-(\d{10})$")
_MAC_SIZE = hashlib.sha256().digest_size


def resolve_snapshot_dir(snapshot_dir: str | None, *, local: bool) -> tuple[str, bool]:
    """``(directory, is_temporary)`` for ``EngineConfig.snapshot_dir``: a new temporary directory when it is
    ``None`` in local mode; on a cluster ``None`` is a ``DagValidationError`` (the directory must be shared).

    >>> resolve_snapshot_dir("/shared/snaps", local=False)
    ('/shared/snaps', False)
    """
    if snapshot_dir is not None:
        return str(snapshot_dir), False
    if local:
        return tempfile.mkdtemp(prefix="jetspark-snapshots-"), True
    raise DagValidationError(
        "EngineConfig.snapshot_dir is None, but this engine runs on a cluster and the job takes snapshots "
        "(processing_guarantee EXACTLY_ONCE or AT_LEAST_ONCE): set EngineConfig(snapshot_dir=...) to a directory "
        "that the driver and every executor share (NFS, a mounted volume), or use ProcessingGuarantee.NONE"
    )


class SnapshotStore:
    """The snapshots of one job under ``directory/job_key`` (see the module docstring).

    ``secret`` is the per-job key that signs every file; the driver and the workers of the job share it.
    """

    def __init__(self, directory: str | os.PathLike, job_key: str, *, secret: bytes):
        if not secret:
            raise DagValidationError("SnapshotStore: secret must be non-empty bytes (the per-job key)")
        self.job_dir = Path(directory) / _safe_name(job_key)
        self._secret = bytes(secret)

    # ---- paths -------------------------------------------------------------------------------------------
    def snapshot_path(self, snapshot_id: int) -> Path:
        """The directory of snapshot ``snapshot_id``."""
        return self.job_dir / f"snapshot-{snapshot_id:010d}"

    def _file(self, snapshot_id: int, vertex: str, processor_index: int) -> Path:
        return self.snapshot_path(snapshot_id) / _safe_name(vertex) / f"{processor_index}.snap"

    # ---- writing (workers and coordinator) ---------------------------------------------------------------
    def write(self, snapshot_id: int, vertex: str, processor_index: int, entries: Iterable[tuple]) -> None:
        """Store the entries one processor saved for ``snapshot_id``; durable when this returns."""
        payload = pickle.dumps(list(entries), protocol=pickle.HIGHEST_PROTOCOL)
        mac = hmac.new(self._secret, payload, hashlib.sha256).digest()
        _atomic_write(self._file(snapshot_id, vertex, processor_index), MAGIC + mac + payload)

    def mark_complete(self, snapshot_id: int, processors: Mapping[str, int],
                      done: Mapping[str, Iterable[int]] | None = None) -> None:
        """Mark ``snapshot_id`` complete: every vertex in ``processors`` (name -> processor count) wrote all its
        files, except the processors listed in ``done`` (name -> global indices of processors that had completed
        and saved nothing). Written last, atomically: a snapshot without the marker is never restored."""
        done_sets = {vertex: sorted(set(indices)) for vertex, indices in (done or {}).items()}
        missing = [f"{vertex}#{index}" for vertex, count in processors.items() for index in range(count)
                   if index not in done_sets.get(vertex, ()) and not self._file(snapshot_id, vertex, index).is_file()]
        if missing:
            raise JobFailedError(
                f"snapshot {snapshot_id} cannot be marked complete: no file for processor(s) "
                f"{', '.join(missing[:10])} under {self.snapshot_path(snapshot_id)}; the directory must be shared "
                "by the driver and every executor (EngineConfig.snapshot_dir)"
            )
        meta = {"snapshot_id": snapshot_id, "processors": dict(processors), "done": done_sets}
        _atomic_write(self.snapshot_path(snapshot_id) / COMPLETE_MARKER, json.dumps(meta).encode("utf-8"))

    def size_bytes(self, snapshot_id: int) -> int:
        """The bytes the files of snapshot ``snapshot_id`` take (0 when it is gone)."""
        total = 0
        for path in self.snapshot_path(snapshot_id).rglob("*"):
            try:
                total += path.stat().st_size if path.is_file() else 0
            except OSError:  # pruned meanwhile
                pass
        return total

    # ---- reading (coordinator, on restore) ---------------------------------------------------------------
    def snapshot_ids(self) -> list[int]:
        """Ids of every snapshot directory present, complete or not, ascending."""
        if not self.job_dir.is_dir():
            return []
        ids = (_SNAPSHOT_DIR.match(p.name) for p in self.job_dir.iterdir())
        return sorted(int(m.group(1)) for m in ids if m)

    def is_complete(self, snapshot_id: int) -> bool:
        return (self.snapshot_path(snapshot_id) / COMPLETE_MARKER).is_file()

    def latest_complete(self) -> int | None:
        """The highest complete snapshot id, or ``None`` when there is none."""
        complete = [i for i in self.snapshot_ids() if self.is_complete(i)]
        return complete[-1] if complete else None

    def _meta(self, snapshot_id: int) -> dict:
        return json.loads((self.snapshot_path(snapshot_id) / COMPLETE_MARKER).read_text("utf-8"))

    def processors(self, snapshot_id: int) -> dict[str, int]:
        """Vertex name -> processor count of a complete snapshot (from its marker)."""
        return dict(self._meta(snapshot_id)["processors"])

    def done_processors(self, snapshot_id: int) -> dict[str, list[int]]:
        """Vertex name -> global indices of the processors that had completed when ``snapshot_id`` was taken."""
        return {vertex: list(indices) for vertex, indices in self._meta(snapshot_id).get("done", {}).items()}

    def read(self, snapshot_id: int, vertex: str) -> list[tuple]:
        """Every entry of ``vertex`` in complete snapshot ``snapshot_id`` (all its processors, in index order);
        ``[]`` when the vertex is not in the snapshot."""
        meta = self._meta(snapshot_id)
        count, done = meta["processors"].get(vertex, 0), set(meta.get("done", {}).get(vertex, ()))
        entries: list[tuple] = []
        for index in range(count):
            if index not in done:
                entries.extend(self._read_file(self._file(snapshot_id, vertex, index)))
        return entries

    def _read_file(self, path: Path) -> list[tuple]:
        data = path.read_bytes()
        head, mac, payload = data[:len(MAGIC)], data[len(MAGIC):len(MAGIC) + _MAC_SIZE], data[len(MAGIC) + _MAC_SIZE:]
        expected = hmac.new(self._secret, payload, hashlib.sha256).digest()
        if head != MAGIC or not hmac.compare_digest(mac, expected):
            raise JobFailedError(
                f"snapshot file {path} is not a valid snapshot of this job (bad header or signature); it was not "
                "written by this job's processors. Remove it or point EngineConfig.snapshot_dir elsewhere"
            )
        return pickle.loads(payload)

    # ---- cleaning ----------------------------------------------------------------------------------------
    def prune(self, keep: int) -> None:
        """Delete every snapshot older than ``keep`` (called once ``keep`` is complete)."""
        for snapshot_id in self.snapshot_ids():
            if snapshot_id < keep:
                shutil.rmtree(self.snapshot_path(snapshot_id), ignore_errors=True)

    def discard(self, snapshot_id: int) -> None:
        """Delete one snapshot (a failed or aborted one)."""
        shutil.rmtree(self.snapshot_path(snapshot_id), ignore_errors=True)

    def discard_incomplete(self) -> None:
        """Delete every snapshot without the completion marker (call it only while no processor writes)."""
        for snapshot_id in self.snapshot_ids():
            if not self.is_complete(snapshot_id):
                self.discard(snapshot_id)

    def delete_all(self) -> None:
        """Delete the job's directory (the job completed or was cancelled)."""
        shutil.rmtree(self.job_dir, ignore_errors=True)


def _safe_name(name: str) -> str:
    """A file-name-safe, reversible spelling of a vertex or job name (never starting with ``.``)."""
    quoted = urllib.parse.quote(name, safe="")
    return "%2E" + quoted[1:] if quoted.startswith(".") else quoted


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old state or all of it: temp file, fsync, rename,
    fsync of the directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{path.name}-{uuid.uuid4().hex}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
