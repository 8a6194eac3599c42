"""``ProcessorTasklet``: one processor run step by step through Jet's lifecycle (engine-free).

This is the one copy of the processor lifecycle, run by three callers: the staged runtime through
:func:`processors.execution.staged.drive` (a generator over inbound batches); the pipelined runtime
(``dag/runtime/pipelined``), from its cooperative scheduler or from a thread of its own; and
``verify_processor`` (``processors/testing.py``), which steps it in Jet's TestSupport order. Every processor
call, with its contract (outbox reset and call name, boolean results, progress, the unfinished-item rule, the
snapshot save and restore calls, error notes, ``close``), happens here. The caller feeds input and events,
calls :meth:`ProcessorTasklet.step` and takes the output:

- ``add_batch(ordinal, items)``: items of an inbound edge (counted in the metrics);
- ``add_watermark(ordinal, ts)``: a watermark of an inbound edge, already coalesced over the edge's upstream
  processors (pipelined: its queues; staged: :mod:`processors.execution.staged_watermarks`); the tasklet coalesces over
  its edges (:class:`~processors.execution.coalescer.WatermarkCoalescer`);
- ``edge_done(ordinal)``: the inbound edge will bring nothing more;
- ``step()`` -> ``PROGRESS`` | ``NO_PROGRESS`` | ``NEEDS_INPUT``; ``take_output()`` -> ``[(ordinal, items)]``.

One step is one unit of Jet's lifecycle, in this order of preference:

1. ``init(outbox, context)`` (the first step);
2. ``process(ordinal, inbox)`` for an inbound edge of the current priority group whose inbox holds items
   (``BatchTransform``: ``transform_chunks(batch, size)`` per batch, one list per step to every outbound
   ordinal, cut to the ordinal's queue size; no outbox);
3. a pending coalesced watermark: the idle message ``Watermark(2**63-1)`` goes to every outbound ordinal without
   calling the processor; any other value calls ``try_process_watermark(Watermark(ts))`` until True;
4. ``try_process()``: pipelined, once whenever the inbox is empty (also before the first input); staged,
   until True after each inbound batch;
5. ``complete_edge(o)`` until True, in ascending ordinal order, for each done edge of the current group whose
   inbox is empty; when all edges of the group are completed the next priority group starts;
6. ``complete()`` until True once all groups are completed; then the tasklet ``is_done``.

Rules the tasklet enforces (``ProcessorContractError`` naming processor, vertex, method and rule): a boolean
method returning ``None``; ``NO_PROGRESS_LIMIT`` consecutive calls of a cooperative processor without progress
(staged: any method; pipelined: ``process`` only, since a streaming processor may legitimately wait);
``complete()`` returning True with a refused item never re-offered. Exceptions from the processor get a note
naming the processor and the method. The caller must take the output after every step (the processor is
called with empty buckets) and must back off a non-cooperative processor that makes no progress
(:func:`processors.execution.staged.back_off_seconds`); :meth:`close` is the caller's last call, always.

Snapshots (``snapshot_aligned`` not None: the job takes snapshots, aligned for exactly-once): the outbox gets a
snapshot bucket of ``snapshot_capacity`` entries and :attr:`snapshots` (a
:class:`~processors.execution.snapshot_steps.SnapshotSteps`) runs restore, phase 2 and save steps before the steps above
(see that module); barriers reach it through ``snapshots.add_barrier`` and leave through
``snapshots.take_barriers()``.

``test_support=True`` (``verify_processor``) makes exactly the calls Jet's TestSupport makes, no others: no
``try_process()``, no ``complete_edge`` (the caller ends the input with :meth:`~ProcessorTasklet.skip_to_complete`),
no ``snapshot_commit_prepare``; a ``BatchTransform`` goes through ``process()`` and its outbox, not the fast
path; ``add_watermark`` hands the test's watermark item to ``try_process_watermark`` as it is (not coalesced, the
idle message included). The caller may step again without taking the output (TestSupport calls ``process``
again with a full outbox). A broken lifecycle rule that TestSupport reports as an ``AssertionError`` (an
unfinished item when ``complete()`` returns True) is kept as :attr:`~ProcessorTasklet.broken_rule`, as the outbox
keeps its own. These switches are read only off the hot path (per batch at most).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Sequence

from jetspark_base.errors import ProcessorContractError
from processors.execution.coalescer import IDLE, WatermarkCoalescer
from processors.api.inbox import Inbox
from processors.api.outbox import _NO_ITEM, Outbox
from processors.api.processor import BatchTransform
from processors.execution.snapshot_steps import SNAPSHOT_BUCKET, SnapshotSteps
from processors.api.watermark import Watermark

__all__ = [
    "ProcessorTasklet", "ProcessorMetrics", "PROGRESS", "NO_PROGRESS", "NEEDS_INPUT", "NO_PROGRESS_LIMIT",
    "describe_processor", "call_bool", "close_processor",
]

PROGRESS, NO_PROGRESS, NEEDS_INPUT = 1, 0, -1
NO_PROGRESS_LIMIT = 1000
"""Consecutive calls of a cooperative processor without any progress after which the tasklet gives up with a
``ProcessorContractError``."""

_SINK_CHUNK = 1024  # inputs per transform_chunks call of a BatchTransform without outbound edges
_log = logging.getLogger("jetspark.driver")
_INIT, _RUN, _COMPLETE, _DONE = range(4)


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


# ---------------------------------------------------------------------------- shared lifecycle helpers
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


# ---------------------------------------------------------------------------- the tasklet
class ProcessorTasklet:
    """One processor stepped through its lifecycle (see the module docstring).

    >>> from processors.api.processor import AbstractProcessor
    >>> from processors.api.context import Context
    >>> class Twice(AbstractProcessor):
    ...     def try_process0(self, item):
    ...         return self.try_emit(item) and self.try_emit(item)  # simplified: re-emits on retry
    >>> t = ProcessorTasklet(Twice(), Context(), inbound_priorities={0: 0}, outbound_capacities=[8])
    >>> t.add_batch(0, [1, 2]); t.edge_done(0)
    >>> while not t.is_done:
    ...     _ = t.step()
    ...     out = t.take_output()
    ...     if out: print(out)
    [(0, [1, 1, 2, 2])]
    >>> t.close(None)
    """

    __slots__ = (
        "processor", "context", "owner", "outbox", "metrics", "pipelined", "cooperative", "stalls", "_state",
        "_fast", "_fast_in", "_fast_out", "_fast_gen", "_fast_size", "_inboxes", "_groups", "_group", "_done_edges", "_completed",
        "_nullary_due", "_coalescer", "_pending_wm", "_n_out", "_rotation", "snapshots", "test_support",
        "broken_rule",
    )

    def __init__(
        self,
        processor: Any,
        context: Any,
        *,
        inbound_priorities: Mapping[int, int],
        outbound_capacities: Sequence[int],
        metrics: ProcessorMetrics | None = None,
        vertex_name: str | None = None,
        pipelined: bool = False,
        max_watermark_retain_ms: int | None = None,
        snapshot_aligned: bool | None = None,
        snapshot_capacity: int = SNAPSHOT_BUCKET,
        test_support: bool = False,
    ):
        if vertex_name is None:
            vertex_name = getattr(context, "vertex_name", None)
        self.processor, self.context, self.pipelined = processor, context, pipelined
        self.owner = describe_processor(processor, vertex_name, getattr(context, "global_processor_index", None))
        snapshot_bucket = None if snapshot_aligned is None else snapshot_capacity
        self.outbox = Outbox(outbound_capacities, snapshot_capacity=snapshot_bucket, owner=self.owner)
        self.test_support = test_support
        self.broken_rule: ProcessorContractError | None = None
        self.metrics = metrics = ProcessorMetrics() if metrics is None else metrics
        for o in inbound_priorities:
            metrics.received.setdefault(o, 0)
        self._n_out = len(outbound_capacities)
        for o in range(self._n_out):
            metrics.emitted.setdefault(o, 0)
        self.cooperative: bool | None = None  # asked on the first call without progress
        self.stalls = 0
        self._state = _INIT
        self._fast = isinstance(processor, BatchTransform) and not test_support
        self._fast_in: list[list] = []
        self._fast_out: list | None = None
        self._fast_gen: Any = None   # the transform_chunks generator of the batch being transformed
        self._fast_size = min(outbound_capacities, default=_SINK_CHUNK)
        self._inboxes = {o: Inbox() for o in inbound_priorities}
        by_priority: dict[int, list[int]] = {}
        for ordinal, priority in inbound_priorities.items():
            by_priority.setdefault(priority, []).append(ordinal)
        self._groups = [sorted(by_priority[p]) for p in sorted(by_priority)]
        self._group = 0
        self._done_edges: set[int] = set()
        self._completed: set[int] = set()
        self._nullary_due = False
        n_in = max(inbound_priorities, default=-1) + 1
        self._coalescer = WatermarkCoalescer(n_in, max_watermark_retain_ms) if n_in and not test_support else None
        self._pending_wm: int | None = None
        self._rotation = 0
        self.snapshots = None if snapshot_aligned is None else \
            SnapshotSteps(self, list(inbound_priorities), aligned=snapshot_aligned, commit=not test_support)

    # ------------------------------------------------------------------ input and events
    def add_batch(self, ordinal: int, items: list) -> None:
        """Items of inbound edge ``ordinal`` (never watermarks; those go to :meth:`add_watermark`)."""
        if not items:
            return
        self.metrics.received[ordinal] += len(items)
        if self._fast:
            self._fast_in.append(items)
        else:
            self._inboxes[ordinal]._items.extend(items)
        if self._coalescer is not None:
            self._coalescer.observe_event(ordinal)

    def add_watermark(self, ordinal: int, ts: int) -> None:
        """A watermark of inbound edge ``ordinal``, coalesced over the edge's upstream processors; with
        ``test_support``, a watermark item of the test's input, given to the processor as it is."""
        if self._coalescer is not None:
            self._set_pending(self._coalescer.observe_wm(ordinal, ts))
        elif self.test_support:
            self._pending_wm = ts

    def edge_done(self, ordinal: int) -> None:
        """Inbound edge ``ordinal`` has ended: ``complete_edge`` follows once its inbox is empty."""
        if ordinal in self._done_edges:
            return
        self._done_edges.add(ordinal)
        if self._coalescer is not None:
            self._set_pending(self._coalescer.queue_done(ordinal))
        if self.snapshots is not None:
            self.snapshots.edge_done(ordinal)

    def _set_pending(self, wm: int | None) -> None:
        if wm is not None:
            self._pending_wm = wm if self._pending_wm is None else max(self._pending_wm, wm)

    def wants_input(self) -> bool:
        """True when every inbox is empty and no watermark is pending: the caller may add more input."""
        if self.snapshots is not None and self.snapshots.busy:
            return False
        return self._input_empty()

    def _input_empty(self) -> bool:
        if self._pending_wm is not None or self._fast_in or self._fast_gen is not None:
            return False
        for inbox in self._inboxes.values():
            if inbox._items:
                return False
        return True

    def current_ordinals(self) -> list[int]:
        """The inbound ordinals of the priority group being consumed (the only ones to feed now)."""
        return self._groups[self._group] if self._group < len(self._groups) else []

    def skip_to_complete(self) -> None:
        """End the input without ``complete_edge`` calls (Jet's TestSupport never calls it): the next step (after
        pending snapshot steps) calls ``complete()``. Only after ``init``, with no input pending."""
        if self._state != _RUN or not self._input_empty():
            raise RuntimeError(f"skip_to_complete() needs an initialised {self.owner} without pending input")
        self._group = len(self._groups)
        self._state = _COMPLETE

    @property
    def is_done(self) -> bool:
        """``complete()`` returned True: the processor will emit nothing more."""
        return self._state == _DONE

    # ------------------------------------------------------------------ output
    def take_output(self) -> list[tuple[int, list]]:
        """The ``(outbound ordinal, items)`` emitted by the last step (lists owned by the caller, not to mutate)."""
        emitted = self.metrics.emitted
        out = self._fast_out
        if out is not None:
            self._fast_out = None
            n = len(out)
            caps = self.outbox._capacities
            result = []
            for o in range(self._n_out):
                emitted[o] += n
                cap = caps[o]
                if n <= cap:
                    result.append((o, out))
                else:
                    result += [(o, out[start:start + cap]) for start in range(0, n, cap)]
            return result
        buckets = self.outbox._buckets
        result = []
        for o in range(self._n_out):
            if buckets[o]:
                items = buckets[o]
                buckets[o] = []
                emitted[o] += len(items)
                result.append((o, items))
        return result

    # ------------------------------------------------------------------ stepping
    def step(self) -> int:
        """Run one unit of the lifecycle: ``PROGRESS``, ``NO_PROGRESS`` (a call that did nothing) or
        ``NEEDS_INPUT`` (nothing to do until more input or events arrive)."""
        try:
            state = self._state
            snapshots = self.snapshots
            if snapshots is not None and state != _INIT and (state != _DONE or snapshots.finishes):
                ran = snapshots.step(self._input_empty())
                if ran is not None:
                    return PROGRESS if ran else NO_PROGRESS
            if state == _RUN:
                return self._run_step()
            if state == _COMPLETE:
                return self._complete_step()
            if state == _INIT:
                self.outbox.call = "init(outbox, context)"
                self.processor.init(self.outbox, self.context)
                self._state = _RUN
                return PROGRESS
            return NEEDS_INPUT
        except Exception as exc:
            if not isinstance(exc, ProcessorContractError):
                exc.add_note(f"in {self.owner}, method {self.outbox.call or 'init(outbox, context)'}")
            raise

    def close(self, failure: BaseException | None) -> None:
        """Call ``close()`` on the processor (see :func:`close_processor`)."""
        close_processor(self.processor, self.owner, failure)

    def _run_step(self) -> int:
        if self._fast_in or self._fast_gen is not None:
            return self._transform()
        group = self.current_ordinals()
        n = len(group)
        for k in range(n):
            o = group[(self._rotation + k) % n] if n > 1 else group[0]
            inbox = self._inboxes[o]
            if inbox._items:
                self._rotation = (self._rotation + k) % n if n > 1 else 0
                return self._process(o, inbox)
        if self._pending_wm is not None:
            return self._watermark()
        if self.pipelined:
            if self._coalescer is not None:
                self._set_pending(self._coalescer.check_history())
            self._call("try_process()", self.processor.try_process)
            if self.outbox._buckets and any(self.outbox._buckets):
                return PROGRESS
        elif self._nullary_due:
            done = self._call("try_process()", self.processor.try_process)
            if done:
                self._nullary_due = False
            return self._progress(done or self._emitted(), "try_process()")
        for o in group:
            if o in self._completed:
                continue
            if o not in self._done_edges:
                break  # complete_edge in ascending ordinal order
            done = self._call(f"complete_edge({o})", self.processor.complete_edge, o)
            if done:
                self._completed.add(o)
            return self._progress(done or self._emitted(), f"complete_edge({o})")
        if n and len(self._completed.intersection(group)) == n:
            self._group += 1
            return PROGRESS
        if self._group >= len(self._groups):
            self._state = _COMPLETE
            return PROGRESS
        return NEEDS_INPUT

    def _process(self, ordinal: int, inbox: Inbox) -> int:
        items = inbox._items
        before = len(items)
        outbox = self.outbox
        outbox.reset()
        call = outbox.call = f"process({ordinal}, inbox)"
        self.processor.process(ordinal, inbox)
        if not items:
            self._nullary_due = not self.test_support
        return self._progress(len(items) != before or self._emitted(), call, check=True)

    def _transform(self) -> int:
        """One list of the ``BatchTransform`` fast path: ``transform_chunks`` cuts a batch's output into lists
        of about the smallest queue size, taken one per step, so memory is bounded by the queue sizes."""
        if self._fast_gen is None:
            batch = self._fast_in.pop(0)
            self.outbox.call = f"transform_batch(<{len(batch)} items>)"
            self._fast_gen = iter(self.processor.transform_chunks(batch, self._fast_size))
        out = next(self._fast_gen, None)
        if out is None:
            self._fast_gen = None
        elif out:
            self._fast_out = out
        self.stalls = 0
        return PROGRESS

    def _watermark(self) -> int:
        ts = self._pending_wm
        if ts == IDLE and not self.test_support:
            for bucket in self.outbox._buckets:
                bucket.append(Watermark(IDLE))
            self._pending_wm = None
            return PROGRESS
        done = self._call("try_process_watermark(watermark)", self.processor.try_process_watermark, Watermark(ts))
        if done:
            self._pending_wm = None
        return self._progress(done or self._emitted(), "try_process_watermark(watermark)", check=True)

    def _complete_step(self) -> int:
        outbox = self.outbox
        done = self._call("complete()", self.processor.complete)
        if done:
            if outbox.has_unfinished_item():
                self.broken_rule = unfinished_item_error(self.owner, "complete()", outbox)
                raise self.broken_rule
            self._state = _DONE
        return self._progress(done or self._emitted(), "complete()")

    def _call(self, call: str, fn: Callable[..., Any], *args: Any) -> bool:
        return call_bool(self.outbox, call, fn, *args)

    def _emitted(self) -> bool:
        return self._fast_out is not None or any(self.outbox._buckets)

    def _progress(self, progress: bool, call: str, check: bool = False) -> int:
        """Count consecutive calls without progress; a cooperative processor fails after ``NO_PROGRESS_LIMIT``."""
        if progress:
            self.stalls = 0
            return PROGRESS
        self.stalls += 1
        if self.cooperative is None:
            self.cooperative = bool(getattr(self.processor, "is_cooperative", lambda: True)())
        if self.cooperative and self.stalls >= NO_PROGRESS_LIMIT and (check or not self.pipelined):
            raise no_progress_error(self.owner, call, self.stalls)
        return NO_PROGRESS
