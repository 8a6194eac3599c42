"""JDBC over DB-API 2.0: ``read_jdbc_p`` (a batch source) and ``write_jdbc_p`` (a batched sink, exactly-once
with two-phase commit), any DB-API driver, none imported here (psycopg in tests and examples).

This is the connector's public home. The processors live in :mod:`processors.io.jdbc_io` (with
:mod:`processors.io.jdbc_batch_sink`, :mod:`processors.io.jdbc_two_phase` and :mod:`processors.io.dbapi`):
they need no client library of their own, and the Pipeline API's ``Sources.jdbc``/``Sinks.jdbc`` (Jet's core
connectors) build on them without depending on this package.

>>> from connectors.jdbc import read_jdbc_p, write_jdbc_p
>>> read_jdbc_p.__module__
'processors.io.jdbc_io'
"""

from processors.io.dbapi import DatabaseError
from processors.io.jdbc_io import read_jdbc_p, write_jdbc_p

__all__ = ["read_jdbc_p", "write_jdbc_p", "DatabaseError"]
