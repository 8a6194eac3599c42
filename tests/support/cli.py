"""``jetspark run`` on a small endless stream job, in a subprocess (its own JVM), as the CLI tests drive it.

- ``write_stream_job(path, dag_text)``: a job file whose ``job()`` reads :data:`PACED_COUNTER`'s source
  (``counter_source()``: 0, 1, 2, ... paced, endless) and whose DAG ``dag_text`` builds.
- ``start_run(args, cwd)``: ``python -m jetspark_cli.main run ARGS --master local[2]`` with the repository on
  ``PYTHONPATH``; the caller waits for it (bounded) and kills it in ``finally``.
- ``LineReader(pipe)``: collects a pipe's lines in a thread, so a test can wait (bounded) for a line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from tests.support.waits import wait_for

__all__ = ["PACED_COUNTER", "LineReader", "start_run", "write_stream_job"]

REPO = Path(__file__).resolve().parents[2]

PACED_COUNTER = '''
import time
from dag import DAG
from edges import between
from processors import SourceBuilder


def fill(state, buf):
    time.sleep(0.05)  # pacing the stream (the behaviour)
    for _ in range(5):
        buf.add(state[0])
        state[0] += 1


def counter_source():
    """An endless stream source counting 0, 1, 2, ... (about 100 numbers a second)."""
    return SourceBuilder.stream("counter", lambda ctx: [0]).fill_buffer_fn(fill).build()
'''
"""The start of a job file: ``counter_source()`` and the imports of ``DAG``, ``between`` and ``SourceBuilder``."""


def write_stream_job(path: Path, dag_text: str) -> Path:
    """Write the job file ``path``: :data:`PACED_COUNTER`, then ``dag_text`` (dedented), which defines ``job()``."""
    path.write_text(PACED_COUNTER + textwrap.dedent(dag_text))
    return path


def start_run(args: list[str], cwd: Path, stdout: int = subprocess.PIPE) -> subprocess.Popen:
    """``jetspark run ARGS --master local[2]`` in a subprocess in ``cwd``, stderr piped (text)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "jetspark_cli.main", "run", *args, "--master", "local[2]"],
                            cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)


class LineReader:
    """Collects a pipe's lines in a thread, so the test can wait for one without blocking for ever."""

    def __init__(self, pipe) -> None:
        self.lines: list[str] = []
        self.thread = threading.Thread(target=lambda: self.lines.extend(pipe), daemon=True)
        self.thread.start()

    def wait_for(self, predicate, timeout: float, what: str) -> None:
        """Return once ``predicate(lines)`` is true; fail naming ``what`` and the last lines after ``timeout`` s."""
        wait_for(lambda: predicate(self.lines), timeout, lambda: f"{what}; got {self.lines[-20:]}", interval=0.1)
