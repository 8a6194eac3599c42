"""Authenticated sockets: the one way jetspark's processes talk to each other (pure Python, no pyspark).

Every socket jetspark opens (links between the tasks of a pipelined job, the driver's channel for failures,
log records, live sinks and the coordinator) goes through this module, so one set of rules holds for all:

1. **Authenticate before decoding.** A connection proves it belongs to the job before one byte of payload is
   read: a mutual HMAC-SHA256 challenge over a random per-job secret (:func:`new_secret`, made on the driver
   and shipped to the tasks inside their closure). The server sends a nonce; the client answers with its own
   nonce and ``HMAC(secret, b"client" + server_nonce + client_nonce)``; the server checks it with
   ``hmac.compare_digest`` and answers ``HMAC(secret, b"server" + client_nonce + server_nonce)``, which the
   client checks in turn, so neither side ever decodes data from an impostor. A peer that fails (or says
   nothing within the handshake timeout) is dropped and logged.
2. **Frames.** ``4-byte big-endian length | 1-byte kind | payload``; kind ``J`` is JSON (plain data: strings,
   numbers, lists, dicts; used for failures and log records, so they decode without ``pickle``), kind ``P``
   is a pickle (items, which are arbitrary Python objects). Frames are limited to :data:`MAX_FRAME` bytes.
3. **Loopback in local mode.** :func:`bind_host` gives ``127.0.0.1`` for ``local``/``local-cluster`` masters;
   on a cluster the caller passes the address Spark uses for the driver or the executor.

:class:`DriverChannel` is a small message server on the driver: handlers are registered per topic; a
message is ``{"t": topic, "i": request id or None, "b": body}``; a request (an id) is answered with
``{"i": id, "r": reply}`` or ``{"i": id, "e": error text}``. :class:`ChannelClient` is its task-side peer:
``send`` (one-way), ``request`` (waits for the reply). Handlers run on the connection's reader thread, in the
order the messages of that connection arrived.

>>> secret = new_secret()
>>> with DriverChannel(secret) as server:
...     server.register("echo", lambda body: body)
...     with ChannelClient(server.address, secret) as client:
...         client.request("echo", {"x": 1})
{'x': 1}
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import pickle
import socket
import struct
import threading
from typing import Any, Callable

__all__ = [
    "MAX_FRAME", "AuthenticationError", "ChannelClient", "DriverChannel", "FrameSocket", "bind_host", "connect",
    "encode_frame", "new_secret", "client_handshake", "server_handshake", "split_frames", "typed_fields",
]

MAX_FRAME = 256 * 1024 * 1024
"""The largest frame either side accepts (bytes); a larger length is treated as a broken peer."""
HANDSHAKE_TIMEOUT = 5.0
"""Seconds a peer has to complete the handshake before it is dropped."""
_NONCE = 32
_HEADER = struct.Struct(">IB")
_JSON, _PICKLE = ord("J"), ord("P")

_log = logging.getLogger("jetspark.channel")


class AuthenticationError(ConnectionError):
    """A peer did not prove it holds the job's secret."""


def new_secret() -> bytes:
    """A fresh random per-job secret (32 bytes)."""
    return os.urandom(32)


def bind_host(master: str | None, cluster_host: str | None = None) -> str:
    """The address to listen on: loopback for a local master, else ``cluster_host`` (required then)."""
    if master is None or master == "local" or master.startswith(("local[", "local-cluster[")):
        return "127.0.0.1"
    if not cluster_host:
        raise ValueError(f"master {master!r} is not local: pass the host address to bind to (cluster_host)")
    return cluster_host


def typed_fields(body: Any, fields: dict[str, type | tuple[type, ...]], what: str) -> dict:
    """The ``fields`` of the JSON message ``body``, each checked to have its type (a bool is no int); raises
    ``ValueError`` naming ``what`` (e.g. ``"log record"``), the field, the type wanted and the value got."""
    if not isinstance(body, dict):
        raise ValueError(f"a {what} must be a JSON object, got {type(body).__name__}")
    checked = {}
    for name, kind in fields.items():
        value = body.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            wanted = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise ValueError(f"{what} field {name!r} must be {wanted}, got {value!r:.80}")
        checked[name] = value
    return checked


def _mac(secret: bytes, role: bytes, a: bytes, b: bytes) -> bytes:
    return hmac.new(secret, role + a + b, hashlib.sha256).digest()


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        chunks += chunk
    return bytes(chunks)


def server_handshake(sock: socket.socket, secret: bytes, timeout: float = HANDSHAKE_TIMEOUT) -> None:
    """Authenticate the client on ``sock`` (accepting side); raises :class:`AuthenticationError`."""
    previous = sock.gettimeout()
    sock.settimeout(timeout)
    try:
        server_nonce = os.urandom(_NONCE)
        sock.sendall(server_nonce)
        answer = _recv_exact(sock, _NONCE + 32)
        client_nonce, mac = answer[:_NONCE], answer[_NONCE:]
        if not hmac.compare_digest(mac, _mac(secret, b"client", server_nonce, client_nonce)):
            raise AuthenticationError("the peer does not hold this job's secret")
        sock.sendall(_mac(secret, b"server", client_nonce, server_nonce))
    except socket.timeout as exc:
        raise AuthenticationError(f"the peer did not complete the handshake within {timeout} s") from exc
    finally:
        sock.settimeout(previous)


def client_handshake(sock: socket.socket, secret: bytes, timeout: float = HANDSHAKE_TIMEOUT) -> None:
    """Authenticate to the server on ``sock`` and check that it holds the secret too."""
    previous = sock.gettimeout()
    sock.settimeout(timeout)
    try:
        server_nonce = _recv_exact(sock, _NONCE)
        client_nonce = os.urandom(_NONCE)
        sock.sendall(client_nonce + _mac(secret, b"client", server_nonce, client_nonce))
        if not hmac.compare_digest(_recv_exact(sock, 32), _mac(secret, b"server", client_nonce, server_nonce)):
            raise AuthenticationError("the server does not hold this job's secret")
    except socket.timeout as exc:
        raise AuthenticationError(f"the server did not complete the handshake within {timeout} s") from exc
    finally:
        sock.settimeout(previous)


def encode_frame(obj: Any, *, as_json: bool = False) -> bytes:
    """``obj`` as one frame's bytes (header and payload): JSON (plain data) or pickle.

    >>> split_frames(bytearray(encode_frame({"task": 1}, as_json=True) + encode_frame([1, 2])))
    [{'task': 1}, [1, 2]]
    """
    if as_json:
        kind, payload = _JSON, json.dumps(obj, separators=(",", ":")).encode("utf-8")
    else:
        kind, payload = _PICKLE, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    if len(payload) > MAX_FRAME:
        raise ValueError(f"a frame of {len(payload)} bytes exceeds the {MAX_FRAME}-byte limit")
    return _HEADER.pack(len(payload), kind) + payload


def _check_header(length: int, kind: int) -> None:
    if length > MAX_FRAME or kind not in (_JSON, _PICKLE):
        raise ConnectionError(f"malformed frame (kind {kind}, {length} bytes)")


def _decode(kind: int, payload: Any) -> Any:
    if kind == _JSON:
        return json.loads(bytes(payload).decode("utf-8"))
    return pickle.loads(payload)  # only ever reached on a connection that passed the handshake


def split_frames(data: bytearray) -> list:
    """The objects of the complete frames at the start of ``data``, which keeps only the incomplete rest (for a
    non-blocking reader that appends what it receives). ``ConnectionError`` on a malformed frame."""
    out, pos, end = [], 0, len(data)
    while end - pos >= _HEADER.size:
        length, kind = _HEADER.unpack_from(data, pos)
        _check_header(length, kind)
        start = pos + _HEADER.size
        if end - start < length:
            break
        out.append(_decode(kind, data[start:start + length]))
        pos = start + length
    del data[:pos]
    return out


class FrameSocket:
    """An authenticated socket that sends and receives frames (thread-safe ``send``)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._send_lock = threading.Lock()

    def send(self, obj: Any, *, as_json: bool = False) -> None:
        """Send ``obj`` as one frame: JSON (plain data) or pickle."""
        frame = encode_frame(obj, as_json=as_json)
        with self._send_lock:
            self.sock.sendall(frame)

    def recv(self) -> Any:
        """The next frame's object; ``ConnectionError`` when the peer closed or sent a malformed frame."""
        length, kind = _HEADER.unpack(_recv_exact(self.sock, _HEADER.size))
        _check_header(length, kind)
        return _decode(kind, _recv_exact(self.sock, length))

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def connect(address: tuple[str, int], secret: bytes, timeout: float = 10.0) -> FrameSocket:
    """Connect to ``address`` and authenticate; the result is ready for frames."""
    sock = socket.create_connection(address, timeout=timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client_handshake(sock, secret)
        sock.settimeout(None)
    except BaseException:
        sock.close()
        raise
    return FrameSocket(sock)


class DriverChannel:
    """The driver's message server (see the module docstring). A context manager; ``close()`` stops it."""

    def __init__(self, secret: bytes, host: str = "127.0.0.1"):
        self._secret = secret
        self._handlers: dict[str, Callable[[Any], Any]] = {}
        self._server = socket.create_server((host, 0))
        self._server.settimeout(0.2)
        self.address: tuple[str, int] = self._server.getsockname()[:2]
        self._closed = threading.Event()
        self._conns: set[FrameSocket] = set()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._accept_thread = threading.Thread(target=self._accept_loop, name="jetspark-channel-accept",
                                               daemon=True)
        self._accept_thread.start()

    def register(self, topic: str, handler: Callable[[Any], Any]) -> None:
        """Call ``handler(body)`` for every message on ``topic``; its return value answers a request."""
        self._handlers[topic] = handler

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                sock, peer = self._server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(sock, peer), name="jetspark-channel-conn",
                                      daemon=True)
            with self._lock:
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()

    def _serve(self, sock: socket.socket, peer: Any) -> None:
        try:
            server_handshake(sock, self._secret)
        except (OSError, AuthenticationError) as exc:
            _log.warning("jetspark channel: dropped a connection from %s: %s", peer, exc)
            sock.close()
            return
        conn = FrameSocket(sock)
        with self._lock:
            if self._closed.is_set():
                conn.close()
                return
            self._conns.add(conn)
        try:
            while True:
                message = conn.recv()
                self._dispatch(conn, message)
        except (ConnectionError, OSError):
            pass
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def _dispatch(self, conn: FrameSocket, message: Any) -> None:
        topic, request_id, body = message.get("t"), message.get("i"), message.get("b")
        handler = self._handlers.get(topic)
        try:
            if handler is None:
                raise KeyError(f"no handler for topic {topic!r}")
            reply = handler(body)
        except Exception as exc:  # noqa: BLE001 - a handler failure answers the request, never kills the server
            _log.exception("jetspark channel: handler for %r failed", topic)
            if request_id is not None:
                conn.send({"i": request_id, "e": f"{type(exc).__name__}: {exc}"}, as_json=True)
            return
        if request_id is not None:
            conn.send({"i": request_id, "r": reply})

    def close(self) -> None:
        """Stop accepting, close every connection and wait (bounded) for the server's threads."""
        self._closed.set()
        try:
            self._server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() at once (Linux), no poll to wait out
        except OSError:
            pass
        self._server.close()
        with self._lock:
            conns, threads = list(self._conns), list(self._threads)
        for conn in conns:
            conn.close()
        self._accept_thread.join(5)
        for thread in threads:
            thread.join(5)

    def __enter__(self) -> DriverChannel:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ChannelClient:
    """A task's connection to a :class:`DriverChannel` (connects on first use; thread-safe)."""

    def __init__(self, address: tuple[str, int], secret: bytes, timeout: float = 10.0):
        self._address, self._secret, self._timeout = tuple(address), secret, timeout
        self._conn: FrameSocket | None = None
        self._lock = threading.Lock()
        self._next_id = 0

    def _connection(self) -> FrameSocket:
        if self._conn is None:
            self._conn = connect(self._address, self._secret, self._timeout)
        return self._conn

    def send(self, topic: str, body: Any, *, as_json: bool = False) -> None:
        """Send a one-way message."""
        with self._lock:
            self._connection().send({"t": topic, "i": None, "b": body}, as_json=as_json)

    def request(self, topic: str, body: Any, *, as_json: bool = False, timeout: float | None = None) -> Any:
        """Send a request and return the handler's reply (``RuntimeError`` if the handler failed)."""
        with self._lock:
            conn = self._connection()
            self._next_id += 1
            request_id = self._next_id  # read after the lock is released, where another request may have begun
            conn.send({"t": topic, "i": request_id, "b": body}, as_json=as_json)
            conn.sock.settimeout(timeout or self._timeout)
            try:
                reply = conn.recv()
            except socket.timeout as exc:  # the reply may still come: this connection is out of step now
                conn.close()
                self._conn = None
                raise TimeoutError(f"no reply to {topic!r} within {timeout or self._timeout} s") from exc
            conn.sock.settimeout(None)
        if reply.get("i") != request_id:
            raise ConnectionError(f"reply out of order: expected {request_id}, got {reply.get('i')}")
        if "e" in reply:
            raise RuntimeError(f"the driver could not handle {topic!r}: {reply['e']}")
        return reply.get("r")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> ChannelClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
