"""The suite's shared test processors (as Jet's ``TestProcessors``): one definition of each, with parameters
where tests need variants.

The rule: a processor that more than one test module needs lives here (never copied, never imported from
another test module); a processor only one test needs stays beside it, above all one whose misbehaviour or
shape IS the subject of that test (a processor that forgets to return a bool, that saves state it cannot
restore, ...). Before writing a new one, look here first: a variant is a parameter, not a copy.

They are importable classes and functions of a real module (``tests.support.processors``), so cloudpickle
ships them to Spark's Python workers by reference, like any library processor.

- ``Nop``: does nothing (a vertex for DAG model tests).
- ``Emit(items)``: a source; processor 0 emits ``items``, or each processor its own list of a dict.
- ``Tag(*fields)``: tags every item with where it arrived: the processor's global index and/or the ordinal.
- ``EmitsNone``: emits ``None`` for every item (a contract violation the runtimes must report).
- ``Slow(seconds)``: takes ``seconds`` over every item (cooperative or not), so a job is still running.
- ``Endless``: a stream source counting for ever, paced; it never completes.
- ``FailAt(points, markers)``: passes items on and injects a fault once at given items (or after a commit).
- ``LifecycleLog(log)``: logs ``try_process``, ``complete_edge`` and ``complete`` calls to ``log`` (a base for
  processors that check the lifecycle's order; they add their own item handling).
- ``RememberingSupplier(supplier)``: a supplier that keeps the processors it made, to inspect their state.
- ``RecordingObserver``: an observer of an ``Observable`` keeping what it was told.
- ``sequence(count)``: a bounded, snapshotting source of ``0 .. count - 1``, slow enough to span snapshots.
- ``counter_stream(name, pause)``: an endless, snapshotting stream source counting 0, 1, 2, ...
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dag import RestartableError
from processors import AbstractProcessor, Processor, SourceBuilder, traverse_iterable
from tests.support.data import once


class Nop(Processor):
    """A processor that does nothing: a vertex for tests of the DAG model."""


class Emit(AbstractProcessor):
    """A batch source: processor 0 emits ``items`` (a sequence); with a mapping ``{global processor index:
    items}`` each processor emits its own items (none if absent)."""

    def __init__(self, items: Sequence[Any] | Mapping[int, Sequence[Any]]):
        super().__init__()
        self.all = items

    def init_processor(self, context) -> None:
        index = context.global_processor_index
        mine = self.all.get(index, []) if isinstance(self.all, Mapping) else (self.all if index == 0 else [])
        self.items = traverse_iterable(mine)

    def complete(self) -> bool:
        return self.emit_from_traverser(self.items)


TAG_FIELDS = ("index", "ordinal", "item")


class Tag(AbstractProcessor):
    """Emits, for every item received, a tuple of ``fields`` in their order: ``"index"`` (the processor's
    global index), ``"ordinal"`` (the inbound edge's) and ``"item"``; the default ``("item", "index")`` shows
    which processor did the work.

    >>> Tag("index", "ordinal", "item").fields
    ('index', 'ordinal', 'item')
    """

    def __init__(self, *fields: str):
        super().__init__()
        unknown = [f for f in fields if f not in TAG_FIELDS]
        if unknown:
            raise ValueError(f"Tag fields {unknown} unknown; use some of {TAG_FIELDS}")
        self.fields = fields or ("item", "index")
        self.index = 0

    def init_processor(self, context) -> None:
        self.index = context.global_processor_index

    def try_process_any(self, ordinal: int, item: Any) -> bool:
        values = {"index": self.index, "ordinal": ordinal, "item": item}
        return self.try_emit(tuple(values[f] for f in self.fields))


class Count(AbstractProcessor):
    """One processor: counts what it receives, emits ``("count", n)`` in complete()."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def try_process0(self, item: Any) -> bool:
        self.n += 1
        return True

    def complete(self) -> bool:
        return self.try_emit(("count", self.n))


class EmitsNone(AbstractProcessor):
    """Emits ``None`` for every item: the runtimes must reject it naming the processor."""

    def try_process0(self, item: Any) -> bool:
        return self.try_emit(None)


class Slow(AbstractProcessor):
    """Takes ``seconds`` over every item and emits nothing: a job of it is still running when a test acts on it
    (cancels it, asks its progress); ``cooperative=False`` declares it non-cooperative."""

    def __init__(self, seconds: float = 0.5, cooperative: bool = True):
        super().__init__()
        self.seconds, self.cooperative = seconds, cooperative

    def is_cooperative(self) -> bool:
        return self.cooperative

    def try_process0(self, item: Any) -> bool:
        time.sleep(self.seconds)  # slowness (the behaviour)
        return True


class Endless(Processor):
    """A source that emits a counter for ever (a stream that never completes)."""

    def init(self, outbox, context) -> None:
        self.outbox, self.n = outbox, 0

    def complete(self) -> bool:
        while self.outbox.offer(self.n):
            self.n += 1
            if self.n % 100 == 0:
                time.sleep(0.001)  # pacing the source (the behaviour): a stream, not a flood
                return False
        return False


class FailAt(AbstractProcessor):
    """Passes items on; at each item in ``points`` raises ``error`` once (``kill``: kills its Python worker).
    ``after_commit``: once a snapshot completed (its phase 2 reached this processor) after the point passed, also
    while no item comes, so that the restart is from a snapshot whatever the timing. ``markers`` is a directory
    of marker files (the processor runs in Spark's workers: "once" holds across processes)."""

    def __init__(self, points: Sequence[int], markers: Path, error: type[Exception] = RestartableError,
                 kill: bool = False, after_commit: bool = False):
        super().__init__()
        self.points, self.markers, self.error, self.kill = set(points), markers, error, kill
        self.after_commit, self.committed, self.top = after_commit, False, -1

    def snapshot_commit_finish(self, success: bool) -> bool:
        self.committed = self.committed or success
        return True

    def _due(self, item: int) -> bool:
        if not self.after_commit:
            return item in self.points and once(self.markers / f"item-{item}")
        self.top = max(self.top, item)
        due = [p for p in self.points if p <= self.top] if self.committed else []
        return bool(due) and once(self.markers / f"item-{min(due)}")

    def try_process(self) -> bool:
        if self.after_commit and self._due(self.top):
            raise self.error(f"injected after item {self.top}")
        return True

    def try_process0(self, item: int) -> bool:
        if self._due(item):
            if self.kill:
                os.kill(os.getpid(), signal.SIGKILL)
            raise self.error(f"injected at item {item}")
        return self.try_emit(item)


class LifecycleLog(AbstractProcessor):
    """Logs the lifecycle's calls to ``self.log``: ``"try_process"``, ``("complete_edge", ordinal)`` and
    ``"complete"``; each returns True (a subclass extends ``complete`` for a processor that needs several)."""

    def __init__(self, log: list | None = None):
        super().__init__()
        self.log: list = [] if log is None else log

    def try_process(self) -> bool:
        self.log.append("try_process")
        return True

    def complete_edge(self, ordinal: int) -> bool:
        self.log.append(("complete_edge", ordinal))
        return True

    def complete(self) -> bool:
        self.log.append("complete")
        return True


class RememberingSupplier:
    """A processor supplier that keeps every processor it made (``made``), so a test can look at their state."""

    def __init__(self, supplier: Callable[[], Any]):
        self.supplier, self.made = supplier, []

    def __call__(self) -> Any:
        processor = self.supplier()
        self.made.append(processor)
        return processor


class RecordingObserver:
    """An observer keeping what it was told: ``items``, ``errors`` (the exceptions), ``completed`` (a count), and
    all of it in order as ``events``: ``("next", item)``, ``("error", str(error))``, ``("complete",)``."""

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.items: list[Any] = []
        self.errors: list[BaseException] = []
        self.completed = 0

    def on_next(self, item: Any) -> None:
        self.items.append(item)
        self.events.append(("next", item))

    def on_error(self, error: BaseException) -> None:
        self.errors.append(error)
        self.events.append(("error", str(error)))

    def on_complete(self) -> None:
        self.completed += 1
        self.events.append(("complete",))


def sequence(count: int, per_fill: int = 30, until: Callable[[], bool] | None = None):
    """The tutorial's fault-tolerant sequence source, bounded; slow enough to span several snapshots. With
    ``until``, it completes only once ``until()`` is true (so a test can wait for a snapshot phase)."""

    def fill(state, buf):
        for _ in range(per_fill):
            if state["n"] >= count:
                if until is None or until():
                    buf.close()
                time.sleep(0.01)  # pacing (the behaviour): the source idles while it waits for ``until``
                return
            buf.add(state["n"])
            state["n"] += 1
        time.sleep(0.002)  # pacing (the behaviour): the sequence spans several snapshots

    def restore(state, saved):
        state["n"] = saved[0]

    return (SourceBuilder.batch("sequence", lambda ctx: {"n": 0}).fill_buffer_fn(fill)
            .create_snapshot_fn(lambda state: state["n"]).restore_snapshot_fn(restore).build())


def counter_stream(name: str, pause: float):
    """A stream source named ``name`` counting 0, 1, 2, ... for ever, 20 numbers then a ``pause`` (s) per fill;
    it saves its position in snapshots, so an exactly-once restart resumes where the snapshot left it."""

    def fill(state, buf):
        for _ in range(20):
            buf.add(state["n"])
            state["n"] += 1
        time.sleep(pause)  # pacing the stream (the behaviour)

    def restore(state, saved):
        state["n"] = saved[0]

    return (SourceBuilder.stream(name, lambda ctx: {"n": 0}).fill_buffer_fn(fill)
            .create_snapshot_fn(lambda state: state["n"]).restore_snapshot_fn(restore).build())
