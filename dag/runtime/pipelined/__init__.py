"""The pipelined runtime: every processor of every vertex runs at once inside one gang-scheduled Spark stage
(Jet's execution model on Spark; ``docs/architecture.md``, "Pipelined runtime").

- ``layout.py``: which task runs which processor; which edges are in-memory queues, which TCP links (pure);
- ``queues.py``: bounded queues, inbound edges and Jet's queue-level watermark coalescing (pure);
- ``links.py``: authenticated TCP links between tasks with back-pressure;
- ``runner.py``: processors as tasklets, their senders, the cooperative scheduler and threads;
- ``worker.py``: what one task of the barrier stage runs;
- ``coordinator.py``: the driver side: plans, starts, watches and cancels the stage, serves the channel;
- ``restarts.py``, ``suspension.py``: snapshots, restarts, suspend and resume, driven from the driver;
- ``snapshot_coordinator.py``, ``snapshot_store.py``, ``snapshot_routing.py``, ``sink_ledger.py``: the
  snapshot bookkeeping, its files, where restored entries go, and exactly-once driver-side sinks (pure);
- ``snapshots.py``: the task side of snapshots.
- ``runtime.py``: the job's side of the coordinator (``dag.runtime.runtime.Runtime`` for PIPELINED jobs).

Nothing here imports pyspark at module level.
"""
