"""The Pipeline API's JDBC source and sinks: ``Sources.jdbc``, ``Sinks.jdbc`` and ``Sinks.jdbc_builder()``
(Jet's ``JdbcSinkBuilder``), thin descriptors over the processors of :mod:`processors.io.jdbc_io` (public home
:mod:`connectors.jdbc`). Nothing here imports a database driver: the user's ``new_connection_fn`` does, when
the job runs.

>>> Sinks.jdbc_builder().update_query("INSERT INTO t VALUES (%s)").connection_fn(connect) \\
...     .exactly_once(True).build()                                                         # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from processors.io.jdbc_io import read_jdbc_p, write_jdbc_p
from jetspark_base.errors import DagValidationError
from pipeline.descriptors import BatchSource, Sink

__all__ = ["jdbc_source", "jdbc_sink", "JdbcSinkBuilder", "SOURCE_NAME", "SINK_NAME"]

SOURCE_NAME, SINK_NAME = "jdbcSource", "jdbcSink"


def jdbc_source(new_connection_fn: Callable[[], Any], query_or_result_set_fn: Any,
                create_output_fn: Callable[[Any], Any] | None = None) -> BatchSource:
    """``Sources.jdbc``: the rows of an SQL query (one processor) or of ``result_set_fn`` shares (all)."""
    return BatchSource(SOURCE_NAME, read_jdbc_p(new_connection_fn, query_or_result_set_fn, create_output_fn))


def jdbc_sink(update_query: str, new_connection_fn: Callable[[], Any],
              bind_fn: Callable[[Any], Any] | None = None) -> Sink:
    """``Sinks.jdbc``: the at-least-once batched sink (``write_jdbc_p`` with its defaults)."""
    return Sink(SINK_NAME, write_jdbc_p(update_query, new_connection_fn, bind_fn))


class JdbcSinkBuilder:
    """``Sinks.jdbc_builder()``: set ``update_query`` and ``connection_fn``, optionally ``bind_fn``,
    ``exactly_once`` (default False) and ``batch_limit`` (default 50), then ``build()``. Each setter returns
    the builder."""

    def __init__(self) -> None:
        self._update_query: str | None = None
        self._connection_fn: Callable[[], Any] | None = None
        self._bind_fn: Callable[[Any], Any] | None = None
        self._exactly_once = False
        self._batch_limit = 50

    def update_query(self, query: str) -> "JdbcSinkBuilder":
        """The statement run for every item, with the driver's parameter markers."""
        self._update_query = query
        return self

    def connection_fn(self, fn: Callable[[], Any]) -> "JdbcSinkBuilder":
        """A function returning a new DB-API connection (it runs where the processors run)."""
        self._connection_fn = fn
        return self

    def bind_fn(self, fn: Callable[[Any], Any]) -> "JdbcSinkBuilder":
        """``fn(item)`` gives the statement's parameters (default: the item itself)."""
        self._bind_fn = fn
        return self

    def exactly_once(self, enabled: bool) -> "JdbcSinkBuilder":
        """Two-phase commit per snapshot when the job's guarantee is ``EXACTLY_ONCE``."""
        self._exactly_once = enabled
        return self

    def batch_limit(self, limit: int) -> "JdbcSinkBuilder":
        """Items per ``executemany`` batch."""
        self._batch_limit = limit
        return self

    def build(self) -> Sink:
        """The sink (vertex ``jdbcSink``)."""
        if self._update_query is None or self._connection_fn is None:
            raise DagValidationError("Sinks.jdbc_builder(): set update_query(...) and connection_fn(...) before "
                                     "build()")
        return Sink(SINK_NAME, write_jdbc_p(self._update_query, self._connection_fn, self._bind_fn,
                                            self._exactly_once, self._batch_limit))
