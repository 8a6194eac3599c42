"""InterruptGuard without Spark: the first SIGINT cancels watched jobs and is raised at a safe point; the
previous handler comes back afterwards."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from dag.runtime.common.interrupts import InterruptGuard


class FakeJob:
    def __init__(self):
        self.cancelled = threading.Event()

    def cancel(self):
        self.cancelled.set()

    def join(self, timeout=None):
        if not self.cancelled.wait(timeout):
            raise TimeoutError
        raise RuntimeError("cancelled")


def test_guard_when_sigint_then_job_cancelled_and_keyboard_interrupt_at_join():
    before = signal.getsignal(signal.SIGINT)
    job = FakeJob()
    with pytest.raises(KeyboardInterrupt):
        with InterruptGuard() as guard:
            guard.watch(job)
            os.kill(os.getpid(), signal.SIGINT)  # handled between bytecodes: only sets the flag
            assert guard.interrupted
            guard.join(job, poll=0.05)
    assert job.cancelled.is_set()
    assert signal.getsignal(signal.SIGINT) is before


def test_guard_when_used_off_the_main_thread_then_does_not_touch_signals():
    seen = []

    def use():
        with InterruptGuard() as guard:
            guard.install()
            seen.append(guard.interrupted)

    t = threading.Thread(target=use)
    t.start()
    t.join(10)
    assert seen == [False]
