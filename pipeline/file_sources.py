"""Jet 4.5's file connector: ``FileSources.files(path)...build()`` with a ``FileFormat``, ``Sources.json``,
``Sources.files_builder`` and ``Sinks.json``.

=================================  ===========================================================================
format                             items
=================================  ===========================================================================
``FileFormat.lines(charset)``      each line, without its terminator (``read_files_p``)
``FileFormat.text(charset)``       each file's whole text as one string
``FileFormat.bytes()``             each file's content as ``bytes``
``FileFormat.csv(cls=None)``       each row after the header as a ``dict`` of the header's names, or
                                   ``cls(**row)``; a row with fewer fields than the header is an error naming
                                   the file, the line and the columns expected (one row per line: quoted fields
                                   spanning lines are not supported)
``FileFormat.json(cls=None)``      JSON Lines: each line's object as a ``dict`` or ``cls(**obj)``; a line that
                                   does not parse is an error naming the file and line
=================================  ===========================================================================

Files are the regular files directly in the directory matching the glob, split among the processors as
``read_files_p`` does (``shared_file_system``: among all processors of the cluster, else each member reads
its own copy). ``build()`` checks what it can on the driver: with ``fail_if_empty(True)``, a directory with no
matching file is an error then (as is a class that cannot be called). Vertex: ``filesSource(PATH)``.

The stream forms, ``Sources.file_watcher(directory)`` and ``Sources.json_watcher(directory, cls=None)``, emit
what is appended to the directory's files after the job starts (``stream_files_p``; JSON lines parsed as above).

>>> FileSources.files("/data/people").glob("*.csv").format(FileFormat.csv()).build().name
'filesSource(/data/people)'
"""

from __future__ import annotations

import csv
import fnmatch
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.descriptors import BatchSource, Sink, StreamSource
from pipeline.json_util import JsonUtil, bean_from_dict
from processors.io.files import _matching_files, read_files_p, write_file_p
from processors.api.inbox import Inbox
from processors.api.processor import Processor
from processors.io.text_streams import StreamFilesP, mark_stream_source, stream_files_p
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["FileFormat", "FileSources", "FileSourceBuilder", "FilesBuilder", "json_source", "json_sink",
           "file_watcher_source", "json_watcher_source", "JsonWatcherP"]


class FileFormat:
    """How the files are read (Jet's ``FileFormat``): see the module table."""

    def __init__(self, kind: str, charset: str = "utf-8", cls: type | None = None):
        if cls is not None and not callable(cls):
            raise DagValidationError(f"FileFormat.{kind}(cls): cls must be a class (or callable) taking the fields "
                                     f"as keyword arguments, got {cls!r:.80}")
        self.kind = kind
        self.charset = charset
        self.cls = cls

    @staticmethod
    def lines(charset: str = "utf-8") -> FileFormat:
        """One item per line."""
        return FileFormat("lines", charset)

    @staticmethod
    def text(charset: str = "utf-8") -> FileFormat:
        """One item per file: its whole text."""
        return FileFormat("text", charset)

    @staticmethod
    def bytes() -> FileFormat:
        """One item per file: its bytes."""
        return FileFormat("bytes")

    @staticmethod
    def csv(cls: type | None = None) -> FileFormat:
        """One item per row; the first line of each file names the fields."""
        return FileFormat("csv", cls=cls)

    @staticmethod
    def json(cls: type | None = None) -> FileFormat:
        """JSON Lines: one object per line."""
        return FileFormat("json", cls=cls)

    def __repr__(self) -> str:
        return f"FileFormat.{self.kind}()"


class _ParseLines:
    """``map_output_fn(file_name, line)`` of the CSV and JSON formats; counts lines per file for messages."""

    def __init__(self, fmt: FileFormat, directory: str):
        self.fmt = fmt
        self.directory = directory
        self._lines: dict[str, int] = {}
        self._headers: dict[str, list] = {}

    def __call__(self, file_name: str, line: str) -> Any:
        number = self._lines[file_name] = self._lines.get(file_name, 0) + 1
        where = f"file '{os.path.join(self.directory, file_name)}', line {number}"
        if self.fmt.kind == "json":
            return json_object(line, self.fmt.cls, where)
        row = next(csv.reader([line]))
        header = self._headers.get(file_name)
        if header is None or number == 1:
            self._headers[file_name] = row
            return None
        if len(row) < len(header):
            raise DagValidationError(f"FileFormat.csv: {where} has {len(row)} fields, expected {len(header)} "
                                     f"({', '.join(header)}): {line!r:.100}")
        fields = dict(zip(header, row))
        return fields if self.fmt.cls is None else bean_from_dict(self.fmt.cls, fields, f"FileFormat: {where}")


def json_object(line: str, cls: type | None, where: str) -> Any:
    """The JSON object of ``line`` as a dict or ``cls(**obj)`` (``None`` for a blank line); errors name
    ``where``."""
    if not line.strip():
        return None
    try:
        fields = json.loads(line)
    except json.JSONDecodeError as error:
        raise DagValidationError(f"FileFormat.json: {where} is not JSON ({error.msg} at column {error.colno}): "
                                 f"{line!r:.100}") from None
    if not isinstance(fields, dict):
        raise DagValidationError(f"FileFormat.json: {where} holds a {type(fields).__name__}, expected a JSON "
                                 "object per line")
    return fields if cls is None else bean_from_dict(cls, fields, f"FileFormat: {where}")


class WholeFileP(Processor):
    """Emits each of its files as one item: its text (``charset``) or, with ``charset`` None, its bytes."""

    def __init__(self, directory: str, glob: str, shared_fs: bool, charset: str | None):
        self.args = (directory, glob, shared_fs, charset)
        self._files: list[Path] = []
        self._outbox: Any = None
        self._pending: Any = None

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox: Any, context: Any) -> None:
        self._outbox = outbox
        directory, glob, shared_fs, _ = self.args
        index, count = ((context.global_processor_index, context.total_parallelism) if shared_fs
                        else (context.local_processor_index, context.local_parallelism))
        self._files = _matching_files(Path(directory), glob, context.vertex_name)[index::count]

    def process(self, ordinal: int, inbox: Inbox) -> None:  # pragma: no cover - a source has no input
        inbox.clear()

    def complete(self) -> bool:
        charset = self.args[3]
        while self._pending is not None or self._files:
            if self._pending is None:
                path = self._files.pop(0)
                self._pending = path.read_bytes() if charset is None else path.read_text(encoding=charset)
            if not self._outbox.offer(self._pending):
                return False
            self._pending = None
        return True


class _WholeFileFactory:
    def __init__(self, *args: Any):
        self.args = args

    def __call__(self) -> WholeFileP:
        return WholeFileP(*self.args)


class FileSourceBuilder:
    """``FileSources.files(path)``: ``.glob(g)``, ``.format(fmt)``, ``.shared_file_system(b)``,
    ``.fail_if_empty(b)``, then ``.build()``."""

    def __init__(self, path: str | os.PathLike):
        self._path = os.fspath(path)
        self._glob = "*"
        self._format = FileFormat.lines()
        self._shared = False
        self._fail_if_empty = False

    def glob(self, glob: str) -> FileSourceBuilder:
        """Only the files whose names match ``glob`` (``fnmatch`` rules; default ``*``)."""
        self._glob = glob
        return self

    def format(self, file_format: FileFormat) -> FileSourceBuilder:
        """How to read the files (default ``FileFormat.lines()``)."""
        if not isinstance(file_format, FileFormat):
            raise TypeError(f"FileSources.files('{self._path}').format(fmt) needs a FileFormat (FileFormat.csv(), "
                            f"...), got {file_format!r:.80}")
        self._format = file_format
        return self

    def shared_file_system(self, shared: bool) -> FileSourceBuilder:
        """All members see the same files: split them among all processors of the cluster."""
        self._shared = bool(shared)
        return self

    def fail_if_empty(self, fail: bool) -> FileSourceBuilder:
        """A directory without a matching file is an error (at ``build()`` and when the job starts)."""
        self._fail_if_empty = bool(fail)
        return self

    def build(self) -> BatchSource:
        """The source."""
        path, glob, fmt = self._path, self._glob, self._format
        if self._fail_if_empty and Path(path).is_dir() and not any(
                fnmatch.fnmatchcase(n, glob) and (Path(path) / n).is_file() for n in os.listdir(path)):
            raise DagValidationError(f"FileSources.files('{path}'): no file matches '{glob}' and fail_if_empty is "
                                     "set; put the input files there or fix the directory or glob")
        name = f"filesSource({path})"
        if fmt.kind in ("text", "bytes"):
            charset = fmt.charset if fmt.kind == "text" else None
            return BatchSource(name, ProcessorMetaSupplier.of(_WholeFileFactory(path, glob, self._shared, charset)))
        parse = None if fmt.kind == "lines" else _ParseLines(fmt, path)
        return BatchSource(name, read_files_p(path, glob, self._shared, parse, encoding=fmt.charset,
                                              fail_if_empty=self._fail_if_empty))


class FileSources:
    """Jet 4.5's unified file source (``FileSources.files(path)``)."""

    @staticmethod
    def files(path: str | os.PathLike) -> FileSourceBuilder:
        """A builder of a source reading the files in the directory ``path``."""
        return FileSourceBuilder(path)


class FilesBuilder:
    """``Sources.files_builder(directory)``: ``.glob(g)``, ``.shared_file_system(b)``, ``.charset(c)``, then
    ``.build(map_output_fn=None)`` (``map_output_fn(file_name, line)``; ``None`` drops the line)."""

    def __init__(self, directory: str | os.PathLike):
        self._directory = os.fspath(directory)
        self._glob = "*"
        self._shared = False
        self._charset = "utf-8"

    def glob(self, glob: str) -> FilesBuilder:
        self._glob = glob
        return self

    def shared_file_system(self, shared: bool) -> FilesBuilder:
        self._shared = bool(shared)
        return self

    def charset(self, charset: str) -> FilesBuilder:
        self._charset = charset
        return self

    def build(self, map_output_fn: Callable[[str, str], Any] | None = None) -> BatchSource:
        """The source: the lines, or ``map_output_fn(file_name, line)``."""
        return BatchSource(f"filesSource({self._directory})", read_files_p(
            self._directory, self._glob, self._shared, map_output_fn, encoding=self._charset))


def json_source(directory: str | os.PathLike, cls: type | None = None) -> BatchSource:
    """``Sources.json(directory, cls=None)``: the JSON Lines files of the directory."""
    return FileSources.files(directory).format(FileFormat.json(cls)).build()


def json_sink(directory: str | os.PathLike) -> Sink:
    """``Sinks.json(directory)``: one JSON object per line (``JsonUtil.to_json``), one file per processor."""
    directory = os.fspath(directory)
    return Sink(f"jsonFilesSink({directory})", write_file_p(directory, JsonUtil.to_json))


class JsonWatcherP(StreamFilesP):
    """``stream_files_p``'s processor emitting each appended line's JSON object (a dict, or ``cls(**obj)``)."""

    def __init__(self, directory: str, glob: str, encoding: str, cls: type | None):
        super().__init__(directory, glob, encoding)
        self.cls = cls

    def _read_lines(self, name: str, watched: Any) -> list:
        where = f"a line appended to file '{os.path.join(self._directory, name)}'"
        objects = (json_object(line, self.cls, where) for line in super()._read_lines(name, watched))
        return [obj for obj in objects if obj is not None]


class _JsonWatcherFactory:
    def __init__(self, *args: Any):
        self.args = args

    def __call__(self) -> JsonWatcherP:
        return JsonWatcherP(*self.args)


def file_watcher_source(directory: str | os.PathLike) -> StreamSource:
    """``Sources.file_watcher(directory)``: the lines appended to (or written into new) files of the directory
    after the job starts (``stream_files_p``); vertex ``fileWatcherSource(DIR)``."""
    directory = os.fspath(directory)
    return StreamSource(f"fileWatcherSource({directory})", stream_files_p(directory))


def json_watcher_source(directory: str | os.PathLike, cls: type | None = None) -> StreamSource:
    """``Sources.json_watcher(directory, cls=None)``: as ``file_watcher``, each line parsed as a JSON object (a
    line that does not parse fails the job naming the file); vertex ``jsonWatcherSource(DIR)``."""
    directory = os.fspath(directory)
    FileFormat.json(cls)  # checks cls
    return StreamSource(f"jsonWatcherSource({directory})", mark_stream_source(ProcessorMetaSupplier.of(
        _JsonWatcherFactory(directory, "*", "utf-8", cls))))
