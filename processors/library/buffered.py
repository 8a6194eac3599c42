"""``write_buffered_p``: a sink that hands items to a user buffer and flushes it (Jet's ``writeBufferedP``).

Design (Jet's ``WriteBufferedP``, which ``SinkBuilder`` also builds on):

- non-cooperative, so the user functions may block (file or network I/O);
- ``init``: ``buffer = create_fn(context)``; a ``None`` buffer is an error naming the vertex and processor;
- ``process``: the whole inbox goes through ``on_receive_fn(buffer, item)`` in one tight loop, then
  ``flush_fn(buffer)`` runs once, i.e. after every inbox batch;
- watermarks are swallowed; the sink emits nothing and saves no snapshot state (at-least-once at best);
- ``close`` (always called, also when the job fails): ``destroy_fn(buffer)`` if a buffer was created.

>>> from processors import verify_processor
>>> received = []
>>> supplier = write_buffered_p(lambda ctx: [], lambda buf, item: buf.append(item), received.extend)
>>> verify_processor(supplier).disable_snapshots().input([1, 2]).expect_output([])
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from jetspark_base.errors import DagValidationError
from processors.api.processor import Processor

__all__ = ["write_buffered_p", "WriteBufferedP"]


def write_buffered_p(
    create_fn: Callable[[Any], Any],
    on_receive_fn: Callable[[Any, Any], Any],
    flush_fn: Callable[[Any], Any] | None = None,
    destroy_fn: Callable[[Any], Any] | None = None,
) -> Callable[[], "WriteBufferedP"]:
    """A sink supplier (zero-argument callable) that writes items into a buffer made by ``create_fn``.

    ``create_fn(context)`` makes the buffer (the processor :class:`~processors.Context` is passed),
    ``on_receive_fn(buffer, item)`` takes each item, ``flush_fn(buffer)`` runs after every inbox batch and
    ``destroy_fn(buffer)`` when the processor closes (also after a failure). ``flush_fn`` and ``destroy_fn``
    are optional.

    >>> dag.new_vertex("sink", write_buffered_p(lambda ctx: open(f"out.{ctx.global_processor_index}", "w"),
    ...                                         lambda f, item: f.write(f"{item}\\n"), lambda f: f.flush(),
    ...                                         lambda f: f.close()))  # doctest: +SKIP
    """
    _require_callable("write_buffered_p", "create_fn", create_fn)
    _require_callable("write_buffered_p", "on_receive_fn", on_receive_fn)
    _require_callable("write_buffered_p", "flush_fn", flush_fn, optional=True)
    _require_callable("write_buffered_p", "destroy_fn", destroy_fn, optional=True)
    return functools.partial(WriteBufferedP, create_fn, on_receive_fn, flush_fn, destroy_fn)


class WriteBufferedP(Processor):
    """The processor behind :func:`write_buffered_p` and ``SinkBuilder`` (see the module docstring)."""

    def __init__(self, create_fn, on_receive_fn, flush_fn=None, destroy_fn=None):
        self._create_fn = create_fn
        self._on_receive_fn = on_receive_fn
        self._flush_fn = flush_fn
        self._destroy_fn = destroy_fn
        self._buffer = None

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        buffer = self._create_fn(context)
        if buffer is None:
            raise DagValidationError(
                f"create_fn of sink vertex '{context.vertex_name}' (processor #{context.global_processor_index}) "
                "returned None: it must return the buffer/state object that receive_fn gets; return any object "
                "other than None"
            )
        self._buffer = buffer

    def process(self, ordinal: int, inbox) -> None:
        buffer = self._buffer
        receive = self._on_receive_fn
        for item in inbox.take_all():
            receive(buffer, item)
        if self._flush_fn is not None:
            self._flush_fn(buffer)

    def close(self) -> None:
        buffer, self._buffer = self._buffer, None
        if buffer is not None and self._destroy_fn is not None:
            self._destroy_fn(buffer)


def _require_callable(owner: str, param: str, fn: Any, optional: bool = False) -> None:
    """Raise a ``DagValidationError`` naming ``owner``'s parameter when ``fn`` is not callable."""
    if fn is None and optional:
        return
    if not callable(fn):
        raise DagValidationError(
            f"{owner}: {param} must be a function, got {fn!r} ({type(fn).__name__}); pass a callable"
            + (" or None" if optional else "")
        )
