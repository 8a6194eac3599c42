"""TCP links between the tasks of a pipelined job (pure Python; sockets from ``dag/runtime/common/channel.py``).

Each task listens on one port (:func:`dag.runtime.common.channel.bind_host` address) and, once the tasks have
exchanged addresses through the driver (``worker.py``), connects to every other task; every
connection passes the channel's HMAC handshake with the job's secret before one byte is unpickled. The listening
socket closes as soon as every peer connected (and at once on ``close()``: no accept poll to wait out).
``connect()`` returns only when this task connected to every other one and every other one connected to it, so
no task runs (and may fail and close its links) while a peer still connects. Task ``t``'s connection to task
``u`` carries what ``t``'s processors send to ``u``'s, one way:

- a writer thread per peer takes ``(queue key, entry)`` pairs from a bounded deque (:data:`LINK_ENTRIES`; a
  full link refuses lists, so back-pressure reaches the sending processor) and sends all it finds as one
  pickled frame (TCP_NODELAY, so a lone item is not delayed);
- a reader thread per accepted connection puts each entry into the destination queue, waiting while that
  queue is full (so TCP's flow control stops the writer: back-pressure across tasks);
- the first frame says who connects (JSON ``{"task": t}``), the last one is ``"BYE"``: a connection that
  ends before its ``BYE`` while the job runs means the peer task died (or the network between them failed),
  and ``on_error(peer, text)`` reports it (a writer whose send fails, likewise); the task then fails naming
  the peer's processors (``runner.py``).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import deque
from typing import Any, Callable

from dag.runtime.common.channel import AuthenticationError, FrameSocket, connect, server_handshake

__all__ = ["Links", "LINK_ENTRIES"]

LINK_ENTRIES = 64
"""Entries a link's writer holds before it refuses more lists."""
_BYE = "BYE"
_FRAME_ENTRIES = 256
_log = logging.getLogger("jetspark.pipelined")


class _Writer:
    def __init__(self, t: int, peer: int, conn: FrameSocket, on_error: Callable[[int, str], None]):
        self.t, self.peer, self.conn, self.on_error = t, peer, conn, on_error
        self.pending: deque = deque()
        self.ready = threading.Condition()
        self.waiting = False   # set under the lock by the writer before it waits (no lost wake-up)
        self.closing = False
        self.thread = threading.Thread(target=self._loop, name=f"jetspark-link-to-{peer}", daemon=True)

    def offer(self, key: Any, entry: Any) -> bool:
        if len(self.pending) >= LINK_ENTRIES and entry.__class__ is list:
            return False
        self.pending.append((key, entry))
        if self.waiting:
            with self.ready:
                self.ready.notify()
        return True

    def _loop(self) -> None:
        pending = self.pending
        try:
            while True:
                if not pending:
                    with self.ready:
                        self.waiting = True
                        if not pending and not self.closing:
                            self.ready.wait(0.05)
                        self.waiting = False
                    if not pending:
                        if self.closing:
                            self.conn.send(_BYE, as_json=True)
                            return
                        continue
                frame = [pending.popleft() for _ in range(min(len(pending), _FRAME_ENTRIES))]
                self.conn.send(frame)
        except OSError as exc:
            if not self.closing:
                self.on_error(self.peer, f"cannot be reached: the link from task {self.t} broke while sending "
                                         f"({exc})")

    def finish(self) -> None:
        with self.ready:
            self.closing = True
            self.ready.notify()


class Links:
    """The links of task ``t`` (see the module docstring).

    ``peers`` is the number of other tasks (connections to accept); ``queue_for(key)`` gives the local queue a
    remote entry goes to; ``on_error(peer, text)`` reports a broken link (``peer`` -1 when the connection broke
    before it said who it is); ``stopped()`` tells readers to stop waiting for room.
    """

    def __init__(self, t: int, secret: bytes, host: str, peers: int, queue_for: Callable[[Any], Any],
                 on_error: Callable[[int, str], None], stopped: Callable[[], bool]):
        self.t, self.secret, self.peers = t, secret, peers
        self.queue_for, self.on_error, self.stopped = queue_for, on_error, stopped
        self.server = socket.create_server((host, 0))
        self.server.settimeout(0.2)
        self.address = self.server.getsockname()[:2]
        self.writers: dict[int, _Writer] = {}
        self.readers: list[threading.Thread] = []
        self.conns: list[FrameSocket] = []
        self.byes: set[int] = set()
        self.closed = False
        self.all_accepted = threading.Event()  # every other task connected to this one
        self._lock = threading.Lock()
        self.acceptor = threading.Thread(target=self._accept_loop, name=f"jetspark-task-{t}-accept", daemon=True)
        self.acceptor.start()

    # ------------------------------------------------------------------ setup
    def connect(self, addresses: list[tuple[str, int]], timeout: float = 30.0) -> None:
        """Connect to every other task's address (index = task), then wait until every other task connected to
        this one: no task runs its processors (and may fail and close its links) before all links exist."""
        for u, address in enumerate(addresses):
            if u == self.t:
                continue
            conn = connect(tuple(address), self.secret, timeout)
            with self._lock:
                self.conns.append(conn)
            conn.send({"task": self.t}, as_json=True)
            writer = _Writer(self.t, u, conn, self.on_error)
            self.writers[u] = writer
            writer.thread.start()
        deadline = time.monotonic() + timeout
        while not self.all_accepted.wait(0.05) and not self.stopped():
            if time.monotonic() >= deadline:
                raise ConnectionError(f"task {self.t}: {self.peers - len(self.readers)} of {self.peers} other "
                                      f"tasks did not connect within {timeout:.0f} s")

    def _accept_loop(self) -> None:
        while not self.closed and len(self.readers) < self.peers:
            try:
                sock, peer = self.server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                server_handshake(sock, self.secret)
            except (OSError, AuthenticationError) as exc:
                _log.warning("task %d dropped a connection from %s: %s", self.t, peer, exc)
                sock.close()
                continue
            conn = FrameSocket(sock)
            with self._lock:
                self.conns.append(conn)
            reader = threading.Thread(target=self._read_loop, args=(conn,), name=f"jetspark-task-{self.t}-reader",
                                      daemon=True)
            self.readers.append(reader)
            reader.start()
        if len(self.readers) >= self.peers:
            self.all_accepted.set()
        self._close_server()

    def _close_server(self) -> None:
        try:
            self.server.shutdown(socket.SHUT_RDWR)  # wakes an accept() blocked in another thread (Linux)
        except OSError:
            pass
        self.server.close()

    # ------------------------------------------------------------------ traffic
    def offer(self, u: int, key: Any, entry: Any) -> bool:
        """Queue ``entry`` for queue ``key`` in task ``u``; False when the link is full (retry later)."""
        return self.writers[u].offer(key, entry)

    def _read_loop(self, conn: FrameSocket) -> None:
        peer = -1
        try:
            hello = conn.recv()
            peer = int(hello["task"])
            while True:
                frame = conn.recv()
                if frame == _BYE:
                    self.byes.add(peer)
                    return
                for key, entry in frame:
                    queue = self.queue_for(key)
                    while not queue.offer(entry):
                        if self.stopped():
                            return
                        time.sleep(0.0002)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            if not self.closed and not self.stopped():
                self.on_error(peer, f"disappeared: its link to task {self.t} ended before its goodbye ({exc})")

    # ------------------------------------------------------------------ shutdown
    def finish(self, timeout: float = 10.0) -> None:
        """Send what is queued and ``BYE`` on every link (bounded wait)."""
        for writer in self.writers.values():
            writer.finish()
        deadline = time.monotonic() + timeout
        for writer in self.writers.values():
            writer.thread.join(max(0.0, deadline - time.monotonic()))

    def all_said_bye(self) -> bool:
        """Every peer said BYE: it sent everything it had for this task."""
        return len(self.byes) >= len(self.writers)

    def close(self) -> None:
        """Close the server and every connection; join the threads (bounded)."""
        self.closed = True
        for writer in self.writers.values():
            writer.finish()
        self._close_server()
        with self._lock:
            conns = list(self.conns)
        for conn in conns:
            conn.close()
        self.acceptor.join(2)
        for thread in self.readers + [w.thread for w in self.writers.values()]:
            thread.join(2)
