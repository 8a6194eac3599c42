"""``Sinks.socket`` on Spark (issue 27, part 4): every item arrives as a line at a local TCP server, one
connection per processor; an unreachable server fails the job naming the address."""

from __future__ import annotations

import socket
import threading

import pytest

from dag import JobFailedError
from pipeline import Pipeline, Sinks, TestSources
from tests.support import port_is_free

pytestmark = pytest.mark.spark


class _Server:
    """A loopback server that collects the lines of every connection until the test stops it."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.data: list[bytes] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        readers = []
        while not self.stopped.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            reader = threading.Thread(target=self._read, args=(connection,), daemon=True)
            reader.start()
            readers.append(reader)
        for reader in readers:
            reader.join(10)

    def _read(self, connection: socket.socket) -> None:
        with connection:
            chunks = []
            while chunk := connection.recv(65536):
                chunks.append(chunk)
            self.data.append(b"".join(chunks))

    def stop(self) -> list[str]:
        self.stopped.set()
        self.thread.join(15)
        self.socket.close()
        return [line for data in self.data for line in data.decode().splitlines()]


def test_socket_sink_when_job_runs_then_every_item_a_line_at_the_server(engine) -> None:
    server = _Server()
    try:
        p = Pipeline.create()
        p.read_from(TestSources.items(list(range(100)))).map(lambda x: x * 2).write_to(
            Sinks.socket("127.0.0.1", server.port, lambda x: f"item {x}"))
        engine.new_job(p).join(timeout=300)
    finally:
        lines = server.stop()
    assert sorted(lines) == sorted(f"item {x * 2}" for x in range(100))


def test_socket_sink_when_no_server_then_job_fails_naming_the_address(engine) -> None:
    probe = socket.create_server(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    assert port_is_free(port)
    p = Pipeline.create()
    p.read_from(TestSources.items(1, 2)).write_to(Sinks.socket("127.0.0.1", port))
    with pytest.raises(JobFailedError, match=f"cannot connect to 127.0.0.1:{port}"):
        engine.new_job(p).join(timeout=300)
