"""The wake-up call of a task's scheduler (pure Python).

A task has one thread that runs its cooperative processors *and* its links' socket I/O (``links.py``), plus a
thread per non-cooperative processor. Anything that gives the scheduler work calls :meth:`Waker.set`: a queue
of a cooperative processor that receives an entry, a non-cooperative processor that offers to a link, the
driver's snapshot instructions, a failure. The scheduler, when a round moved nothing, sleeps in
:meth:`Waker.sleep`: a ``select`` over its links' sockets and the read end of a pipe, so bytes arriving from a
peer wake it as promptly as a ``set()`` from a thread. ``set()`` writes to the pipe only while the scheduler
sleeps (a flag it raises before it looks at the event one last time), so the common case, a ``set()`` while the
scheduler runs, costs no system call.
A non-cooperative processor's thread waits on an ``Event`` of its own, which only its inbound queues set (the
scheduler's wake-ups are not its business).

::

    scheduler thread                          any thread
    ----------------                          ----------
    clear(); run a round                      set(): event.set()
    nothing moved: sleeping = True                   if sleeping: write 1 byte to the pipe
      event set? -> return at once
      else select(pipe + sockets, timeout)
    sleeping = False; empty the pipe

Either the scheduler sees the event set, or ``set()`` sees ``sleeping`` and writes: no wake-up is lost.
"""

from __future__ import annotations

import os
import select
import threading
from typing import Any

__all__ = ["Waker"]


class Waker:
    """A ``threading.Event`` that also wakes a thread sleeping in ``select`` (see the module docstring)."""

    __slots__ = ("event", "sleeping", "_poked", "_read", "_write")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.sleeping = False
        self._poked = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def set(self) -> None:
        """Wake the scheduler (and any thread in :meth:`wait`)."""
        self.event.set()
        if self.sleeping and not self._poked:
            self._poked = True
            try:
                os.write(self._write, b"\0")
            except OSError:  # the pipe is full (a byte is there already) or closed (the task ends)
                pass

    def clear(self) -> None:
        self.event.clear()

    def is_set(self) -> bool:
        return self.event.is_set()

    def wait(self, timeout: float) -> bool:
        """For a thread other than the scheduler: wait until :meth:`set` or ``timeout`` seconds."""
        return self.event.wait(timeout)

    def sleep(self, readers: list[Any], writers: list[Any], timeout: float) -> tuple[list[Any], list[Any]]:
        """For the scheduler: wait until :meth:`set`, a socket of ``readers`` has bytes, one of ``writers`` takes
        bytes, or ``timeout`` seconds; returns the ready ``(readers, writers)``."""
        self.sleeping = True
        try:
            if self.event.is_set():
                return [], []
            ready, writable, _ = select.select([self._read, *readers], writers, [], timeout)
        finally:
            self.sleeping = False
        self._poked = False
        if self._read in ready:  # empty the pipe (a byte written late by a set() is emptied at the next sleep)
            try:
                os.read(self._read, 64)
            except OSError:
                pass
            ready.remove(self._read)
        return ready, writable

    def close(self) -> None:
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
