"""``Sinks.files_builder(directory)``: Jet 4.5's file sink builder, rolling to new files by date and size.

``Sinks.files_builder(directory).to_string_fn(fn).roll_by_date(pattern).roll_by_file_size(max_bytes)
.exactly_once(b).build()``:

- each processor writes its own files, named ``[DATE-]INDEX-SEQUENCE`` (``DATE`` the current time in the
  ``roll_by_date`` pattern, ``INDEX`` the global processor index, ``SEQUENCE`` counting from 0), a line
  ``to_string_fn(item)`` per item, UTF-8;
- it rolls to the next file when the formatted date changes, or before a line that would make the current file
  exceed ``max_bytes`` (a line longer than that gets a file of its own);
- files are written as items arrive (flushed at the end of each inbox) and closed when the input completes;
- the date pattern takes Jet's (Java's) letters: ``yyyy``/``YYYY`` year, ``MM`` month, ``dd`` day, ``HH``
  hour, ``mm`` minute, ``ss`` second; other characters are kept as they are (e.g. ``"YYYY-MM-dd.HH"``);
- ``exactly_once(True)`` without rolling is ``Sinks.files``' two-phase commit (``write_file_p(...,
  exactly_once=True)``); with rolling, in an ``EXACTLY_ONCE`` job, :class:`RollingTransactionalWriteFileP`
  rolls *inside* that protocol: every file it rolls to is one more staged sequence of the open transaction
  (``.<index>-<seq>.tmp``), all of them prepared at the snapshot and renamed to their final names
  (``[DATE-]INDEX-SEQUENCE``) when it completes; the date of each sequence travels with its id in the snapshot,
  so whichever processor commits it after a restart gives it the same name. Under another guarantee it writes
  as the at-least-once rolling sink.

Without rolling, ``build()`` gives ``Sinks.files(directory, to_string_fn)``. Vertex: ``filesSink(DIR)``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.descriptors import Sink
from processors.io.files import write_file_p
from processors.api.snapshot_keys import BroadcastKey
from processors.io.file_publish import is_exactly_once
from processors.io.transactional_files import _TXN_KEY, TransactionalWriteFileP
from processors.api.inbox import Inbox
from processors.api.processor import Processor
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["FileSinkBuilder", "RollingFileWriterP", "RollingTransactionalWriteFileP", "java_date_pattern"]

_JAVA_LETTERS = {"yyyy": "%Y", "YYYY": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}
_TOKEN = re.compile("|".join(sorted(_JAVA_LETTERS, key=len, reverse=True)))


def java_date_pattern(pattern: str) -> str:
    """Jet's date pattern as a ``strftime`` format.

    >>> java_date_pattern("YYYY-MM-dd.HH")
    '%Y-%m-%d.%H'
    """
    return _TOKEN.sub(lambda m: _JAVA_LETTERS[m.group(0)], pattern.replace("%", "%%"))


class RollingFileWriterP(Processor):
    """The processor of a rolling file sink (see the module docstring)."""

    def __init__(self, directory: str, to_string_fn: Callable[[Any], Any], date_format: str | None,
                 max_bytes: int | None):
        self.directory = directory
        self.to_string_fn = to_string_fn
        self.date_format = date_format
        self.max_bytes = max_bytes
        self._index = 0
        self._sequence = -1
        self._date = ""
        self._size = 0
        self._file: Any = None

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox: Any, context: Any) -> None:
        self._index = getattr(context, "global_processor_index", 0)
        os.makedirs(self.directory, exist_ok=True)

    def process(self, ordinal: int, inbox: Inbox) -> None:
        for item in inbox.take_all():
            data = f"{self.to_string_fn(item)}\n".encode()
            date = "" if self.date_format is None else time.strftime(self.date_format)
            full = self.max_bytes is not None and self._size > 0 and self._size + len(data) > self.max_bytes
            if self._file is None or date != self._date or full:
                self._roll(date)
            self._file.write(data)
            self._size += len(data)
        if self._file is not None:
            self._file.flush()

    def _roll(self, date: str) -> None:
        self.close()
        self._sequence += 1
        self._date, self._size = date, 0
        name = f"{date + '-' if date else ''}{self._index}-{self._sequence}"
        self._file = open(os.path.join(self.directory, name), "wb")  # noqa: SIM115 - closed in close()

    def complete(self) -> bool:
        self.close()
        return True

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class RollingTransactionalWriteFileP(TransactionalWriteFileP):
    """``Sinks.files_builder(...).roll_by_...(...).exactly_once(True)`` (see the module docstring): the
    two-phase-commit file sink whose transaction may span several rolled files."""

    def __init__(self, directory: str, to_string_fn: Callable[[Any], Any], date_format: str | None,
                 max_bytes: int | None):
        super().__init__(directory, to_string_fn, "utf-8")
        self._rolling = RollingFileWriterP(directory, to_string_fn, date_format, max_bytes)
        self._date_format, self._max_bytes = date_format, max_bytes
        self._dates: dict[tuple[int, int], str] = {}  # (owner, seq) -> the date in its final name
        self._rolled: list[int] = []  # sequences of the open transaction already rolled away from (closed)
        self._size = 0

    def init(self, outbox: Any, context: Any) -> None:
        if not is_exactly_once(context):  # at-least-once: the plain rolling writer does the work
            self._rolling.init(outbox, context)
            return
        super().init(outbox, context)

    def _path(self, owner: int, seq: int, state: str) -> Any:
        path = super()._path(owner, seq, state)
        date = self._dates.get((owner, seq), "")
        return path.with_name(f"{date}-{path.name}") if state == "final" and date else path

    def process(self, ordinal: int, inbox: Inbox) -> None:
        if not self._transactional:
            self._rolling.process(ordinal, inbox)
            return
        self._start()
        for item in inbox.take_all():
            data = f"{self._to_string_fn(item)}\n".encode()
            date = "" if self._date_format is None else time.strftime(self._date_format)
            full = self._max_bytes is not None and self._size > 0 and self._size + len(data) > self._max_bytes
            if self._open is None or date != self._dates[(self._index, self._seq)] or full:
                self._roll(date)
            self._open.write(data)
            self._size += len(data)
        self._open.flush()

    def _roll(self, date: str) -> None:
        """Close the open file (it stays staged in the open transaction) and open the next sequence."""
        if self._open is not None:
            self._open.close()
            self._rolled.append(self._seq)
            self._seq += 1
        self._dates[(self._index, self._seq)] = date
        self._size = 0
        self._open = open(self._path(self._index, self._seq, "tmp"), "wb")  # noqa: SIM115 - closed on prepare

    def _prepare_open_transaction(self) -> None:
        """Every file of the open transaction, rolled ones included, prepared as one group."""
        if self._open is not None:
            self._open.flush()
            os.fsync(self._open.fileno())
            self._open.close()
            self._open = None
            self._rolled.append(self._seq)
            self._seq += 1
        for seq in self._rolled:
            os.replace(self._path(self._index, seq, "tmp"), self._path(self._index, seq, "prepared"))
        self._txns.add_prepared(self._rolled)
        self._rolled = []

    def snapshot_commit_prepare(self) -> bool:
        if not self._transactional:
            return True
        self._start()
        self._prepare_open_transaction()
        self._txns.save(self._offer_to_snapshot, self._own_id, f"filesSink (vertex '{self._vertex}')",
                        value=lambda owner, seq: self._dates.get((owner, seq), ""))
        return True

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        entries = inbox.take_all()
        for key, date in entries:
            if isinstance(key, BroadcastKey) and isinstance(key.key, tuple) and key.key[0] == _TXN_KEY:
                self._dates[(key.key[1], key.key[2])] = date or ""
        super().restore_from_snapshot(Inbox(entries))

    def complete(self) -> bool:
        return self._rolling.complete() if not self._transactional else super().complete()

    def close(self) -> None:
        if not self._transactional:
            self._rolling.close()
            return
        for seq in self._rolled:  # rolled files of an aborted transaction: their items will be replayed
            self._path(self._index, seq, "tmp").unlink(missing_ok=True)
        self._rolled = []
        super().close()


class _Factory:
    def __init__(self, processor: type, *args: Any):
        self.processor, self.args = processor, args

    def __call__(self) -> Processor:
        return self.processor(*self.args)


class FileSinkBuilder:
    """``Sinks.files_builder(directory)`` (see the module docstring)."""

    def __init__(self, directory: str | os.PathLike):
        self._directory = os.fspath(directory)
        self._to_string_fn: Callable[[Any], Any] = str
        self._date_pattern: str | None = None
        self._max_bytes: int | None = None
        self._exactly_once = False

    def to_string_fn(self, fn: Callable[[Any], Any]) -> FileSinkBuilder:
        """The text of an item's line (default ``str``)."""
        if not callable(fn):
            raise TypeError(f"Sinks.files_builder('{self._directory}').to_string_fn(fn) needs a callable, got "
                            f"{fn!r:.80}")
        self._to_string_fn = fn
        return self

    def roll_by_date(self, pattern: str) -> FileSinkBuilder:
        """Start a new file whenever the current time formatted with ``pattern`` changes."""
        if not isinstance(pattern, str) or not pattern:
            raise DagValidationError(f"Sinks.files_builder('{self._directory}').roll_by_date(pattern) needs a "
                                     f"non-empty pattern such as 'YYYY-MM-dd.HH', got {pattern!r}")
        self._date_pattern = pattern
        return self

    def roll_by_file_size(self, max_bytes: int) -> FileSinkBuilder:
        """Start a new file before one would grow past ``max_bytes``."""
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise DagValidationError(f"Sinks.files_builder('{self._directory}').roll_by_file_size(max_bytes) needs "
                                     f"an int >= 1, got {max_bytes!r}")
        self._max_bytes = max_bytes
        return self

    def exactly_once(self, enable: bool) -> FileSinkBuilder:
        """Two-phase commit per snapshot in an ``EXACTLY_ONCE`` job (rolled files included)."""
        self._exactly_once = bool(enable)
        return self

    def build(self) -> Sink:
        """The sink."""
        directory, rolling = self._directory, self._date_pattern is not None or self._max_bytes is not None
        name = f"filesSink({directory})"
        if not rolling:
            return Sink(name, write_file_p(directory, self._to_string_fn, exactly_once=self._exactly_once))
        date_format = None if self._date_pattern is None else java_date_pattern(self._date_pattern)
        processor = RollingTransactionalWriteFileP if self._exactly_once else RollingFileWriterP
        return Sink(name, ProcessorMetaSupplier.of(_Factory(processor, directory, self._to_string_fn, date_format,
                                                            self._max_bytes)))
