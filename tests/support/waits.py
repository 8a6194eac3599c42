"""Bounded waits and job lifetimes: every wait of the suite ends, and its failure says what was awaited.

- ``wait_for(predicate, timeout, what)``: poll a condition until a deadline; the failure names ``what``.
- ``running(engine, dag)``: a stream job that is always cancelled and whose join is bounded, and that must leave
  no jetspark thread of its own behind.
- ``complete_until``: drive a source processor's ``complete()`` directly (engine-free tests), bounded.
- ``jetspark_threads``, ``stray_jetspark_threads``, ``worker_threads``, ``channel_closed``: what a finished job
  must not leave behind, on the driver and in the Python workers.

A fixed ``time.sleep`` never waits for something here: a test sleeps only when the sleep is the behaviour under
test (pacing a source, a slow processor), and says so in a comment.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

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


def stray_jetspark_threads() -> list[str]:
    """Names of live jetspark threads of this process other than the driver channels' own."""
    return [t.name for t in threading.enumerate() if t.name.startswith("jetspark-") and t.is_alive()
            and not t.name.startswith("jetspark-channel")]


def channel_closed(job) -> bool:
    """The job's driver channel no longer listens (py4j's own pooled sockets are Spark's, not the job's)."""
    try:
        socket.create_connection(job._state.channel.ref.address, timeout=2).close()  # noqa: SLF001
    except OSError:
        return True
    return False


def wait_no_threads_left(engine, timeout: float = 30.0) -> None:
    """Wait (bounded) until no jetspark thread is left in this process or the Python workers: a cancelled or
    failed task's threads end while Spark already reports the stage over. Fails naming the threads left."""
    left: list[str] = []

    def none_left() -> bool:
        left[:] = stray_jetspark_threads() + worker_threads(engine)
        return not left

    wait_for(none_left, timeout, lambda: f"jetspark threads still alive: {left}")


def worker_threads(engine) -> list[str]:
    """Names of jetspark threads alive in the Python workers (one probe task per slot)."""
    sc = engine.spark.sparkContext

    def probe(_):
        import threading as th

        return [[t.name for t in th.enumerate() if t.name.startswith("jetspark-")]]

    return [n for names in sc.parallelize(range(2), 2).mapPartitions(probe).collect() for n in names]
