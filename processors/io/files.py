"""File connectors: ``read_files_p`` (Jet's ``readFilesP``) and ``write_file_p`` (Jet's ``writeFileP``).

``read_files_p(directory, glob, shared_fs, map_output_fn, encoding, errors)``:

- The files are the regular files directly in ``directory`` whose names match ``glob`` (``fnmatch`` rules,
  case-sensitive), sorted by name. Processor ``i`` of ``n`` reads files ``i, i + n, i + 2n, ...`` of that list.
  With ``shared_fs=False`` (the default) every member reads its own copy of the directory: ``i``/``n`` are
  the *local* processor index and local parallelism. With ``shared_fs=True`` the members see the same files,
  so the files are split among *all* processors (global index, total parallelism).
- Each line is emitted without its line terminator (``\\n``, ``\\r\\n`` or ``\\r``), or as
  ``map_output_fn(file_name, line)`` when given (``file_name`` is the bare name; a ``None`` result drops the
  line). A UTF-8 byte-order mark is stripped.
- Undecodable bytes raise an error naming the file and line number; ``errors="replace"`` (any Python codec
  error handler) substitutes them instead. A missing directory is an error naming it. Both are raised by the
  processor, so a job fails with ``JobFailedError`` naming the vertex.
- Non-cooperative; text is read in chunks of 256 Ki characters, split into lines and emitted while the
  outbox has room. A line longer than a chunk is kept in pieces and joined once, so reading is linear in
  the line's length (a 200 MB line costs its own size, not one copy per chunk).

``write_file_p(directory, to_string_fn, encoding, append, exactly_once=False)`` (the manual's
``writeFileP(directory, toStringFn, charset, append)``; ``exactly_once``: see ``processors.io.transactional_files``):

- One file per processor, named after its global processor index (``directory/0``, ``directory/1``, ... as
  Jet's ``writeFileP``); the directory is created if needed (a path that is a file: "is not a directory").
- Line format: each item becomes ``to_string_fn(item)`` followed by ``"\n"``, written as is. A text that
  itself contains ``"\n"`` (or ``"\r"``) therefore spans several lines: to keep one line per item, escape
  in ``to_string_fn`` (e.g. ``json.dumps``, or ``repr``).
- In a job, output appears as a whole on success (``processors.io.file_publish``): processors write into a
  hidden staging directory and the driver publishes every file when the job succeeded; a failed or cancelled
  job publishes nothing and leaves nothing staged. Stale output is *replaced*: numbered files of an earlier
  run that this job did not write are deleted. With ``append=True`` the job's lines are appended to the
  existing files instead and nothing is deleted.
- Outside a job (a processor driven directly, e.g. by ``verify_processor``), each processor writes a hidden
  temporary file and renames it to its final name in ``complete()``; ``close()`` deletes an unfinished one.
- **Live** in a stream job (``context.unbounded``: PIPELINED with a stream source), which may never end: each
  processor appends to its final file ``directory/<index>`` and flushes when its inbox drains
  (``try_process()``) and, while items keep coming, at most :data:`LIVE_FLUSH_SECONDS` after the oldest
  unflushed line, so a reader tailing the file sees lines within that time (plus the pipeline's own latency).
  Stale output is replaced when the job is submitted (the meta supplier deletes the numbered files; kept with
  ``append=True``), never on a restart; a failed or cancelled stream job keeps what it wrote. Under restarts
  this is at-least-once (what followed the last snapshot is written again); ``exactly_once=True`` with the
  ``EXACTLY_ONCE`` guarantee gives per-snapshot two-phase commit instead.

The rule in short: batch (staged, or a bounded DAG run PIPELINED): staged and published on success; stream:
live append, at-least-once under restarts; ``exactly_once=True`` in an ``EXACTLY_ONCE`` job: two-phase commit
per snapshot.

>>> dag.new_vertex("read", read_files_p("books", glob="*.txt"))   # doctest: +SKIP
>>> dag.new_vertex("write", write_file_p("out"))                  # doctest: +SKIP
"""

from __future__ import annotations

import codecs
import fnmatch
import functools
import logging
import os
from pathlib import Path
from typing import Any, Callable

from jetspark_base.errors import DagError, DagValidationError
from processors.library.buffered import _require_callable
from processors.api.processor import Processor
from processors.api.suppliers import ProcessorMetaSupplier, ProcessorSupplier
from processors.io.file_publish import WriteFileMetaSupplier
from processors.io.file_writer import LIVE_FLUSH_SECONDS, WriteFileP
from processors.io.transactional_files import TransactionalWriteFileP

__all__ = ["read_files_p", "write_file_p", "ReadFilesP", "WriteFileP", "LIVE_FLUSH_SECONDS"]

_READ_CHUNK_CHARS = 1 << 18
"""In an unbounded job, the longest a line written by ``write_file_p`` waits in the buffer while items keep
arriving (it is flushed at once when the inbox drains)."""
_log = logging.getLogger("jetspark.read_files_p")


def read_files_p(
    directory: str | os.PathLike,
    glob: str = "*",
    shared_fs: bool = False,
    map_output_fn: Callable[[str, str], Any] | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
    fail_if_empty: bool = False,
) -> ProcessorMetaSupplier:
    """A source emitting the lines of the files in ``directory`` that match ``glob`` (see the module docstring).

    ``errors`` is a Python codec error handler: ``"strict"`` (default) fails on undecodable bytes naming the
    file and line, ``"replace"`` puts U+FFFD in their place. When no file matches, the driver logs a warning
    (logger ``jetspark.read_files_p``) and the job reads nothing; ``fail_if_empty=True`` fails the job instead.

    >>> dag.new_vertex("lines", read_files_p("logs", glob="*.log",
    ...                                      map_output_fn=lambda name, line: (name, line)))  # doctest: +SKIP
    """
    _require_callable("read_files_p", "map_output_fn", map_output_fn, optional=True)
    _checked_encoding("read_files_p", encoding, errors)
    if not isinstance(fail_if_empty, bool):
        raise DagValidationError(f"read_files_p: fail_if_empty must be True or False, got {fail_if_empty!r}")
    factory = functools.partial(
        ReadFilesP, os.fspath(directory), glob, bool(shared_fs), map_output_fn, encoding, errors
    )
    return _ReadFilesMeta(factory, os.fspath(directory), glob, fail_if_empty)


class _ReadFilesMeta(ProcessorMetaSupplier):
    """``read_files_p``'s meta supplier: on the driver, says when no file matches (warning, or error)."""

    def __init__(self, factory: Callable[[], Processor], directory: str, glob: str, fail_if_empty: bool):
        self._supplier = ProcessorSupplier.of(factory)
        self._directory, self._glob, self._fail_if_empty = directory, glob, fail_if_empty

    def init(self, context: Any) -> None:
        path = Path(self._directory)
        if not path.is_dir():  # missing: the processors fail naming it (members may have their own copy)
            return
        if any(fnmatch.fnmatchcase(n, self._glob) and (path / n).is_file() for n in os.listdir(path)):
            return
        message = (f"read_files_p (vertex '{context.vertex_name}'): no file in '{self._directory}' matches "
                   f"'{self._glob}', so the job reads nothing")
        if self._fail_if_empty:
            raise DagValidationError(message + "; put the input files there or fix the directory or glob")
        _log.warning("%s (pass fail_if_empty=True to make this an error)", message)

    def get(self, member_indices: list[int]) -> Callable[[int], ProcessorSupplier]:
        return lambda member: self._supplier

    def __repr__(self) -> str:
        return f"read_files_p({self._directory!r}, glob={self._glob!r})"


def write_file_p(
    directory: str | os.PathLike,
    to_string_fn: Callable[[Any], str] = str,
    encoding: str = "utf-8",
    append: bool = False,
    exactly_once: bool = False,
) -> ProcessorMetaSupplier:
    """A sink writing one file per processor, ``directory/<global processor index>``, one line per item.

    The job's files appear together when it succeeds, replacing an earlier run's numbered files, or are
    appended to them with ``append=True`` (see the module docstring for the line format and the rules). In a
    stream job the lines are appended to the final files live, flushed within ``LIVE_FLUSH_SECONDS``
    (at-least-once under restarts).
    With ``exactly_once=True`` in a job whose guarantee is ``EXACTLY_ONCE`` it writes one file per processor and
    snapshot, ``directory/<index>-<sequence>``, published when the snapshot completes (two-phase commit, see
    ``processors.io.transactional_files``), so a restart neither loses nor repeats lines.

    >>> dag.new_vertex("out", write_file_p("results", to_string_fn=lambda kv: f"{kv[0]}\t{kv[1]}"))  # doctest: +SKIP
    >>> dag.new_vertex("log", write_file_p("log", str, "utf-8", True))  # the manual's form, appending  # doctest: +SKIP
    """
    _require_callable("write_file_p", "to_string_fn", to_string_fn)
    _checked_encoding("write_file_p", encoding, "strict")
    for name, flag in (("append", append), ("exactly_once", exactly_once)):
        if not isinstance(flag, bool):
            raise DagValidationError(f"write_file_p: {name} must be True or False, got {flag!r}")
    if exactly_once:
        if append:
            raise DagValidationError("write_file_p: append=True and exactly_once=True cannot be combined")
        factory = functools.partial(_transactional, TransactionalWriteFileP, os.fspath(directory), to_string_fn,
                                    encoding)
        return WriteFileMetaSupplier(os.fspath(directory), factory, append=False, staged=False)
    factory = functools.partial(_plain, os.fspath(directory), to_string_fn, encoding)
    return WriteFileMetaSupplier(os.fspath(directory), factory, append=append)


def _plain(directory: str, to_string_fn: Callable, encoding: str, staging: str | None, append: bool,
           resume: bool = False) -> "WriteFileP":
    return WriteFileP(directory, to_string_fn, encoding, staging=staging, append=append, resume=resume)


def _transactional(cls: type, directory: str, to_string_fn: Callable, encoding: str, staging: str | None,
                   append: bool, resume: bool = False) -> Any:
    return cls(directory, to_string_fn, encoding)


def _bom_stripping(encoding: str) -> str:
    """``utf-8-sig`` for any spelling of UTF-8 (it strips a leading byte-order mark), else ``encoding``."""
    return "utf-8-sig" if codecs.lookup(encoding).name == "utf-8" else encoding


def _checked_encoding(owner: str, encoding: str, errors: str) -> None:
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise DagValidationError(
            f"{owner}: unknown encoding {encoding!r}; use a Python codec name such as 'utf-8' or 'latin-1'"
        ) from None
    try:
        codecs.lookup_error(errors)
    except (LookupError, TypeError):
        raise DagValidationError(
            f"{owner}: unknown errors handler {errors!r}; use 'strict' (fail on bad bytes) or 'replace'"
        ) from None


class ReadFilesP(Processor):
    """The processor of :func:`read_files_p`."""

    def __init__(self, directory, glob, shared_fs, map_output_fn, encoding, errors):
        self._directory = directory
        self._glob = glob
        self._shared_fs = shared_fs
        self._map_output_fn = map_output_fn
        self._encoding = encoding
        self._codec = _bom_stripping(encoding)
        self._errors = errors
        self._outbox = None
        self._vertex = ""
        self._files: list[Path] = []
        self._file = None
        self._path: Path | None = None
        self._rest: list[str] = []
        self._pending: list = []
        self._pos = 0

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        self._outbox = outbox
        self._vertex = context.vertex_name
        if self._shared_fs:
            index, count = context.global_processor_index, context.total_parallelism
        else:
            index, count = context.local_processor_index, context.local_parallelism
        self._files = _matching_files(Path(self._directory), self._glob, self._vertex)[index::count]
        self._files.reverse()  # pop() from the end takes them in sorted order

    def complete(self) -> bool:
        offer_many = self._outbox.offer_many
        while True:
            items = self._pending
            pos = offer_many(items, self._pos)
            if pos < len(items):
                self._pos = pos
                return False
            self._pending, self._pos = self._next_chunk(), 0
            if not self._pending and self._file is None and not self._files:
                return True

    def _next_chunk(self) -> list:
        """The next lines to emit (maybe empty while switching files)."""
        if self._file is None:
            if not self._files:
                return []
            self._path = self._files.pop()
            try:
                self._file = open(self._path, encoding=self._codec, errors=self._errors)
            except FileNotFoundError:
                _log.warning("read_files_p (vertex '%s'): file '%s' was deleted after the directory was listed; "
                             "skipped", self._vertex, self._path)
                return []
            self._rest = []
        try:
            text = self._file.read(_READ_CHUNK_CHARS)
        except UnicodeDecodeError as exc:
            raise self._decode_error(exc) from exc
        rest = self._rest  # pieces of the unfinished line, joined once it ends: linear in the line's length
        if text:
            if "\n" not in text:  # text mode already turned \r\n and \r into \n
                rest.append(text)
                return []
            lines = text.split("\n")
            if rest:
                rest.append(lines[0])
                lines[0] = "".join(rest)
            last = lines.pop()  # the unfinished last line ("" after a final newline)
            self._rest = [last] if last else []
        else:
            lines = ["".join(rest)] if rest else []
            self._close_file()
        fn = self._map_output_fn
        if fn is not None and lines:
            name = self._path.name
            lines = [out for out in (fn(name, line) for line in lines) if out is not None]
        return lines

    def _decode_error(self, exc: UnicodeDecodeError) -> DagError:
        line = _first_undecodable_line(self._path, self._codec)
        where = f"line {line}" if line is not None else "a line"
        return DagError(
            f"read_files_p (vertex '{self._vertex}'): cannot decode {where} of file '{self._path}' as "
            f"{self._encoding}: {exc.reason}; pass the file's real encoding=..., or errors='replace' to "
            "substitute undecodable bytes"
        )

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def close(self) -> None:
        self._close_file()


def _matching_files(directory: Path, glob: str, vertex: str) -> list[Path]:
    """The regular files in ``directory`` whose names match ``glob``, sorted by name."""
    if not directory.is_dir():
        state = "is not a directory" if directory.exists() else "does not exist"
        absolute = "" if directory.is_absolute() else f" (absolute path: '{directory.absolute()}')"
        raise DagValidationError(
            f"read_files_p (vertex '{vertex}'): directory '{directory}'{absolute} {state}; create it or pass the "
            "directory that holds the files"
        )
    names = sorted(name for name in os.listdir(directory) if fnmatch.fnmatchcase(name, glob))
    files = []
    for name in names:
        path = directory / name
        if path.is_file():
            files.append(path)
        elif not path.exists() and not path.is_symlink():
            _log.warning("read_files_p (vertex '%s'): file '%s' was deleted while the directory was listed; "
                         "skipped", vertex, path)
    return files


def _first_undecodable_line(path: Path, encoding: str) -> int | None:
    """1-based number of the first line of ``path`` holding bytes ``encoding`` cannot decode (None if none)."""
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    newlines = 0
    with open(path, "rb") as f:
        for raw in f:
            try:
                newlines += decoder.decode(raw).count("\n")
            except UnicodeDecodeError:
                return newlines + 1
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return newlines + 1
    return None
