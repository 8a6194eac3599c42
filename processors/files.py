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

``write_file_p(directory, to_string_fn, encoding, exactly_once=False)`` (``exactly_once``: see
``processors.transactional_files``):

- One file per processor, named after its global processor index (``directory/0``, ``directory/1``, ... as
  Jet's ``writeFileP``); the directory is created if needed. Each item becomes the line
  ``to_string_fn(item)`` + ``"\\n"``.
- The file is written under a hidden temporary name and renamed to its final name in ``complete()``
  (``os.replace``, atomic; an older file of that name is replaced). When the job fails before that,
  ``close()`` deletes the temporary file, so no half-written file ever carries a final name.

>>> dag.new_vertex("read", read_files_p("books", glob="*.txt"))   # doctest: +SKIP
>>> dag.new_vertex("write", write_file_p("out"))                  # doctest: +SKIP
"""

from __future__ import annotations

import codecs
import fnmatch
import functools
import os
import uuid
from pathlib import Path
from typing import Any, Callable

from dag.errors import DagError, DagValidationError
from processors.buffered import _require_callable
from processors.processor import Processor
from processors.suppliers import ProcessorMetaSupplier

__all__ = ["read_files_p", "write_file_p", "ReadFilesP", "WriteFileP"]

_READ_CHUNK_CHARS = 1 << 18


def read_files_p(
    directory: str | os.PathLike,
    glob: str = "*",
    shared_fs: bool = False,
    map_output_fn: Callable[[str, str], Any] | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
) -> ProcessorMetaSupplier:
    """A source emitting the lines of the files in ``directory`` that match ``glob`` (see the module docstring).

    ``errors`` is a Python codec error handler: ``"strict"`` (default) fails on undecodable bytes naming the
    file and line, ``"replace"`` puts U+FFFD in their place.

    >>> dag.new_vertex("lines", read_files_p("logs", glob="*.log",
    ...                                      map_output_fn=lambda name, line: (name, line)))  # doctest: +SKIP
    """
    _require_callable("read_files_p", "map_output_fn", map_output_fn, optional=True)
    _checked_encoding("read_files_p", encoding, errors)
    factory = functools.partial(
        ReadFilesP, os.fspath(directory), glob, bool(shared_fs), map_output_fn, encoding, errors
    )
    return ProcessorMetaSupplier.of(factory)


def write_file_p(
    directory: str | os.PathLike,
    to_string_fn: Callable[[Any], str] = str,
    encoding: str = "utf-8",
    exactly_once: bool = False,
) -> ProcessorMetaSupplier:
    """A sink writing one file per processor, ``directory/<global processor index>``, one line per item.

    With ``exactly_once=True`` in a job whose guarantee is ``EXACTLY_ONCE`` it writes one file per processor and
    snapshot, ``directory/<index>-<sequence>``, published when the snapshot completes (two-phase commit, see
    ``processors.transactional_files``), so a restart neither loses nor repeats lines.

    >>> dag.new_vertex("out", write_file_p("results", to_string_fn=lambda kv: f"{kv[0]}\\t{kv[1]}"))  # doctest: +SKIP
    """
    _require_callable("write_file_p", "to_string_fn", to_string_fn)
    _checked_encoding("write_file_p", encoding, "strict")
    if not isinstance(exactly_once, bool):
        raise DagValidationError(f"write_file_p: exactly_once must be True or False, got {exactly_once!r}")
    if exactly_once:
        from processors.transactional_files import TransactionalWriteFileP

        factory = functools.partial(TransactionalWriteFileP, os.fspath(directory), to_string_fn, encoding)
    else:
        factory = functools.partial(WriteFileP, os.fspath(directory), to_string_fn, encoding)
    return ProcessorMetaSupplier.of(factory)


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
            self._file = open(self._path, encoding=self._codec, errors=self._errors)
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
    return [directory / name for name in names if (directory / name).is_file()]


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


def _write_lines(processor: "WriteFileP", file: Any, items: list) -> None:
    """Write ``to_string_fn(item) + "\\n"`` per item to ``file``; a non-str result is an error naming it."""
    texts = list(map(processor._to_string_fn, items))
    try:
        text = "\n".join(texts)
    except TypeError:
        index = next(i for i, t in enumerate(texts) if not isinstance(t, str))
        raise DagError(
            f"write_file_p (vertex '{processor._vertex}'): to_string_fn returned {texts[index]!r} "
            f"({type(texts[index]).__name__}) for item {items[index]!r}; it must return a str"
        ) from None
    file.write(text)
    file.write("\n")


class WriteFileP(Processor):
    """The processor of :func:`write_file_p`."""

    def __init__(self, directory, to_string_fn, encoding):
        self._directory = directory
        self._to_string_fn = to_string_fn
        self._encoding = encoding
        self._vertex = ""
        self._file = None
        self._temp_path: Path | None = None
        self._final_path: Path | None = None

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        self._vertex = context.vertex_name
        directory = Path(self._directory)
        directory.mkdir(parents=True, exist_ok=True)
        name = str(context.global_processor_index)
        self._final_path = directory / name
        self._temp_path = directory / f".{name}.{uuid.uuid4().hex}.tmp"
        self._file = open(self._temp_path, "w", encoding=self._encoding, newline="")

    def process(self, ordinal: int, inbox) -> None:
        _write_lines(self, self._file, inbox.take_all())

    def complete(self) -> bool:
        self._file.close()
        os.replace(self._temp_path, self._final_path)
        self._temp_path = None
        return True

    def close(self) -> None:
        if self._file is not None and not self._file.closed:
            self._file.close()
        if self._temp_path is not None:
            try:
                os.remove(self._temp_path)
            except FileNotFoundError:
                pass
            self._temp_path = None
