"""The Spark runtime: ``Engine``, ``Job``, ``JobStatus``, job metrics, progress, failure transport and the
Spark-native I/O of runtime-bound suppliers.

Module map: ``session`` (start/borrow a SparkSession), ``engine`` (``Engine``), ``job`` (``Job``, ``JobStatus``),
``build`` (plan -> RDDs and actions, driver side), ``task`` (the stage task, worker side), ``senders`` (edge
routing in tasks), ``metrics``, ``failures``, ``progress``, ``native_io``.

Nothing here imports pyspark at module level: importing ``dag.runtime`` does not start a JVM; creating an
``Engine`` does.
"""

from __future__ import annotations
