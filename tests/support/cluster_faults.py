"""Faults the cluster tests inject from inside a Spark executor's Python worker, and the exactly-once job that
must survive them.

The tests that kill executors or workers run their driver in a subprocess (``tests.support.drivers``), whose
``usermod.py`` starts with THIS module's source text: the executors of a standalone cluster have no copy of
the test suite, so the functions travel with the user module (by value). Hence this module imports only the
standard library at its top, and jetspark inside the functions.

- ``executor_pid()``: the pid of the executor JVM running this Python worker (``ancestor(marker)``: the
  nearest ancestor process whose command line holds ``marker``).
- ``fault_once(marker, note)``: True for the first caller in the whole job (any process) to create the file
  ``marker``, which then holds ``note`` (the pids it is about to kill, for the test to report).
- ``kill_executor_once_published(marker, output)``: a map function that kills its executor's JVM, once, as
  soon as ``output`` holds a published file (a snapshot completed).
- ``sequence(count)``: the tutorial's fault-tolerant sequence source, bounded and paced.
- ``killed_exactly_once_job(engine, n, marker, output, timeout)`` (driver side): ``sequence(n)`` through
  ``kill_executor_once_published`` into an exactly-once ``write_file_p``, as an EXACTLY_ONCE PIPELINED job.
"""

from __future__ import annotations

import os
import signal
import time


def ancestor(marker):
    """The pid of the nearest ancestor process whose command line contains ``marker`` (bytes)."""
    pid = os.getpid()
    for _ in range(8):  # worker -> pyspark daemon -> executor JVM -> ... (Worker JVM)
        with open(f"/proc/{pid}/stat") as f:
            pid = int(f.read().rsplit(")", 1)[1].split()[1])
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if marker in f.read():
                return pid
    raise RuntimeError(f"no ancestor {marker!r}")


def executor_pid():
    """The pid of the executor JVM this Python worker serves."""
    return ancestor(b"CoarseGrainedExecutorBackend")


def fault_once(marker, note):
    """True for the first caller in any process to create the file ``marker`` (atomically), which then holds
    ``note``; False for every later caller."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(fd, note.encode())
    os.close(fd)
    return True


def kill_executor_once_published(marker, output):
    """item -> item; once output was published (a snapshot completed), kills this executor's JVM, once."""
    def fn(x):
        published = os.path.isdir(output) and any(not n.startswith(".") for n in os.listdir(output))
        if published and not os.path.exists(marker):
            pid = executor_pid()
            if fault_once(marker, str(pid)):
                os.kill(pid, signal.SIGKILL)
        return x
    return fn


def sequence(count):
    """The tutorial's fault-tolerant sequence source, bounded and paced (about 2,000 numbers a second)."""
    from processors import SourceBuilder

    def fill(state, buf):
        for _ in range(20):
            if state["n"] >= count:
                buf.close()
                return
            buf.add(state["n"])
            state["n"] += 1
        time.sleep(0.01)  # pacing the source (the behaviour)

    def restore(state, saved):
        state["n"] = saved[0]

    return (SourceBuilder.batch("sequence", lambda ctx: {"n": 0}).fill_buffer_fn(fill)
            .create_snapshot_fn(lambda state: state["n"]).restore_snapshot_fn(restore).build())


def killed_exactly_once_job(engine, n, marker, output, timeout):
    """Run ``sequence(n)`` -> ``kill_executor_once_published(marker, output)`` -> ``write_file_p(output,
    exactly_once=True)`` (snapshots every 200 ms) to its end; ``(job, sorted published numbers, the marker's
    note or None)``."""
    from dag import DAG, ExecutionMode, JobConfig, ProcessingGuarantee
    from edges import between
    from processors import map_p, write_file_p

    dag = DAG()
    src = dag.new_vertex("sequence", sequence(n))
    kill = dag.new_vertex("kill", map_p(kill_executor_once_published(marker, output)), local_parallelism=1)
    sink = dag.new_vertex("sink", write_file_p(output, exactly_once=True), local_parallelism=1)
    dag.edge(between(src, kill)).edge(between(kill, sink))
    job = engine.new_job(dag, JobConfig(execution_mode=ExecutionMode.PIPELINED, snapshot_interval_ms=200,
                                        processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE))
    job.join(timeout=timeout)
    numbers = [int(x) for name in os.listdir(output) if not name.startswith(".")
               for x in _read(os.path.join(output, name)).split()]
    return job, sorted(numbers), (_read(marker) if os.path.exists(marker) else None)


def _read(path):
    with open(path) as f:
        return f.read()
