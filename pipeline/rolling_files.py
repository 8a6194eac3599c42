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
  exactly_once=True)``); with rolling it is refused at ``build()`` (not supported yet).

Without rolling, ``build()`` gives ``Sinks.files(directory, to_string_fn)``. Vertex: ``filesSink(DIR)``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

from dag.errors import DagValidationError
from pipeline.connectors import Sink
from processors.files import write_file_p
from processors.inbox import Inbox
from processors.processor import Processor
from processors.suppliers import ProcessorMetaSupplier

__all__ = ["FileSinkBuilder", "RollingFileWriterP", "java_date_pattern"]

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


class _Factory:
    def __init__(self, *args: Any):
        self.args = args

    def __call__(self) -> RollingFileWriterP:
        return RollingFileWriterP(*self.args)


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
        """Two-phase commit per snapshot in an ``EXACTLY_ONCE`` job (not with rolling yet)."""
        self._exactly_once = bool(enable)
        return self

    def build(self) -> Sink:
        """The sink."""
        directory, rolling = self._directory, self._date_pattern is not None or self._max_bytes is not None
        name = f"filesSink({directory})"
        if not rolling:
            return Sink(name, write_file_p(directory, self._to_string_fn, exactly_once=self._exactly_once))
        if self._exactly_once:
            raise DagValidationError(f"Sinks.files_builder('{directory}'): exactly_once(True) together with "
                                     "roll_by_date/roll_by_file_size is not supported yet; drop one of them")
        date_format = None if self._date_pattern is None else java_date_pattern(self._date_pattern)
        return Sink(name, ProcessorMetaSupplier.of(_Factory(directory, self._to_string_fn, date_format,
                                                            self._max_bytes)))
