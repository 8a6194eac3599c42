"""``Sinks.socket(host, port, to_string_fn=str)``: each item as a line of text to a TCP server (Jet's
``Sinks.socket``).

Every processor opens its own client connection when it starts (so the server sees one connection per
processor) and writes ``to_string_fn(item) + "\\n"`` per item, a whole inbox at a time, encoded as UTF-8;
it closes the connection when the input completes. A server that cannot be reached fails the job naming the
vertex and the address. Non-cooperative (a write may block). Vertex: ``socketSink(HOST:PORT)``.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagError
from pipeline.descriptors import Sink
from processors.api.inbox import Inbox
from processors.api.processor import Processor
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["SocketSinkP", "socket_sink"]

CONNECT_TIMEOUT_S = 30.0


class SocketSinkP(Processor):
    """The processor of :func:`socket_sink`."""

    def __init__(self, host: str, port: int, to_string_fn: Callable[[Any], Any], encoding: str = "utf-8"):
        self.host = host
        self.port = port
        self.to_string_fn = to_string_fn
        self.encoding = encoding
        self._socket: socket.socket | None = None

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox: Any, context: Any) -> None:
        try:
            self._socket = socket.create_connection((self.host, self.port), timeout=CONNECT_TIMEOUT_S)
        except OSError as error:
            raise DagError(f"vertex '{getattr(context, 'vertex_name', '?')}': Sinks.socket cannot connect to "
                           f"{self.host}:{self.port}: {error}; start the server first or fix the address") from error

    def process(self, ordinal: int, inbox: Inbox) -> None:
        text = "".join(f"{self.to_string_fn(item)}\n" for item in inbox.take_all())
        self._socket.sendall(text.encode(self.encoding))

    def complete(self) -> bool:
        self.close()
        return True

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class _Factory:
    def __init__(self, *args: Any):
        self.args = args

    def __call__(self) -> SocketSinkP:
        return SocketSinkP(*self.args)


def socket_sink(host: str, port: int, to_string_fn: Callable[[Any], Any] = str) -> Sink:
    """``Sinks.socket(host, port, to_string_fn)`` (see the module docstring)."""
    if not isinstance(host, str) or not host:
        raise TypeError(f"Sinks.socket(host, port): host must be a non-empty str, got {host!r:.80}")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"Sinks.socket({host!r}, port): port must be an int in 1..65535, got {port!r}")
    if not callable(to_string_fn):
        raise TypeError(f"Sinks.socket: to_string_fn must be callable, got {to_string_fn!r:.80}")
    return Sink(f"socketSink({host}:{port})", ProcessorMetaSupplier.of(_Factory(host, port, to_string_fn)))
