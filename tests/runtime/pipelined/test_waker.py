"""The task scheduler's wake-up call (dag/runtime/pipelined/waker.py), without Spark."""

from __future__ import annotations

import socket
import threading
import time

from dag.runtime.pipelined.waker import Waker
from tests.support import wait_for


def _sleep_in_thread(waker: Waker, readers: list, timeout: float) -> tuple[threading.Thread, list]:
    result: list = []

    def sleep() -> None:
        start = time.monotonic()
        ready, _ = waker.sleep(readers, [], timeout)
        result.append((time.monotonic() - start, ready))

    thread = threading.Thread(target=sleep, daemon=True)
    thread.start()
    return thread, result


def test_set_from_another_thread_wakes_the_sleeping_scheduler_at_once():
    waker = Waker()
    try:
        thread, result = _sleep_in_thread(waker, [], 60)
        wait_for(lambda: waker.sleeping, 10, "the scheduler sleeping")
        waker.set()
        thread.join(30)
        assert result and result[0][0] < 30, "set() must end the sleep long before its 60 s timeout"
    finally:
        waker.close()


def test_sleep_returns_at_once_when_set_before_it_and_when_a_socket_has_bytes():
    waker = Waker()
    a, b = socket.socketpair()
    try:
        waker.set()
        assert waker.sleep([a], [], 60) == ([], [])
        waker.clear()
        b.send(b"x")
        ready, writable = waker.sleep([a], [], 60)
        assert ready == [a] and writable == []
    finally:
        a.close()
        b.close()
        waker.close()


def test_a_wake_up_byte_left_in_the_pipe_wakes_one_sleep_only():
    """A set() that wrote its byte after the sleep it meant to end had returned must not make every later
    sleep return at once (the scheduler would spin)."""
    waker = Waker()
    try:
        waker.sleeping = True
        waker.set()  # writes a byte: the scheduler "was" sleeping
        waker.sleeping = False
        waker.clear()
        waker.sleep([], [], 60)  # returns at once, emptying the pipe
        start = time.monotonic()
        waker.sleep([], [], 0.05)
        assert time.monotonic() - start >= 0.04, "the pipe was not emptied: the sleep did not wait"
    finally:
        waker.close()


def test_wait_is_an_event_for_other_threads():
    waker = Waker()
    try:
        assert waker.wait(0.01) is False
        waker.set()
        assert waker.wait(0.01) is True and waker.is_set()
    finally:
        waker.close()
