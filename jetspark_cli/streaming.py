"""``jetspark run`` on a stream job: run until Ctrl-C or ``--seconds``, with live results and a status line.

- A job is run this way when its DAG has a stream source (it runs PIPELINED and never ends by itself) or when
  ``--seconds`` is given. Every :data:`STATUS_SECONDS` the monitor prints the items that arrived in the job's
  driver-side list sinks (``write_list_p``) since the last look, on standard output, and one status line on
  standard error: items/s per vertex (emitted; a sink's received), the watermark lag (wall clock - the
  watermark that reached the sinks, when watermarks are epoch milliseconds) and the last snapshot. On a
  terminal the status line rewrites itself (``\\r``); otherwise it is one line per tick.
- ``--seconds N``: the job is cancelled N seconds after its tasks started (Spark's start-up and the wait for
  task slots do not count; exit status 0). Ctrl-C cancels it too, waits (bounded)
  for its tasks to stop and leaves with exit status 130.
- :func:`measured_dot`: the DAG's DOT (``dag.to_dot()``) with each edge labelled by the items that crossed it
  and their rate (over the time the job's tasks ran), from the job's metrics; ``run --measured FILE`` writes it (or its picture, for a ``.svg``/
  ``.png``/``.pdf`` suffix) at every tick and when the job ends.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, TextIO

from dag.runtime.common.metrics import EMITTED, RECEIVED
from dag.runtime.webui.drawing import count_label, edge_counts, labelled_dot

__all__ = ["is_stream_dag", "StreamMonitor", "measured_dot", "write_measured", "STATUS_SECONDS"]

STATUS_SECONDS = 1.0
"""How often the monitor prints results and the status line."""
CANCEL_WAIT_SECONDS = 60.0
"""How long a cancelled job may take to stop before ``run`` gives up waiting."""
_IDLE_WM = 2**63 - 1


def is_stream_dag(dag: Any) -> bool:
    """True when a vertex of ``dag`` is a stream source (the job never ends by itself)."""
    from processors.io.text_streams import is_stream_source

    return any(is_stream_source(v.meta_supplier) for v in dag)


def measured_dot(dag: Any, metrics: Any, seconds: float) -> str:
    """``dag.to_dot()`` with ``N items, R/s`` on every edge (``metrics``: a ``JobMetrics``; ``seconds``: how
    long the job ran); the web page draws the same (``dag/runtime/webui/drawing.py``).

    >>> from dag import DAG
    >>> from dag.runtime.common.metrics import JobMetrics
    >>> from edges import between
    >>> from processors import noop_p
    >>> d = DAG(); a = d.new_vertex("a", noop_p()); b = d.new_vertex("b", noop_p()); _ = d.edge(between(a, b))
    >>> print(measured_dot(d, JobMetrics({("a", 0, "emittedCount", 0): 300}), 2.0).splitlines()[3].strip())
    "a" -> "b" [label="300 items, 150/s", queueSize=1024];
    """
    return labelled_dot(dag, [count_label(n, n / max(seconds, 1e-9)) for _, n in edge_counts(dag, metrics)])


def write_measured(path: str | Path, dag: Any, metrics: Any, seconds: float) -> None:
    """Write :func:`measured_dot` to ``path``: DOT text, or a picture when the suffix is svg, png or pdf."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = measured_dot(dag, metrics, seconds)
    fmt = path.suffix.lstrip(".")
    if fmt in ("svg", "png", "pdf"):
        import graphviz

        path.write_bytes(graphviz.pipe("dot", fmt, text.encode("utf-8")))
    else:
        path.write_text(text + "\n", encoding="utf-8")


class StreamMonitor:
    """Prints a running job's new list-sink items and its status line (see the module docstring)."""

    def __init__(self, engine: Any, job: Any, dag: Any, out: TextIO | None = None, err: TextIO | None = None):
        self.engine, self.job, self.dag = engine, job, dag
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.started = time.monotonic()
        self._last = (self.started, {})
        self._shown: dict[str, int] = {}
        self._last_snapshot: tuple[int | None, float] = (None, 0.0)
        self._sinks = [v.name for v in dag if not dag.get_outbound_edges(v.name)]
        self._lists = [v.meta_supplier.collection[1] for v in dag
                       if getattr(v.meta_supplier, "runtime_kind", None) == "driver_sink"
                       and v.meta_supplier.collection[0] == "list"]
        for name in self._lists:  # show only what this job adds
            self._shown[name] = len(engine.get_list(name))

    def tick(self) -> None:
        """Print the new results and the status line."""
        for name in self._lists:
            items = self.engine.get_list(name)
            new = list(items[self._shown[name]:])
            self._shown[name] += len(new)
            for item in new:
                print(item, file=self.out)
        self.out.flush()
        line = self.status_line()
        if self.err.isatty():
            print("\r\x1b[2K" + line, end="", file=self.err, flush=True)
        else:
            print(line, file=self.err, flush=True)

    def status_line(self) -> str:
        """``[12.0 s] source 1,000/s, map 1,000/s, sink 998/s | watermark lag 3.1 s | snapshots off``."""
        metrics = self.job.metrics()
        now = time.monotonic()
        totals = {v.name: metrics.total(v.name, RECEIVED if v.name in self._sinks else EMITTED)
                  for v in self.dag if v.name in metrics}
        last_time, last = self._last
        self._last = (now, totals)
        elapsed = max(now - last_time, 1e-3)
        rates = ", ".join(f"{v} {(n - last.get(v, 0)) / elapsed:,.0f}/s" for v, n in totals.items()) or "starting"
        return f"[{now - self.started:.1f} s] {rates} | {self._watermark_lag(metrics)} | {self._snapshot(metrics)}"

    def _watermark_lag(self, metrics: Any) -> str:
        """Wall clock - the lowest watermark sent into a sink (epoch milliseconds assumed)."""
        marks = [metrics.watermark(e.source_name) for s in self._sinks for e in self.dag.get_inbound_edges(s)]
        marks = [m for m in marks if m is not None and m != _IDLE_WM]
        if not marks:
            return "no watermark"
        return f"watermark lag {time.time() - min(marks) / 1000:.1f} s"

    def _snapshot(self, metrics: Any) -> str:
        """The last complete snapshot's id and age (``job.metrics().last_snapshot``, its age since this monitor
        first saw it), and restarts."""
        from dag.config import ProcessingGuarantee

        if self.job.config.processing_guarantee is ProcessingGuarantee.NONE:
            return "snapshots off"
        last, now = metrics.last_snapshot, time.monotonic()
        if last is None:
            return f"no snapshot yet, {metrics.restarts} restart(s)"
        if last != self._last_snapshot[0]:
            self._last_snapshot = (last, now)
        return f"snapshot {last} {now - self._last_snapshot[1]:.1f} s ago, {metrics.restarts} restart(s)"

    def finish(self) -> None:
        if self.err.isatty():
            print(file=self.err)


def run_stream(engine: Any, job: Any, dag: Any, seconds: float | None, measured: str | None,
               guard: Any = None) -> str:
    """Monitor ``job`` until it ends, ``seconds`` pass once its tasks run (then cancel it) or Ctrl-C (cancel it,
    raise ``KeyboardInterrupt``); returns how it ended: ``"completed"`` or ``"stopped after N s"``. A failed job
    raises its error. ``guard``: the :class:`~dag.runtime.common.interrupts.InterruptGuard` watching ``job``; Ctrl-C
    then cancels the job from the guard's thread and is raised here between two looks, never inside a py4j
    call (an interrupted py4j call breaks the connection, and stopping Spark afterwards could hang)."""
    from jetspark_base.errors import CancellationError

    check = guard.check if guard is not None else lambda: None
    monitor = StreamMonitor(engine, job, dag)
    deadline = running = None
    try:
        while not job.status.is_terminal:
            check()
            if running is None and job.metrics().vertices:  # the tasks are running
                running = time.monotonic()
                deadline = None if seconds is None else running + seconds
            wait = STATUS_SECONDS if deadline is None else min(STATUS_SECONDS, max(0.0, deadline - time.monotonic()))
            try:
                job.join(timeout=wait)
            except TimeoutError:
                pass
            except CancellationError:
                check()  # cancelled by Ctrl-C: say so (else someone else cancelled it)
                raise
            check()
            monitor.tick()
            if measured and running is not None:
                write_measured(measured, dag, job.metrics(), time.monotonic() - running)
            if deadline is not None and time.monotonic() >= deadline and not job.status.is_terminal:
                break
        else:
            check()  # ended by the Ctrl-C's cancel
            monitor.finish()
            job.join()
            return "completed"
    except KeyboardInterrupt:
        monitor.finish()
        _cancel(job, CancellationError)
        raise
    monitor.finish()
    _cancel(job, CancellationError)
    if measured:
        write_measured(measured, dag, job.metrics(), time.monotonic() - (running or monitor.started))
    return f"stopped after {seconds:g} s"


def _cancel(job: Any, cancellation: type) -> None:
    job.cancel()
    try:
        job.join(timeout=CANCEL_WAIT_SECONDS)
    except (cancellation, TimeoutError):
        pass
