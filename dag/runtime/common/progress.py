"""A terminal progress display per Spark stage (``EngineConfig(progress=True)``), instead of Spark's own bar.

Each Spark action of the job is announced with its description (the vertices it runs); a daemon thread polls
``SparkContext.statusTracker()`` for the job's Spark job group twice a second and writes the progress of the
active Spark stages to stderr (overwritten in place on a terminal, appended otherwise):

    [wc] source, doc-lines, tokenize: count() (runs the sink processors)
    [wc] stage 3: 2/4 tasks (1 running)
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable, TextIO

__all__ = ["ProgressDisplay"]


class ProgressDisplay:
    """Polls Spark's status tracker for one job and prints per-stage progress."""

    def __init__(self, sc: Any, job: Any, stream: TextIO | None = None, interval: float = 0.5,
                 lines: Callable[[], list[str]] | None = None):
        self._sc, self._job, self._stream, self._interval = sc, job, stream or sys.stderr, interval
        if lines is not None:  # a pipelined job shows items/s per vertex instead of Spark stages
            self.lines = lines  # type: ignore[method-assign]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"jetspark-progress-{job.id}", daemon=True)
        self._last = ""

    def start(self) -> None:
        self._thread.start()

    def announce(self, what: str) -> None:
        """Print the description of the Spark action about to run."""
        self._write(f"[{self._job.name}] {what}", final=True)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        if self._last and self._stream.isatty():
            self._stream.write("\n")
            self._stream.flush()

    def lines(self) -> list[str]:
        """The current progress lines (one per active stage of the job)."""
        tracker = self._sc.statusTracker()
        out = []
        for job_id in tracker.getJobIdsForGroup(self._job.group_id):
            info = tracker.getJobInfo(job_id)
            if info is None or info.status != "RUNNING":
                continue
            for stage_id in info.stageIds:
                stage = tracker.getStageInfo(stage_id)
                if stage is None or stage.numTasks == 0 or stage.numCompletedTasks >= stage.numTasks:
                    continue
                if stage.numActiveTasks == 0 and stage.numCompletedTasks == 0:
                    continue
                out.append(f"[{self._job.name}] stage {stage_id}: "
                           f"{stage.numCompletedTasks}/{stage.numTasks} tasks ({stage.numActiveTasks} running)")
        return out

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                text = " | ".join(self.lines())
            except Exception:  # noqa: BLE001 - a display must never break the job
                continue
            if text and text != self._last:
                self._write(text, final=False)

    def _write(self, text: str, final: bool) -> None:
        tty = self._stream.isatty()
        if tty:
            self._stream.write("\r\x1b[K" + text[:200] + ("\n" if final else ""))
        else:
            self._stream.write(text + "\n")
        self._last = "" if final else text
        self._stream.flush()
