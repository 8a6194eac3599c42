"""Asynchronous services: ``map_using_service_async`` and ``map_using_service_async_batched`` (Jet 4).

The stage's function starts a call and returns a ``concurrent.futures.Future`` (for instance from a thread
pool the service owns, or a client's async API); :class:`AsyncServiceP` keeps up to ``max_concurrent_ops`` of
them in flight per processor and emits each result when its future completes:

- **back-pressure**: with ``max_concurrent_ops`` calls in flight, the processor waits (blocking, bounded by
  the timeout) until one completes before it starts the next;
- **order**: results leave in input order (a result waits for the futures before it), unless the pipeline
  says ``set_preserve_order(False)``: then each leaves as soon as it is ready;
- a ``None`` result drops the item (as ``map``); with timestamps, a result keeps its input's timestamp;
- **watermarks and snapshots wait** until every future started before them completed and its result was
  emitted, so a snapshot never holds an in-flight call and a watermark never overtakes an item;
- **failures**: a future that fails fails the job, naming the vertex, the item's position in this processor's
  input and the item; a future still pending after ``timeout_s`` (default 60 s) fails it the same way;
- the batched form calls ``fn(service, items)`` with up to ``max_batch_size`` items (what is in the inbox) and
  expects a future of a list of as many results.

Vertices: ``map-using-service-async`` and ``map-using-service-async-batched``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any

from pipeline.events import JetEvent
from processors.api.inbox import Inbox
from processors.api.processor import Processor

__all__ = ["AsyncServiceP", "DEFAULT_ASYNC_TIMEOUT_S"]

DEFAULT_ASYNC_TIMEOUT_S = 60.0


class _Call:
    """One call in flight: the position of its first item, its items and its future."""

    __slots__ = ("position", "items", "future", "started")

    def __init__(self, position: int, items: list, future: Any, started: float):
        self.position = position
        self.items = items
        self.future = future
        self.started = started


class AsyncServiceP(Processor):
    """The processor of the async service operations (see the module docstring). ``key_fn``: the keyed form
    (``fn(service, key, item)``); ``batch_size`` None: one item per call."""

    def __init__(self, context_factory: Any, fn: Callable[..., Any], max_concurrent_ops: int, ordered: bool,
                 events: bool, batch_size: int | None = None, key_fn: Callable[[Any], Any] | None = None,
                 timeout_s: float = DEFAULT_ASYNC_TIMEOUT_S):
        self.context_factory = context_factory
        self.fn = fn
        self.max_concurrent_ops = max_concurrent_ops
        self.ordered = ordered
        self.events = events
        self.batch_size = batch_size
        self.key_fn = key_fn
        self.timeout_s = timeout_s
        self._calls: deque[_Call] = deque()
        self._pending: list = []  # outputs of completed calls not yet accepted by the outbox
        self._position = 0
        self._received = 0
        self._outbox: Any = None
        self._ctx: Any = None
        self._vertex = "?"
        self._index = 0

    def init(self, outbox: Any, context: Any) -> None:
        self._outbox = outbox
        self._vertex = getattr(context, "vertex_name", "?")
        self._index = getattr(context, "global_processor_index", 0)
        self._ctx = self.context_factory.create(context)

    def is_cooperative(self) -> bool:
        return self.context_factory.is_cooperative

    # ------------------------------------------------------------------ starting calls
    def process(self, ordinal: int, inbox: Inbox) -> None:
        if not self._drain():
            return
        service = self._ctx
        while not inbox.is_empty():
            if len(self._calls) >= self.max_concurrent_ops:
                self._wait_for_one()
                if not self._drain():
                    return
                continue
            size = 1 if self.batch_size is None else min(self.batch_size, len(inbox))
            items = [inbox.poll() for _ in range(size)]
            self._calls.append(_Call(self._received, items, self._start(service, items), time.monotonic()))
            self._received += size
        self._drain()

    def _wait_for_one(self) -> None:
        """Block until a call that can be emitted completes (the head one when ordered), at most until the
        oldest call's timeout: back-pressure when ``max_concurrent_ops`` calls are in flight."""
        waiting = [self._calls[0].future] if self.ordered else [c.future for c in self._calls]
        left = self.timeout_s - (time.monotonic() - self._calls[0].started)
        wait(waiting, timeout=max(0.0, left) + 0.01, return_when=FIRST_COMPLETED)

    def _start(self, service: Any, items: list) -> Any:
        plain = [item.item if self.events else item for item in items]
        if self.batch_size is not None and self.key_fn is not None:
            future = self.fn(service, [self.key_fn(item) for item in plain], plain)
        elif self.batch_size is not None:
            future = self.fn(service, plain)
        elif self.key_fn is not None:
            future = self.fn(service, self.key_fn(plain[0]), plain[0])
        else:
            future = self.fn(service, plain[0])
        if not isinstance(future, Future):
            raise TypeError(f"vertex '{self._vertex}': the function of map_using_service_async must return a "
                            f"concurrent.futures.Future, got {type(future).__name__} for item "
                            f"#{self._received} ({plain[0]!r:.80}); e.g. return executor.submit(call, item)")
        return future

    # ------------------------------------------------------------------ emitting results
    def _drain(self) -> bool:
        """Emit what completed (in order unless unordered); True when nothing is left to emit."""
        while True:
            self._position = self._outbox.offer_many(self._pending, self._position)
            if self._position < len(self._pending):
                return False
            self._pending, self._position = [], 0
            call = self._next_done()
            if call is None:
                return True
            self._pending = self._results(call)

    def _next_done(self) -> _Call | None:
        now = time.monotonic()
        for i, call in enumerate(self._calls):
            if call.future.done():
                del self._calls[i]
                return call
            if now - call.started > self.timeout_s:
                raise TimeoutError(
                    f"vertex '{self._vertex}' (processor {self._index}): the future of map_using_service_async "
                    f"for item #{call.position} ({call.items[0]!r:.80}) has not completed after {self.timeout_s} "
                    "s; make the service complete or fail every future it returns")
            if self.ordered:
                return None
        return None

    def _results(self, call: _Call) -> list:
        error = call.future.exception()
        if error is not None:
            raise RuntimeError(
                f"vertex '{self._vertex}' (processor {self._index}): the future of map_using_service_async for "
                f"item #{call.position} ({call.items[0]!r:.80}) failed: {type(error).__name__}: {error}") from error
        results = call.future.result()
        if self.batch_size is None:
            results = [results]
        elif not isinstance(results, (list, tuple)) or len(results) != len(call.items):
            got = f"{len(results)} results" if isinstance(results, (list, tuple)) else type(results).__name__
            raise ValueError(
                f"vertex '{self._vertex}': map_using_service_async_batched's future must give a list of one result "
                f"per item: {len(call.items)} items from #{call.position}, got {got}")
        out = []
        for item, result in zip(call.items, results):
            if result is not None:
                out.append(JetEvent(item.timestamp, result) if self.events else result)
        return out

    def _idle(self) -> bool:
        """Emit what completed; True once no call is in flight. Otherwise waits for the next call to complete
        first, so that every call of the engine makes progress (it may emit nothing for a ``None`` result)."""
        if self._drain() and not self._calls:
            return True
        if self._calls and not self._pending:
            self._wait_for_one()
        return self._drain() and not self._calls

    def try_process(self) -> bool:
        self._drain()  # emit what completed meanwhile; calls still in flight are awaited by complete()
        return True

    def try_process_watermark(self, watermark: Any) -> bool:
        return self._idle() and self._outbox.offer(watermark)

    def save_to_snapshot(self) -> bool:
        return self._idle()

    def complete(self) -> bool:
        return self._idle()

    def close(self) -> None:
        if self._ctx is not None:
            self.context_factory.destroy(self._ctx)
            self._ctx = None
