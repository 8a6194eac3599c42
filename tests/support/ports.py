"""Loopback ports for tests of socket sources and sinks: a free range, a client that retries until the server
listens (bounded), and whether a port is free again after a job closed it."""

from __future__ import annotations

import socket
import time


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
