"""Spark's Python worker daemon with pyspark's worker module and jetspark's task-side modules imported before it
forks: ``spark.python.daemon.module`` of the sessions jetspark starts (``session.py``).

Spark's own daemon (``pyspark.daemon``) imports the worker module in each forked child, and the child then
imports jetspark while it unpickles its first task: on a busy 2-core machine that made every fresh Python worker
start seconds late, and a pipelined job restarted after a killed worker waited for two of them. A worker forked
from this daemon has both already. pyspark imports late because a module that starts threads on import (pandas,
pyarrow) would make the fork unsafe; neither ``pyspark.worker`` nor these jetspark modules start one, and
:func:`_preload` skips them if a thread runs already.
"""

from __future__ import annotations

import importlib
import threading

PRELOADED = ("pyspark.worker", "dag.runtime.staged.task", "dag.runtime.pipelined.worker", "processors", "edges")
"""What the daemon imports before it forks its workers."""


def _preload() -> None:
    if threading.active_count() != 1:
        return
    for name in PRELOADED:
        importlib.import_module(name)


if __name__ == "__main__":
    from pyspark.daemon import manager

    _preload()
    manager()
