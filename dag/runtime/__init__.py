"""The Spark runtime: ``Engine``, ``Job`` and the ``Runtime`` a job runs on.

The tree shows the roles:

- ``engine.py`` (``Engine``), ``job.py`` (``Job``), ``runtime.py`` (the ``Runtime`` interface and the lifecycle
  of a job through it; the engine picks one implementation per job, by its execution mode);
- ``common/``: what both runtimes share: the Spark session and cluster set-up (``session``, ``sharing``,
  ``cluster``, ``jvm``, ``warm_daemon``), authenticated channels (``channel``, ``jobchannel``), failure and log
  transport (``failures``, ``logforward``, ``interrupts``), ``status`` (``JobStatus``), ``metrics``,
  ``progress``, edge ``senders``, the driver-side collections and observables, ``meta_suppliers`` and
  ``job_group``;
- ``staged/``: the STAGED runtime: ``runtime`` over ``build`` (plan -> RDDs and actions, driver side) and
  ``task`` (the stage task, worker side), ``dealer``, ``native_io``;
- ``pipelined/``: the PIPELINED runtime: ``runtime`` over ``coordinator``, the task side (``worker``,
  ``runner``, ``links``, ``queues``) and snapshots (``restarts``, ``snapshot_*``, ``sink_ledger``);
- ``webui/``: watching jobs (web page, Prometheus).

Nothing here imports pyspark at module level: importing ``dag.runtime`` does not start a JVM; creating an
``Engine`` does.
"""

from __future__ import annotations
