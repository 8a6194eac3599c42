"""Ctrl-C without stack traces: turn SIGINT into a clean cancel of the running jobs.

PySpark's own SIGINT handler calls ``cancelAllJobs()`` over py4j from inside the signal handler. When the main
thread is itself in a py4j call at that moment (starting the engine, submitting a job), the nested call
breaks the connection and py4j prints Python and Java stack traces before the program can say
"interrupted". :class:`InterruptGuard` replaces that handler: the first Ctrl-C only sets a flag and cancels
the jobs it watches from a helper thread; the main thread raises ``KeyboardInterrupt`` itself at safe points
(:meth:`InterruptGuard.check`, :meth:`InterruptGuard.join`), outside any py4j call. A second Ctrl-C raises at
once (the escape hatch when something hangs).

>>> with InterruptGuard() as guard:          # doctest: +SKIP
...     with Engine() as engine:
...         guard.install()                  # SparkContext installed its own handler meanwhile
...         guard.join(guard.watch(engine.new_job(dag)))
"""

from __future__ import annotations

import signal
import threading
from typing import Any

__all__ = ["InterruptGuard"]


class InterruptGuard:
    """A SIGINT handler for the main thread (see the module docstring). A context manager."""

    def __init__(self) -> None:
        self.interrupted = False
        self._jobs: list[Any] = []
        self._previous: Any = None

    def __enter__(self) -> InterruptGuard:
        if threading.current_thread() is threading.main_thread():  # signals reach the main thread only
            self._previous = signal.getsignal(signal.SIGINT)
            self.install()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._restore()

    def _restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def release(self) -> None:
        """Put the previous SIGINT handler back early (``KeyboardInterrupt`` if Ctrl-C was pressed meanwhile)."""
        self._restore()
        self.check()

    def install(self) -> None:
        """(Re)install the handler; call it after starting a SparkContext, which installs its own."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._handle)

    def watch(self, job: Any) -> Any:
        """Cancel ``job`` on Ctrl-C; returns it."""
        self._jobs.append(job)
        if self.interrupted:
            threading.Thread(target=job.cancel, daemon=True).start()
        return job

    def _handle(self, signum: int, frame: Any) -> None:
        if self.interrupted:
            raise KeyboardInterrupt
        self.interrupted = True
        for job in self._jobs:
            threading.Thread(target=job.cancel, name="jetspark-interrupt", daemon=True).start()

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if Ctrl-C was pressed."""
        if self.interrupted:
            raise KeyboardInterrupt

    def join(self, job: Any, poll: float = 0.2) -> None:
        """``job.join()``, raising ``KeyboardInterrupt`` after a Ctrl-C once the (cancelled) job has ended."""
        while True:
            try:
                job.join(poll)
            except TimeoutError:
                continue
            except Exception:
                self.check()
                raise
            self.check()
            return
