"""Helpers shared by test modules (not a test module: pytest collects ``test_*.py`` only).

Imported as ``from tests.support import ...`` (the tests run from the repository root, as
``tests/runtime/test_pipelined_faults.py`` already imports ``tests.runtime.test_pipelined``).

- ``wait_for``: poll a condition with a bound; the failure names what was awaited.
- ``running``: a stream job that is always cancelled and whose join is bounded, and that must leave no
  jetspark thread of its own behind.
- ``counter_stream``: an endless, snapshotting stream source counting 0, 1, 2, ...
- ``complete_until``: drive a source processor's ``complete()`` directly (engine-free tests).
- ``free_base_port``, ``connect``, ``port_is_free``: loopback ports for socket sources.
- ``once``: True the first time a marker file is claimed, across processes (a fault injected once).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from dag import CancellationError, JobStatus

JOIN_TIMEOUT = 60.0


def wait_for(predicate, timeout: float, what, interval: float = 0.05) -> None:
    """Return once ``predicate()`` is true; fail naming ``what`` (a string, or a function giving one at the
    failure, e.g. with the output seen so far) if it is still false after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what() if callable(what) else what}")
        time.sleep(interval)


def jetspark_threads() -> set[str]:
    """Names of the live jetspark threads of this process."""
    return {t.name for t in threading.enumerate() if t.name.startswith("jetspark") and t.is_alive()}


@contextmanager
def running(engine, dag, config=None, join_timeout: float = JOIN_TIMEOUT):
    """Start a job on ``engine`` and yield it; on leaving, cancel it unless it already ended, and join it within
    ``join_timeout`` s. If the block went well, the cancelled job must end FAILED with ``CancellationError``
    and every jetspark thread started since must end within 15 s; if the block raised, its error is what the
    test reports (the job is still cancelled and joined within the bound)."""
    before = jetspark_threads()
    job = engine.new_job(dag, config)
    try:
        yield job
    except BaseException:
        if not job.status.is_terminal:
            job.cancel()
            try:
                job.join(timeout=join_timeout)
            except Exception:  # noqa: BLE001 - the block's error is the one to report
                pass
        raise
    if not job.status.is_terminal:
        job.cancel()
        with pytest.raises(CancellationError):
            job.join(timeout=join_timeout)
        assert job.status is JobStatus.FAILED
    wait_for(lambda: jetspark_threads() <= before, 15, "the job's jetspark threads to end")


def unique(prefix: str) -> str:
    """A name no other test uses (driver lists and maps live for the whole session)."""
    return f"{prefix}-{uuid.uuid4().hex}"


def numbers(engine, n: int) -> str:
    """The name of a new driver list holding ``0 .. n - 1``."""
    name = unique("nums")
    engine.get_list(name).extend(range(n))
    return name


def counter_stream(name: str, pause: float):
    """A stream source named ``name`` counting 0, 1, 2, ... for ever, 20 numbers then a ``pause`` (s) per fill;
    it saves its position in snapshots, so an exactly-once restart resumes where the snapshot left it."""
    from processors import SourceBuilder

    def fill(state, buf):
        for _ in range(20):
            buf.add(state["n"])
            state["n"] += 1
        time.sleep(pause)

    def restore(state, saved):
        state["n"] = saved[0]

    return (SourceBuilder.stream(name, lambda ctx: {"n": 0}).fill_buffer_fn(fill)
            .create_snapshot_fn(lambda state: state["n"]).restore_snapshot_fn(restore).build())


def complete_until(proc, outbox, predicate, timeout: float = 10.0):
    """Call the source processor's ``complete()`` until ``predicate(items, done)``; returns ``(items, done)``."""
    items, done, deadline = [], False, time.monotonic() + timeout
    while time.monotonic() < deadline:
        outbox.reset()
        done = proc.complete()
        items += outbox.drain(0)
        if predicate(items, done):
            return items, done
        time.sleep(0.002)
    raise AssertionError(f"timed out after {timeout} s; got {items!r}, done={done}")


def free_base_port(count: int) -> int:
    """A port p such that p .. p + count - 1 are free right now on loopback."""
    for _ in range(50):
        probe = socket.create_server(("127.0.0.1", 0))
        base = probe.getsockname()[1]
        probe.close()
        socks = []
        try:
            for port in range(base, base + count):
                socks.append(socket.create_server(("127.0.0.1", port)))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no free port range")


def connect(port: int, timeout: float = 10.0) -> socket.socket:
    """A client socket to ``port`` on loopback, retrying while nothing listens yet (at most ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=timeout)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def port_is_free(port: int) -> bool:
    """Whether a server could bind ``port`` on loopback now."""
    try:
        socket.create_server(("127.0.0.1", port)).close()
        return True
    except OSError:
        return False


def once(marker: str | Path) -> bool:
    """True for the first caller that creates the file ``marker`` (atomically, in any process: Spark's Python
    workers included), False for every later one: a fault a test injects once per marker."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True
