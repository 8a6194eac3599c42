"""``JobSpec``: a DAG plus what running it needs, the thing a ``jetspark`` target function may return.

The ``jetspark`` command line calls a target function (``MODULE:FUNCTION`` or ``path.py:FUNCTION``; the
default function name is ``job``). The function returns either a bare :class:`~dag.DAG` or a ``JobSpec``:

- ``dag``: the DAG to draw, explain or run;
- ``prepare(engine)``: called before the job starts, e.g. to fill the named maps and lists its sources read;
- ``report(engine, job)``: called after the job completed, e.g. to print what its sinks wrote;
- ``name``: the job name (default: the function's name).

``dot``, ``explain`` and ``render`` use only ``dag``; ``run`` calls ``prepare``, runs the job, then ``report``.
This module is engine-free: importing it starts nothing.

>>> from dag import DAG
>>> from processors import noop_p
>>> d = DAG()
>>> _ = d.new_vertex("v", noop_p())
>>> JobSpec(d, report=lambda engine, job: print("done")).name is None
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from dag import DAG, Engine, Job

__all__ = ["JobSpec"]


@dataclass(frozen=True)
class JobSpec:
    """A runnable job: the DAG, an optional ``prepare(engine)`` and ``report(engine, job)``, an optional name."""

    dag: DAG
    prepare: Callable[[Engine], Any] | None = None
    report: Callable[[Engine, Job], Any] | None = None
    name: str | None = None
