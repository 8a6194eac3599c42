"""What every caller of a processor shares around the tasklet (engine-free): how messages name a processor, a
boolean lifecycle call with its checks, closing a processor, opening a ``ProcessorSupplier``, the order of the
inbound priority groups, the per-processor metrics and the ``DONE`` item.

:class:`~processors.execution.tasklet.ProcessorTasklet` runs the lifecycle itself; the staged runtime
(``dag/runtime/staged/task.py``), the pipelined one (``dag/runtime/pipelined/runner.py``) and ``verify_processor``
use these helpers for what happens around it (a supplier opened once per member, its unused processors closed).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Collection, Mapping

from jetspark_base.errors import DagValidationError, ProcessorContractError
from processors.api.outbox import _NO_ITEM, Outbox

__all__ = [
    "DONE", "ProcessorMetrics", "describe_processor", "call_bool", "close_processor", "no_progress_error",
    "unfinished_item_error", "open_processors", "priority_groups",
]

_log = logging.getLogger("jetspark.driver")


class _Done:
    """The end-of-stream item (a singleton, also after pickling)."""

    __slots__ = ()

    def __reduce__(self) -> str:
        return "DONE"

    def __repr__(self) -> str:
        return "DONE"


DONE = _Done()
"""What a finished processor emits on every outbound ordinal (pipelined policy): its consumers' edge ends."""


class ProcessorMetrics:
    """Per-processor counters: ``received[inbound ordinal]`` and ``emitted[outbound ordinal]`` item counts."""

    __slots__ = ("received", "emitted")

    def __init__(self, received: dict[int, int] | None = None, emitted: dict[int, int] | None = None):
        self.received = {} if received is None else received
        self.emitted = {} if emitted is None else emitted

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProcessorMetrics) and (self.received, self.emitted) == (other.received, other.emitted)

    def __repr__(self) -> str:
        return f"ProcessorMetrics(received={self.received}, emitted={self.emitted})"


def describe_processor(processor: Any, vertex_name: str | None = None, index: int | None = None) -> str:
    """How messages name a processor: ``processor WordP of vertex 'tokenize' #0``."""
    text = f"processor {type(processor).__qualname__}"
    if vertex_name:
        text += f" of vertex '{vertex_name}'"
        if index is not None:
            text += f" #{index}"
    return text


def call_bool(outbox: Outbox, call: str, fn: Callable[..., Any], *args: Any) -> bool:
    """Reset ``outbox``, record ``call`` (for messages) and return ``fn(*args)``, which must be a bool."""
    outbox.reset()
    outbox.call = call
    result = fn(*args)
    if result is True or result is False:
        return result
    if result is None:
        raise ProcessorContractError(
            f"{outbox.owner}: {call} returned None; it must return True when done or False to be called again "
            "(did you forget the return statement?)"
        )
    return bool(result)


def close_processor(processor: Any, owner: str, failure: BaseException | None) -> None:
    """Call ``processor.close()``; its exception propagates only when there was no earlier ``failure``."""
    try:
        processor.close()
    except Exception as exc:
        if failure is None:
            exc.add_note(f"in {owner}, method close()")
            raise
        _log.warning("close() of %s failed after an earlier failure (%r); the earlier one is raised", owner, exc,
                     exc_info=exc)


def no_progress_error(owner: str, call: str, calls: int) -> ProcessorContractError:
    """The error for a processor that made no progress in ``calls`` consecutive calls of ``call``."""
    return ProcessorContractError(
        f"{owner} made no progress in {calls} consecutive calls of {call}: it neither removed an inbox item, "
        "nor emitted anything, nor returned True. A processor must make progress when called (if it waits for "
        "the outbox, it must emit the refused item again on the next call)"
    )


def unfinished_item_error(owner: str, call: str, outbox: Outbox) -> ProcessorContractError:
    """The error for a processor claiming to be done while the outbox still holds a refused item."""
    pending = outbox._pending if outbox._pending_snapshot is _NO_ITEM else outbox._pending_snapshot
    return ProcessorContractError(
        f"{owner}: {call} returned True, but the outbox still has an unfinished item ({pending!r}): an offer "
        "returned False and the item was never offered again, so it would be lost. Return False after a refused "
        "offer and offer the same item again on the next call"
    )


def priority_groups(priorities: Mapping[int, int]) -> list[tuple[int, list[int]]]:
    """``(priority, ordinals)`` of the inbound edges, lowest priority first, ordinals ascending: the order in which
    a processor consumes its edges (a group is read only after every edge of the groups before it completed).

    >>> priority_groups({0: 1, 1: 0, 2: 1})
    [(0, [1]), (1, [0, 2])]
    """
    by_priority: dict[int, list[int]] = {}
    for ordinal, priority in priorities.items():
        by_priority.setdefault(priority, []).append(ordinal)
    return [(p, sorted(by_priority[p])) for p in sorted(by_priority)]


def open_processors(supplier: Any, count: int, vertex_name: str, keep: Collection[int] | None = None) -> dict[int, Any]:
    """``{index: processor}`` of an initialised ``supplier``'s ``get(count)``, for the indices in ``keep`` (all
    when None); the others are closed at once, since Jet closes every processor it created. Every runtime and
    ``verify_processor`` open a supplier here.

    Raises ``DagValidationError`` naming the vertex when ``get`` returns another number of processors.

    >>> from processors.api.processor import Processor
    >>> from processors.api.suppliers import ProcessorSupplier
    >>> sorted(open_processors(ProcessorSupplier.of(Processor), 2, "v", keep={1}))
    [1]
    """
    processors = list(supplier.get(count))
    if len(processors) != count:
        raise DagValidationError(
            f"ProcessorSupplier {type(supplier).__qualname__} of vertex '{vertex_name}' failed to return the "
            f"requested number of processors. Requested: {count}, returned: {len(processors)}; get(count) must "
            "return exactly count processors (ProcessorSupplier.of(factory) does)"
        )
    for i, processor in enumerate(processors):
        if keep is not None and i not in keep:
            close_processor(processor, describe_processor(processor, vertex_name), None)
    return {i: p for i, p in enumerate(processors) if keep is None or i in keep}
