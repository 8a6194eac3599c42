"""Spark's own text I/O as DAG vertices: ``read_text_p(path)`` and ``write_text_p(path, to_string_fn)``.

Both return runtime-bound meta-suppliers (``processors.api.suppliers.RuntimeBound``; see "Runtime-bound
suppliers" in docs/architecture.md): they hold no processor, only settings, and the engine implements them
with ``dag/runtime/staged/native_io.py``:

- ``read_text_p(path)`` (``runtime_kind = "spark_text_source"``): ``SparkContext.textFile(path)``, so local
  paths, HDFS, object stores, globs and comma-separated lists work as in Spark. The vertex emits every line
  (without its terminator) and has exactly its parallelism P in partitions (coalesced, or spread with a
  shuffle when Spark made fewer splits than P).
- ``write_text_p(path, to_string_fn=str)`` (``runtime_kind = "spark_text_sink"``): ``saveAsTextFile(path)`` of
  ``to_string_fn(item)``: a directory of ``part-NNNNN`` files written by Spark's committer, so a failed job
  leaves no ``_SUCCESS`` marker. The path must not exist yet (Spark never overwrites); the job fails with a
  ``DagValidationError`` naming it otherwise.

Their ``get()`` raises, so they cannot run in ``verify_processor``; an ``Engine`` job runs them.

>>> src = read_text_p("hdfs:///books/*.txt")
>>> src.runtime_kind, src.path
('spark_text_source', 'hdfs:///books/*.txt')
"""

from __future__ import annotations

import os
from typing import Any, Callable

from jetspark_base.errors import DagValidationError
from processors.library.buffered import _require_callable
from processors.api.suppliers import ProcessorMetaSupplier, RuntimeBound

__all__ = ["read_text_p", "write_text_p", "SparkTextSource", "SparkTextSink"]


def _checked_path(owner: str, path: Any) -> str:
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path:
        raise DagValidationError(f"{owner}: path must be a non-empty str or path, got {path!r}")
    return path


class SparkTextSource(RuntimeBound, ProcessorMetaSupplier):
    """The meta-supplier :func:`read_text_p` returns: ``path`` is read with Spark's ``textFile``."""

    runtime_kind = "spark_text_source"

    def __init__(self, path: str):
        self.path = path

    def __repr__(self) -> str:
        return f"read_text_p({self.path!r})"


class SparkTextSink(RuntimeBound, ProcessorMetaSupplier):
    """The meta-supplier :func:`write_text_p` returns: items go to ``path`` with Spark's ``saveAsTextFile``."""

    runtime_kind = "spark_text_sink"

    def __init__(self, path: str, to_string_fn: Callable[[Any], str] = str):
        self.path = path
        self.to_string_fn = to_string_fn

    def __repr__(self) -> str:
        return f"write_text_p({self.path!r})"


def read_text_p(path: str | os.PathLike) -> SparkTextSource:
    """A source of the lines under ``path``, read by Spark itself (local, ``hdfs://``, ``s3a://``, globs).

    >>> dag.new_vertex("lines", read_text_p("/data/books"))  # doctest: +SKIP
    """
    return SparkTextSource(_checked_path("read_text_p", path))


def write_text_p(path: str | os.PathLike, to_string_fn: Callable[[Any], str] = str) -> SparkTextSink:
    """A sink writing one line per item, ``to_string_fn(item)``, with Spark's ``saveAsTextFile(path)``.

    >>> sink = write_text_p("/data/counts", to_string_fn=lambda kv: f"{kv[0]} {kv[1]}")
    >>> dag.new_vertex("out", sink)  # doctest: +SKIP
    """
    _require_callable("write_text_p", "to_string_fn", to_string_fn)
    return SparkTextSink(_checked_path("write_text_p", path), to_string_fn)
