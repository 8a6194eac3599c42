"""Unbounded text sources: ``stream_socket_p`` (Jet's ``streamSocketP``) and ``stream_files_p`` (Jet's
``streamFilesP``).

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` and are emitted without the terminator (:class:`LineSplitter`, which
also holds a ``\\r`` at the end of a chunk back until it knows whether ``\\n`` follows). Text is decoded with an
incremental decoder, so a multi-byte character split between two reads decodes correctly.

``stream_socket_p(host, port, encoding)``: one processor per member (Jet's ``preferLocalParallelismOne``)
connects to ``host:port`` as a client and emits each complete line it receives; when the server closes the
connection the source completes (a last line without terminator is dropped, as Jet's). Non-cooperative: it
polls the socket without blocking and the runtime backs off while nothing arrives.

``stream_files_p(directory, glob, encoding)``: emits the lines *appended* to the regular files of ``directory``
matching ``glob`` after the job started; each member watches its own copy of the directory and a file belongs
to one local processor, picked by a digest of its name. Files present at the start are read from
their end on; if such a file ended in the middle of a line, that line is skipped when it is completed (Jet
does the same). Files created later are read from their start. A line is emitted once its terminator is
written, so a line written in several pieces comes out whole. A file that shrinks (truncated or rewritten in
place) is read on from its new end; a deleted file is forgotten; if the directory is deleted the source
completes. The directory is polled about every :data:`POLL_INTERVAL_S` seconds.

>>> splitter = LineSplitter(); splitter.feed("a\\r"), splitter.feed("\\nb\\rc\\n"), splitter.finish()
(['a'], ['b', 'c'], [])
"""

from __future__ import annotations

import codecs
import fnmatch
import functools
import hashlib
import os
import re
import socket
import time
from typing import Any

from jetspark_base.errors import DagError, DagValidationError
from processors.io.files import _checked_encoding
from processors.api.processor import Processor
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["stream_socket_p", "stream_files_p", "LineSplitter", "StreamSocketP", "StreamFilesP", "PendingItemsSource",
           "mark_stream_source", "is_stream_source"]

POLL_INTERVAL_S = 0.05
"""How often ``stream_files_p`` looks at its directory when nothing is pending."""
_READ_BYTES = 1 << 16
_TERMINATOR = re.compile(r"\r\n|\r|\n")


def mark_stream_source(meta_supplier: ProcessorMetaSupplier) -> ProcessorMetaSupplier:
    """Mark ``meta_supplier`` as an unbounded source (``is_stream_source = True``) and return it. The engine
    runs a DAG with such a vertex on the pipelined runtime."""
    meta_supplier.is_stream_source = True
    return meta_supplier


def is_stream_source(meta_supplier: Any) -> bool:
    """True for the meta-supplier of an unbounded source (``stream_*_p``, ``SourceBuilder.stream``...).

    >>> is_stream_source(stream_socket_p("127.0.0.1", 9999)), is_stream_source(object())
    (True, False)
    """
    return getattr(meta_supplier, "is_stream_source", False) is True


class LineSplitter:
    """Splits decoded text into lines ending at ``\\n``, ``\\r\\n`` or ``\\r`` (terminators removed)."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> list[str]:
        """The lines completed by ``text``; the rest is kept for the next call."""
        data = self._pending + text
        lines, start = [], 0
        for match in _TERMINATOR.finditer(data):
            if match.group() == "\r" and match.end() == len(data):
                break  # maybe the first half of "\r\n": decide when more text comes
            lines.append(data[start:match.start()])
            start = match.end()
        self._pending = data[start:]
        return lines

    def finish(self) -> list[str]:
        """At the end of the input: a pending line ending in ``\\r`` is complete; any other partial line is
        dropped."""
        pending, self._pending = self._pending, ""
        return [pending[:-1]] if pending.endswith("\r") else []

    @property
    def pending(self) -> str:
        """The text of the incomplete last line."""
        return self._pending


class PendingItemsSource(Processor):
    """Base of the non-cooperative stream sources: ``init`` keeps outbox and context and calls
    :meth:`init_source`; ``_pending`` holds what waits for room in the outbox (``_emit_pending``)."""

    def __init__(self) -> None:
        self._outbox = None
        self._context = None
        self._pending: list = []
        self._pos = 0

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        self._outbox = outbox
        self._context = context
        self.init_source(context)

    def init_source(self, context) -> None:
        """Open the source (hook)."""

    def _emit_pending(self) -> bool:
        """Offer the pending lines; True when all went out."""
        if self._pos < len(self._pending):
            self._pos = self._outbox.offer_many(self._pending, self._pos)
            if self._pos < len(self._pending):
                return False
        self._pending, self._pos = [], 0
        return True


# ----------------------------------------------------------------------------------------------------------
# stream_socket_p
# ----------------------------------------------------------------------------------------------------------


def stream_socket_p(host: str, port: int, encoding: str = "utf-8") -> ProcessorMetaSupplier:
    """A stream source emitting the lines a TCP server sends; completes when the server closes the connection.

    >>> dag.new_vertex("lines", stream_socket_p("127.0.0.1", 9999))  # doctest: +SKIP
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise DagValidationError(f"stream_socket_p: port must be an int in 1..65535, got {port!r}")
    _checked_encoding("stream_socket_p", encoding, "strict")
    return mark_stream_source(ProcessorMetaSupplier.of(functools.partial(StreamSocketP, host, port, encoding),
                                                       preferred_local_parallelism=1))


class StreamSocketP(PendingItemsSource):
    """The processor of :func:`stream_socket_p`."""

    def __init__(self, host: str, port: int, encoding: str):
        super().__init__()
        self._address = (host, port)
        self._decoder = codecs.getincrementaldecoder(encoding)()
        self._lines = LineSplitter()
        self._sock: socket.socket | None = None
        self._ended = False

    def init_source(self, context) -> None:
        try:
            self._sock = socket.create_connection(self._address, timeout=10)
        except OSError as exc:
            raise DagError(f"vertex '{context.vertex_name}': stream_socket_p could not connect to "
                           f"{self._address[0]}:{self._address[1]}: {exc}; is the server listening?") from exc
        self._sock.setblocking(False)
        context.logger.info("stream_socket_p connected to %s:%d", *self._address)

    def complete(self) -> bool:
        if not self._emit_pending():
            return False
        if self._ended:
            return True
        try:
            data = self._sock.recv(_READ_BYTES)
        except (BlockingIOError, InterruptedError):
            return False
        if data:
            self._pending = self._lines.feed(self._decoder.decode(data))
        else:  # the server closed the connection: emit what is complete and end
            self._ended = True
            self._pending = self._lines.feed(self._decoder.decode(b"", final=True)) + self._lines.finish()
        return self._emit_pending() and self._ended

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


# ----------------------------------------------------------------------------------------------------------
# stream_files_p
# ----------------------------------------------------------------------------------------------------------


def stream_files_p(directory: str | os.PathLike, glob: str = "*", encoding: str = "utf-8") -> ProcessorMetaSupplier:
    """A stream source emitting the lines appended to the files of ``directory`` matching ``glob`` after the
    job starts (see the module docstring).

    >>> dag.new_vertex("tail", stream_files_p("logs", glob="*.log"))  # doctest: +SKIP
    """
    _checked_encoding("stream_files_p", encoding, "strict")
    return mark_stream_source(
        ProcessorMetaSupplier.of(functools.partial(StreamFilesP, os.fspath(directory), glob, encoding)))


def _owner_of(file_name: str, count: int) -> int:
    """The local processor that watches ``file_name`` (a digest, so that similar names spread evenly)."""
    digest = hashlib.blake2b(file_name.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


class _WatchedFile:
    """Read position and line state of one watched file."""

    __slots__ = ("offset", "decoder", "lines", "skip_first")

    def __init__(self, offset: int, encoding: str, skip_first: bool):
        self.offset = offset
        self.decoder = codecs.getincrementaldecoder(encoding)()
        self.lines = LineSplitter()
        self.skip_first = skip_first


class StreamFilesP(PendingItemsSource):
    """The processor of :func:`stream_files_p`."""

    def __init__(self, directory: str, glob: str, encoding: str):
        super().__init__()
        self._directory = directory
        self._glob = glob
        self._encoding = encoding
        self._files: dict[str, _WatchedFile] = {}
        self._next_scan = 0.0
        self._share = (0, 1)

    def init_source(self, context) -> None:
        self._share = (context.local_processor_index, context.local_parallelism)
        if not os.path.isdir(self._directory):
            raise DagError(f"vertex '{context.vertex_name}': stream_files_p: directory '{self._directory}' does "
                           "not exist (or is not a directory); create it before the job starts")
        for name, size in self._scan().items():  # present at the start: read only what is appended later
            self._files[name] = _WatchedFile(size, self._encoding, skip_first=size > 0 and not self._ends_line(name))

    def _ends_line(self, name: str) -> bool:
        try:
            with open(os.path.join(self._directory, name), "rb") as f:
                f.seek(-1, os.SEEK_END)
                return f.read(1) in (b"\n", b"\r")
        except OSError:  # deleted or truncated meanwhile
            return True

    def _scan(self) -> dict[str, int] | None:
        """Sizes of this processor's matching files; ``None`` if the directory is gone."""
        index, count = self._share
        sizes = {}
        try:
            with os.scandir(self._directory) as entries:
                for entry in entries:
                    if (fnmatch.fnmatchcase(entry.name, self._glob) and entry.is_file()
                            and _owner_of(entry.name, count) == index):
                        sizes[entry.name] = entry.stat().st_size
        except FileNotFoundError:
            return None
        return sizes

    def complete(self) -> bool:
        if not self._emit_pending():
            return False
        now = time.monotonic()
        if now < self._next_scan:
            return False
        self._next_scan = now + POLL_INTERVAL_S
        sizes = self._scan()
        if sizes is None:
            self._context.logger.info("stream_files_p: directory '%s' was deleted; the source completes",
                                      self._directory)
            return True
        for name in [n for n in self._files if n not in sizes]:
            del self._files[name]
        for name, size in sizes.items():
            watched = self._files.setdefault(name, _WatchedFile(0, self._encoding, skip_first=False))
            if size < watched.offset:  # truncated or rewritten in place: go on from its new end
                watched.offset = size
            elif size > watched.offset:
                self._pending += self._read_lines(name, watched)
        self._emit_pending()
        return False

    def _read_lines(self, name: str, watched: _WatchedFile) -> list[str]:
        path = os.path.join(self._directory, name)
        try:
            with open(path, "rb") as f:
                f.seek(watched.offset)
                data = f.read(_READ_BYTES * 16)
        except FileNotFoundError:
            return []
        watched.offset += len(data)
        if len(data) == _READ_BYTES * 16:  # more is waiting: look again at once
            self._next_scan = 0.0
        try:
            text = watched.decoder.decode(data)
        except UnicodeDecodeError as exc:
            raise DagError(f"vertex '{self._context.vertex_name}': stream_files_p: file '{path}' is not valid "
                           f"{self._encoding} near byte {watched.offset - len(data) + exc.start}: {exc.reason}") from exc
        lines = watched.lines.feed(text)
        if watched.skip_first and lines:
            watched.skip_first = False
            lines = lines[1:]
        return lines

    def close(self) -> None:
        self._files.clear()
