"""The streaming examples' input generators run on the driver as a thread (trade_monitor.py's
``TradeGenerator``, session_windows.py's ``ClickGenerator``): :class:`GeneratorThread` is their shared life
cycle, a daemon thread running the subclass's ``_run`` until :meth:`~GeneratorThread.stop`; ``with`` starts
and stops it; :attr:`~GeneratorThread.generated` keeps every item made (the tests check the job's output
against it).

>>> import time
>>> class Ticks(GeneratorThread):
...     def _run(self):
...         while not self._stop.wait(0.01):
...             self.generated.append(len(self.generated))
>>> with Ticks("ticks") as ticks:
...     time.sleep(0.1)
>>> ticks.generated[:3]
[0, 1, 2]
"""

from __future__ import annotations

import threading

IS_EXAMPLE = False
"""A helper of the examples, not one: ``tests/examples/test_all_examples.py`` does not look for ``job()`` here."""

__all__ = ["GeneratorThread"]


class GeneratorThread:
    """A daemon thread named ``name`` running :meth:`_run`, which loops until ``self._stop`` is set."""

    def __init__(self, name: str):
        self.generated: list = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to stop and wait for it (at most 5 s)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        raise NotImplementedError
