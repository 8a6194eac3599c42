"""The Spark runtime: ``Engine``, ``Job``, ``JobStatus``, job metrics, progress, failure transport and the
Spark-native I/O of runtime-bound suppliers.

Module map: ``session`` (start/borrow a SparkSession), ``engine`` (``Engine``), ``job`` (``Job``), ``status``
(``JobStatus``), ``runtime`` (the ``Runtime`` interface a job runs on, and the lifecycle of a job through it),
``staged_runtime`` (its staged implementation) over ``build`` (plan -> RDDs and actions, driver side), ``task``
(the stage task, worker side), ``senders`` (edge routing in tasks); ``pipelined/runtime`` (its pipelined
implementation); ``meta_suppliers``, ``job_group``, ``metrics``, ``failures``, ``progress``, ``native_io``.

Nothing here imports pyspark at module level: importing ``dag.runtime`` does not start a JVM; creating an
``Engine`` does.
"""

from __future__ import annotations
