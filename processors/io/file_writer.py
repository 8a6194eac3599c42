"""``WriteFileP``: the processor of ``write_file_p`` (see :mod:`processors.io.files` for the line format and
the rules of publication): one file per processor, written under a staging name and published by the job, or
appended to live in an unbounded job and flushed at most :data:`LIVE_FLUSH_SECONDS` after a line was written.
Its exactly-once variant is :class:`processors.io.transactional_files.TransactionalWriteFileP`.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from jetspark_base.errors import DagError
from processors.api.processor import Processor
from processors.io.file_publish import checked_directory

__all__ = ["WriteFileP", "LIVE_FLUSH_SECONDS"]

LIVE_FLUSH_SECONDS = 0.1
"""Seconds after which a live (unbounded-job) file sink flushes the oldest line it has written."""


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
    """The processor of :func:`write_file_p`: writes ``staging/<index>`` in a job, else a hidden temporary file
    renamed to ``directory/<index>`` in ``complete()`` (appended to it with ``append``). In an unbounded job
    (``context.unbounded``) it appends to ``directory/<index>`` itself and flushes at most
    :data:`LIVE_FLUSH_SECONDS` after a line was written (module docstring, "live")."""

    def __init__(self, directory, to_string_fn, encoding, staging=None, append=False, resume=False):
        self._directory = directory
        self._resume = resume  # a restart from a snapshot: append to the staged file an earlier execution wrote
        self._to_string_fn = to_string_fn
        self._encoding = encoding
        self._staging = staging
        self._append = append
        self._vertex = ""
        self._file = None
        self._temp_path: Path | None = None
        self._final_path: Path | None = None
        self._live = False
        self._unflushed_since: float | None = None  # live: when the oldest line not yet flushed was written

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        self._vertex = context.vertex_name
        name = str(context.global_processor_index)
        if getattr(context, "unbounded", False):  # live: the final file itself, appended to and flushed
            self._live = True
            directory = checked_directory(self._directory, self._vertex)
            self._file = open(directory / name, "a", encoding=self._encoding, newline="")
            return
        if self._staging is not None:
            staging = Path(self._staging)
            if not staging.is_dir():
                raise DagError(
                    f"write_file_p (vertex '{self._vertex}'): the job's staging directory '{staging}' is missing "
                    "on this machine; the driver and the processors must share the file system of "
                    f"'{self._directory}' (use write_text_p for per-machine or distributed storage)"
                )
            # the meta supplier owns the staged file: it stays when the processor fails (a restart from a
            # snapshot appends to it; a failed job's staging directory is removed as a whole)
            self._file = open(staging / name, "a" if self._resume else "w", encoding=self._encoding, newline="")
            return
        directory = checked_directory(self._directory, self._vertex)
        self._final_path = directory / name
        self._temp_path = directory / f".{name}.{uuid.uuid4().hex}.tmp"
        self._file = open(self._temp_path, "w", encoding=self._encoding, newline="")

    def process(self, ordinal: int, inbox) -> None:
        _write_lines(self, self._file, inbox.take_all())
        if self._live:
            now = time.monotonic()
            if self._unflushed_since is None:
                self._unflushed_since = now
            elif now - self._unflushed_since >= LIVE_FLUSH_SECONDS:  # a steady stream: flush on a timer
                self._flush()

    def try_process(self) -> bool:
        if self._unflushed_since is not None:  # live, and the inbox drained: flush now
            self._flush()
        return True

    def _flush(self) -> None:
        self._file.flush()
        self._unflushed_since = None

    def complete(self) -> bool:
        self._file.close()
        self._unflushed_since = None
        if self._final_path is None:  # live, or staged (the driver publishes the job's files when it succeeded)
            return True
        if self._append:
            with open(self._temp_path, "rb") as src, open(self._final_path, "ab") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(self._temp_path)
        else:
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
