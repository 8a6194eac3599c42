"""What the test modules share: the ONE place for test helpers and test processors (no test module imports
another test module; pytest collects ``test_*.py`` only, so nothing here is collected).

Imported from the repository root, where the tests run: ``from tests.support import running, wait_for``, or
from a topic module, ``from tests.support.processors import Tag``.

- ``waits``: bounded waits on a condition (``wait_for``), stream jobs that are always cancelled and joined
  within a bound (``running``), and checks that a job left no thread or socket behind.
- ``processors``: the shared test processors and sources (``Nop``, ``Emit``, ``Tag``, ``FailAt``,
  ``counter_stream``, ...), as Jet's ``TestProcessors``.
- ``data``: names no other test uses (``unique``, ``numbers``) and faults injected once across processes
  (``once``).
- ``ports``: loopback ports for socket sources and sinks.
- ``modes``: run a module's jobs in both execution modes (``ModeEngine``, ``MODES``).
- ``snapshots``: an engine-free snapshot/restore cycle of one vertex's processors.
- ``reference``: independent, plain-Python reference computations the examples are checked against.
- ``cli``: ``jetspark run`` on a paced stream job in a subprocess (``write_stream_job``, ``start_run``,
  ``LineReader``).
- ``drivers``: a test's own Spark driver in a subprocess (``run_driver``), for ``local-cluster`` and standalone
  clusters; its user module starts with ``cluster_faults`` (executor and worker kills, a paced sequence source,
  the exactly-once job that must survive a kill).
- ``tasks``: a DAG's pipelined tasks in threads of this process, without Spark (``in_process_spec``; also used
  by ``bench/bench_throughput.py``).

Server helpers stay beside what they serve: ``tests/postgres.py`` (also used by ``bench/``),
``tests/connectors/kafka_support.py`` (a module-scoped fixture) and ``tests/runtime/webui/`` (browser, client).

This package re-exports the most used names so that ``from tests.support import ...`` reads as one toolbox.
"""

from __future__ import annotations

from tests.support.data import numbers, once, unique
from tests.support.ports import connect, free_base_port, port_is_free
from tests.support.processors import counter_stream
from tests.support.waits import (JOIN_TIMEOUT, channel_closed, complete_until, jetspark_threads, running,
                                 stray_jetspark_threads, wait_for, wait_no_threads_left, worker_threads)

__all__ = ["JOIN_TIMEOUT", "channel_closed", "complete_until", "connect", "counter_stream", "free_base_port",
           "jetspark_threads", "numbers", "once", "port_is_free", "running", "stray_jetspark_threads", "unique",
           "wait_for", "wait_no_threads_left", "worker_threads"]
