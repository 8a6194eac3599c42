"""TCP links between the tasks of a pipelined job (pure Python; frames from ``dag/runtime/common/channel.py``).

Each task listens on one port (:func:`dag.runtime.common.channel.bind_host` address) and, once the tasks have
exchanged addresses through the driver (``worker.py``), connects to every other task; every connection passes
the channel's HMAC handshake with the job's secret before one byte is unpickled. An acceptor thread takes the
connections, and the listening socket closes as soon as every peer connected (and at once on ``close()``).
``connect()`` returns only when this task connected to every other one and every other one connected to it, so
no task runs (and may fail and close its links) while a peer still connects. Task ``t``'s connection to task
``u`` carries what ``t``'s processors send to ``u``'s, one way.

**One thread moves the bytes: the task's scheduler.** Once connected, every socket is non-blocking and the
links have no thread of their own: the scheduler calls :meth:`Links.pump` in every round and, when a round
moved nothing, sleeps in :meth:`Links.wait` (``select`` over the sockets and the task's
:class:`~dag.runtime.pipelined.waker.Waker`). An item thus waits for no hand-off between threads on its way
from one task's processor to another's, only for the one thread of each task to run (measured in bench/README,
"Latency at 80% of the maximum"):

- **sending** (:class:`_Outbound`, one per peer): ``offer`` appends ``(queue key, entry)`` to a bounded deque
  (:data:`LINK_ENTRIES`; a full link refuses lists, so back-pressure reaches the sending processor; any thread
  may offer, and wakes the scheduler); ``pump`` pickles what is queued (up to :data:`FRAME_ITEMS` items) as
  one frame and sends what the socket takes; the rest of a frame waits for the socket to take more;
- **receiving** (:class:`_Inbound`, one per accepted connection): ``pump`` reads what arrived, splits it into
  frames and offers each entry to its destination queue; an entry a full queue refuses waits, and the link
  reads nothing more meanwhile, so TCP's flow control stops the sender: back-pressure across tasks;
- **joining**: both sides join the consecutive lists of one queue (:func:`_joined`, up to :data:`JOIN_ITEMS`
  items), so the small lists of a busy scheduler's rounds, and a backlog that built up, reach the receiving
  processor (one entry per queue per round) in few entries;
- the first frame says who connects (JSON ``{"task": t}``, read by the acceptor), the last one is ``"BYE"``
  (after :meth:`Links.finish`): a connection that ends before its ``BYE`` while the job runs means the peer
  task died (or the network between them failed), and ``on_error(peer, text)`` reports it (a send that fails,
  likewise); the task then fails naming the peer's processors (``runner.py``).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import deque
from typing import Any, Callable, Iterable

from dag.runtime.common.channel import (
    HANDSHAKE_TIMEOUT, AuthenticationError, FrameSocket, connect, encode_frame, server_handshake, split_frames,
)
from dag.runtime.pipelined.queues import JOIN_ITEMS
from dag.runtime.pipelined.waker import Waker

__all__ = ["Links", "LINK_ENTRIES", "FRAME_ENTRIES", "FRAME_ITEMS"]

LINK_ENTRIES = 64
"""Entries a link holds for its peer before it refuses more lists."""
FRAME_ENTRIES = 256
"""Entries one frame carries at most."""
FRAME_ITEMS = 2048
"""Items one frame carries at most (but always one entry): the scheduler pickles a frame, and its peer unpickles
it, in one go. A full link (:data:`LINK_ENTRIES` lists of 1,024 items) sent as one frame of 2.5 MB took 30 ms to
pickle and 47 ms to unpickle, rounds in which neither task moved anything else (bench/README, session 14, "A full
link sent as one frame")."""
_BYE = "BYE"
_READ_BYTES = 1 << 17  # about 3,000 small items: what one round unpickles at most
_BROKEN = (OSError, ValueError, KeyError, TypeError, EOFError)  # a connection's bytes that make no sense
_log = logging.getLogger("jetspark.pipelined")


class _Outbound:
    """This task's side of its connection to task ``peer``: what its processors send there."""

    __slots__ = ("peer", "sock", "pending", "unsent", "closing", "bye_queued", "waker")

    def __init__(self, peer: int, sock: socket.socket, waker: Waker):
        self.peer, self.sock, self.waker = peer, sock, waker
        self.pending: deque = deque()
        self.unsent = memoryview(b"")  # the part of the current frame the socket has not taken yet
        self.closing = False
        self.bye_queued = False

    def offer(self, key: Any, entry: Any) -> bool:
        if len(self.pending) >= LINK_ENTRIES and entry.__class__ is list:
            return False
        self.pending.append((key, entry))
        self.waker.set()
        return True

    @property
    def idle(self) -> bool:
        """Nothing to send now (not even the ``BYE``)."""
        return not self.unsent and not self.pending and (self.bye_queued or not self.closing)

    @property
    def sent_all(self) -> bool:
        return self.bye_queued and not self.unsent

    def pump(self) -> bool:
        """Send what the socket takes without waiting; True when bytes went out. ``OSError`` when it broke."""
        sent = False
        while True:
            if not self.unsent:
                pending = self.pending
                if pending:
                    frame = _joined(_next_frame(pending))
                    self.unsent = memoryview(encode_frame(frame))
                elif self.closing and not self.bye_queued:
                    self.unsent = memoryview(encode_frame(_BYE, as_json=True))
                    self.bye_queued = True
                else:
                    return sent
            try:
                n = self.sock.send(self.unsent)
            except BlockingIOError:
                return sent
            sent = True
            self.unsent = self.unsent[n:]
            if self.unsent:  # the socket's buffer is full
                return sent


def _next_frame(pending: deque) -> list:
    """The entries (``(queue key, entry)``) of the next frame, taken from ``pending``: the first one, then more while
    the frame holds at most :data:`FRAME_ITEMS` items and :data:`FRAME_ENTRIES` entries (a watermark, barrier or
    ``DONE`` counts as one item).

    >>> pending = deque([("q", [0] * 2000), ("q", [1] * 48), ("q", [2]), ("q", [3])])
    >>> [len(entry) for _, entry in _next_frame(pending)], len(pending)
    ([2000, 48], 2)
    """
    entries = [pending.popleft()]
    items = _items(entries[0][1])
    while pending and len(entries) < FRAME_ENTRIES:
        items += _items(pending[0][1])
        if items > FRAME_ITEMS:
            break
        entries.append(pending.popleft())
    return entries


def _items(entry: Any) -> int:
    return len(entry) if entry.__class__ is list else 1


def _joined(entries: Iterable[tuple[Any, Any]]) -> list:
    """``entries`` (``(queue key, entry)``) with the consecutive lists of one queue joined, up to
    :data:`JOIN_ITEMS` items (a watermark, barrier or ``DONE`` of that queue ends the join). A busy scheduler's
    rounds emit small lists: joined on both sides of a link, a backlog drains in few entries. Joined lists are new
    lists (an entry may be the same list object as one offered to another queue)."""
    frame: list = []
    joined: dict[Any, list] = {}  # queue key -> [key, items, items is a list made here] of the frame
    for key, entry in entries:
        if entry.__class__ is not list:
            joined.pop(key, None)
            frame.append((key, entry))
            continue
        into = joined.get(key)
        if into is None or len(into[1]) + len(entry) > JOIN_ITEMS:
            into = joined[key] = [key, entry, False]
            frame.append(into)
        elif into[2]:
            into[1].extend(entry)
        else:
            into[1], into[2] = into[1] + entry, True
    return [(e[0], e[1]) if e.__class__ is list else e for e in frame]


class _Inbound:
    """A connection from task ``peer``: what its processors send to this task's."""

    __slots__ = ("peer", "sock", "data", "ready", "ended", "said_bye")

    def __init__(self, peer: int, sock: socket.socket):
        self.peer, self.sock = peer, sock
        self.data = bytearray()
        self.ready: deque = deque()  # (queue key, entry) received, not yet taken by its queue
        self.ended = False  # nothing more to read: BYE received, or the connection broke
        self.said_bye = False

    def pump(self, queue_for: Callable[[Any], Any]) -> bool:
        """Hand received entries to their queues, reading more only when all were taken; True when anything
        moved. ``OSError`` (or a decoding error) when the connection broke."""
        moved = self._deliver(queue_for)
        if self.ready or self.ended:
            return moved
        try:
            chunk = self.sock.recv(_READ_BYTES)
        except BlockingIOError:
            return moved
        if not chunk:
            raise ConnectionError("the connection closed")
        self.data += chunk
        frames = split_frames(self.data)
        if frames and frames[-1] == _BYE:
            self.ended = self.said_bye = True
            frames.pop()
        self.ready.extend(_joined(entry for frame in frames for entry in frame))
        return self._deliver(queue_for) or True

    def _deliver(self, queue_for: Callable[[Any], Any]) -> bool:
        ready = self.ready
        moved = False
        while ready:
            key, entry = ready[0]
            if not queue_for(key).offer(entry):
                return moved
            ready.popleft()
            moved = True
        return moved


class Links:
    """The links of task ``t`` (see the module docstring).

    ``peers`` is the number of other tasks (connections to accept); ``queue_for(key)`` gives the local queue a
    remote entry goes to; ``on_error(peer, text)`` reports a broken link; ``stopped()`` says the task stops
    (errors are then not reported); ``waker`` is the task scheduler's (:meth:`wait` sleeps on it; by default
    the links' own).
    """

    def __init__(self, t: int, secret: bytes, host: str, peers: int, queue_for: Callable[[Any], Any],
                 on_error: Callable[[int, str], None], stopped: Callable[[], bool], waker: Waker | None = None):
        self.t, self.secret, self.peers = t, secret, peers
        self.queue_for, self.on_error, self.stopped = queue_for, on_error, stopped
        self._own_waker = waker is None
        self.waker = Waker() if waker is None else waker
        self.server = socket.create_server((host, 0))
        self.server.settimeout(0.2)
        self.address = self.server.getsockname()[:2]
        self.outbound: dict[int, _Outbound] = {}
        self.inbound: list[_Inbound] = []
        self.conns: list[FrameSocket] = []
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
            conn.sock.setblocking(False)
            self.outbound[u] = _Outbound(u, conn.sock, self.waker)
        deadline = time.monotonic() + timeout
        while not self.all_accepted.wait(0.05) and not self.stopped():
            if time.monotonic() >= deadline:
                raise ConnectionError(f"task {self.t}: {self.peers - len(self.inbound)} of {self.peers} other "
                                      f"tasks did not connect within {timeout:.0f} s")

    def _accept_loop(self) -> None:
        while not self.closed and len(self.inbound) < self.peers:
            try:
                sock, peer = self.server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                server_handshake(sock, self.secret)
                conn = FrameSocket(sock)
                with self._lock:
                    self.conns.append(conn)
                sock.settimeout(HANDSHAKE_TIMEOUT)
                task = int(conn.recv()["task"])
                sock.setblocking(False)
            except (AuthenticationError, *_BROKEN) as exc:
                _log.warning("task %d dropped a connection from %s: %s", self.t, peer, exc)
                sock.close()
                continue
            self.inbound.append(_Inbound(task, sock))
        if len(self.inbound) >= self.peers:
            self.all_accepted.set()
        self._close_server()

    def _close_server(self) -> None:
        try:
            self.server.shutdown(socket.SHUT_RDWR)  # wakes an accept() blocked in another thread (Linux)
        except OSError:
            pass
        self.server.close()

    # ------------------------------------------------------------------ traffic (the scheduler's thread)
    def offer(self, u: int, key: Any, entry: Any) -> bool:
        """Queue ``entry`` for queue ``key`` in task ``u``; False when the link is full (retry later). Any
        thread."""
        return self.outbound[u].offer(key, entry)

    def pump(self) -> bool:
        """Send and receive what the sockets take and hold without waiting; True when anything moved."""
        moved = False
        for out in self.outbound.values():
            if not out.idle:
                try:
                    moved = out.pump() or moved
                except OSError as exc:
                    out.pending.clear()
                    out.unsent, out.bye_queued = memoryview(b""), True
                    self._broken(out.peer, f"cannot be reached: the link from task {self.t} broke while sending "
                                           f"({exc})")
        queue_for = self.queue_for
        for link in self.inbound:
            if link.ready or not link.ended:
                try:
                    moved = link.pump(queue_for) or moved
                except _BROKEN as exc:
                    link.ended = True
                    link.ready.clear()
                    self._broken(link.peer, f"disappeared: its link to task {self.t} ended before its goodbye "
                                            f"({exc})")
        return moved

    def _broken(self, peer: int, text: str) -> None:
        if not self.closed and not self.stopped():
            self.on_error(peer, text)

    def wait(self, timeout: float) -> None:
        """Sleep until the waker is set, a peer sent bytes, a full socket takes more, or ``timeout`` seconds."""
        readers = [link.sock for link in self.inbound if not link.ended and not link.ready]
        writers = [out.sock for out in self.outbound.values() if out.unsent]
        self.waker.sleep(readers, writers, timeout)

    # ------------------------------------------------------------------ shutdown
    def finish(self) -> None:
        """Queue ``BYE`` after what is queued on every link (:meth:`pump` sends it)."""
        for out in self.outbound.values():
            out.closing = True
        self.waker.set()

    def sent_all(self) -> bool:
        """Every link sent its ``BYE`` (or broke)."""
        return all(out.sent_all for out in self.outbound.values())

    def all_said_bye(self) -> bool:
        """Every peer said BYE: it sent everything it had for this task."""
        return sum(link.said_bye and not link.ready for link in self.inbound) >= self.peers

    def close(self) -> None:
        """Close the server and every connection; join the acceptor (bounded)."""
        self.closed = True
        self._close_server()
        with self._lock:
            conns = list(self.conns)
        for conn in conns:
            conn.close()
        self.acceptor.join(2)
        if self._own_waker:
            self.waker.close()
