"""The stage task: what runs in Spark partition g of a stage (pure Python, no pyspark import).

A stage is a chain of vertices fused by narrow edges. In partition g the task

1. turns the input records (a dealt driver source: the chunks it asks the driver for, ``dealer.py``) into a
   stream of ``(inbound_ordinal, batch)`` for the head vertex (keys of keyed
   records dropped; the union already delivers inputs in ascending priority), merging in broadcast inputs by
   priority;
2. runs each vertex of the chain on the stream of the previous one, as generators: processor g of each vertex,
   created from the member's ``ProcessorSupplier`` and run by ``processors.execution.staged.drive`` (no serialization
   between fused processors); runtime-bound vertices are plain loops; when the plan gives the stage a tight
   loop (``StagePlan.loop``, ``loop_from`` here), the chain's stateless built-in tail runs instead as one
   generated ``FusedLoop`` (``processors/library/stateless_loops.py``) accumulating straight into the sender's dict;
3. turns the tail's output into records: nothing (sinks), items (driver/text sinks), ``(ordinal, batch)``
   (several outbound edges, persisted by the caller) or the edge's sender records.

Metrics are added to the job's accumulator once, when the task ends. Any exception is reported to the driver
on the job's channel (``channel``, a ``jobchannel.ChannelRef``) and becomes a ``TaskFailure`` that carries
only the report's id (``failures.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from jetspark_base.errors import ProcessorContractError
from dag.planner.physical_plan import VertexKind
from dag.runtime.staged.dealer import dealt_chunks
from dag.runtime.common.failures import encode_failure, mark_origin
from dag.runtime.common.logforward import forwarding
from dag.runtime.common.metrics import EMITTED, RECEIVED
from dag.runtime.common.senders import SenderSpec, accumulated_records, send
from processors.execution.staged_watermarks import is_items
from processors.library.aggregating import grouped_outputs, without_none

__all__ = ["BroadcastInput", "VertexTask", "StageTask"]

_log = logging.getLogger("jetspark.runtime")


@dataclass
class BroadcastInput:
    """A broadcast inbound edge: ``handle.value`` maps member (or 0 for all) to a list of batches."""

    ordinal: int
    priority: int
    handle: Any
    per_member: bool


@dataclass
class VertexTask:
    """One vertex of a stage chain, as a task runs it."""

    name: str
    kind: VertexKind
    local_parallelism: int
    members: int
    priorities: dict[int, int]              # inbound ordinal -> priority
    capacities: list[int]                   # outbound ordinal -> queue size
    fused_ordinal: int = 0                  # inbound ordinal of the fused edge from the previous vertex
    suppliers: list[Any] | None = None      # per member ProcessorSupplier (PROCESSOR)
    broadcasts: list[BroadcastInput] = field(default_factory=list)
    combine: Any = None                     # PreAggregation: run as a combine of (key, acc) entries
    dealt: bool = False                     # DRIVER_SOURCE: entries asked from the driver's Dealer (dealer.py)
    emit_only: int | None = None            # DRIVER_SOURCE read once per edge: the one ordinal this copy serves
    job_id: int = 0
    guarantee: Any = None
    channel: Any = None                     # jobchannel.ChannelRef: log records go to the driver (logforward.py)
    log_levels: list[int] | None = None     # per global processor index: the driver's level for its logger
    senders: dict[int, list[list[int]]] = field(default_factory=dict)  # inbound ordinal -> per processor, the
    #                                         upstream processors whose watermarks reach it (not fused edges)


@dataclass
class StageTask:
    """A stage: its chain, how its input records look and what it outputs."""

    stage_id: int
    chain: list[VertexTask]
    keyed_input: bool
    output: str                             # "drain" | "items" | "tagged" | "send"
    sender: SenderSpec | None = None
    sender_counts_vertex: str | None = None  # absorbed accumulate vertex reported by the sender
    accumulator: Any = None
    channel: Any = None                     # jobchannel.ChannelRef of the job (None: failures not reported)
    loop_from: int | None = None            # chain[loop_from:] runs as one generated loop into the sender

    def __call__(self, g: int, records: Iterator[Any]) -> Iterator[Any]:
        counters: dict = {}
        try:
            yield from self._run(g, records, counters)
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the driver
            if isinstance(exc, GeneratorExit):
                raise
            raise encode_failure(exc, [v.name for v in self.chain], g, self.channel) from None
        finally:
            if self.accumulator is not None and counters:
                self.accumulator.add(counters)

    def _run(self, g: int, records: Iterator[Any], counters: dict) -> Iterator[Any]:
        head = self.chain[0]
        end = len(self.chain) if self.loop_from is None else self.loop_from
        if head.kind is VertexKind.DRIVER_SOURCE:
            stream: Iterator = _driver_source(head, g, records, counters)
        elif head.kind is VertexKind.SPARK_TEXT_SOURCE:
            stream = _text_source(head, g, records, counters)
        else:
            stream = (v for _, v in records) if self.keyed_input else records
            if end > 0:
                stream = _run_vertex(head, g, _with_broadcasts(head, g, stream), counters)
        for vt in self.chain[1:end]:
            main = _on_ordinal(vt.fused_ordinal, stream)
            stream = _run_vertex(vt, g, _with_broadcasts(vt, g, main), counters)
        if self.loop_from is not None:
            yield from self._send_looped(g, stream, counters)
        elif self.output == "drain":
            for _ in stream:
                pass
        elif self.output == "items":
            for _, batch in stream:
                yield from batch
        elif self.output == "tagged":
            yield from stream
        else:
            yield from self._send(g, stream, counters)

    def _send(self, g: int, stream: Iterator, counters: dict) -> Iterator[Any]:
        counts: dict | None = {} if self.sender_counts_vertex else None
        try:
            yield from send(self.sender, g, (batch for _, batch in stream), counts)  # type: ignore[arg-type]
        except Exception as exc:  # a key function or an aggregate operation of the edge failed
            mark_origin(exc, self.sender_counts_vertex or self.chain[-1].name, g)
            raise
        if counts:
            name = self.sender_counts_vertex
            counters[(name, g, RECEIVED, 0)] = counts.get("received", 0)
            counters[(name, g, EMITTED, 0)] = counts.get("emitted", 0)

    def _send_looped(self, g: int, stream: Iterator, counters: dict) -> Iterator[Any]:
        """``chain[loop_from:]`` (built-in stateless processors) as one generated loop
        (``processors/library/stateless_loops.py``) accumulating into the pre-aggregating sender's per-key dict; each
        processor still goes through its whole lifecycle (supplier and processor ``init``, ``complete_edge``,
        ``complete``, ``close``) and gets its metrics."""
        from processors.library.stateless_loops import FusedLoop

        vts, spec = self.chain[self.loop_from:], self.sender
        acc: dict = {}
        with ExitStack() as stack:  # entered tail first, as the generators of the chain initialise; closed head first
            tasklets = [stack.enter_context(_initialised(vt, g, counters)) for vt in reversed(vts)][::-1]
            loop = FusedLoop([t.processor for t in tasklets], spec.operation, spec.key_fn)  # type: ignore[union-attr]
            try:
                # watermarks left out: the pre-aggregating sender would drop them anyway
                counts = loop.run((batch for _, batch in stream if is_items(batch)), acc)
            except Exception as exc:
                level = loop.level_of(exc)  # None: the key function or the aggregate operation of the edge
                if level is not None and not isinstance(exc, ProcessorContractError):
                    exc.add_note(f"in {tasklets[level].owner}, method transform_batch (generated loop)")
                origin = vts[level].name if level is not None else self.sender_counts_vertex or vts[-1].name
                mark_origin(exc, origin, g)
                raise
            for i, t in enumerate(tasklets):
                t.metrics.received[next(iter(vts[i].priorities))] += counts[i]
                t.metrics.emitted[0] += counts[i + 1]
        if self.sender_counts_vertex:
            name = self.sender_counts_vertex
            counters[(name, g, RECEIVED, 0)] = counts[-1]
            counters[(name, g, EMITTED, 0)] = len(acc)
        yield from accumulated_records(spec, g, acc)  # type: ignore[arg-type]


@contextmanager
def _initialised(vt: VertexTask, g: int, counters: dict) -> Iterator[Any]:
    """The ``ProcessorTasklet`` of processor g of ``vt``, initialised; on leaving, its inbound edge is done and
    ``complete_edge``/``complete`` run (``run_steps``), then the processor and its supplier are closed."""
    from processors.execution.staged import run_steps
    from processors.execution.tasklet import ProcessorTasklet

    with _opened(vt, g, counters) as (processor, ctx, metrics):
        tasklet = ProcessorTasklet(processor, ctx, inbound_priorities=vt.priorities,
                                   outbound_capacities=vt.capacities, metrics=metrics, vertex_name=vt.name)
        failure: BaseException | None = None
        try:
            for _ in run_steps(tasklet):  # init: a BatchTransform emits nothing outside transform_batch
                pass
            yield tasklet
            for o in vt.priorities:
                tasklet.edge_done(o)
            for _ in run_steps(tasklet):
                pass
        except BaseException as exc:
            failure = exc
            raise
        finally:
            tasklet.close(failure)


def _on_ordinal(ordinal: int, stream: Iterable[tuple[int, list]]) -> Iterator[tuple[int, list]]:
    """The batches of ``stream`` as arriving on inbound ``ordinal`` (the fused edge's). A function, so that each
    vertex of a chain keeps its own ordinal: a generator expression in the chain loop would read the loop
    variable when it runs, i.e. the ordinal of the chain's last vertex."""
    return ((ordinal, batch) for _, batch in stream)


def _with_broadcasts(vt: VertexTask, g: int, main: Iterable[tuple[int, list]]) -> Iterable[tuple[int, list]]:
    """Merge broadcast inputs into the (priority-ordered) main stream, keeping priorities non-decreasing."""
    if not vt.broadcasts:
        return main  # no extra generator level: chains nest one generator less per vertex
    return _merged_broadcasts(vt, g, main)


def _merged_broadcasts(vt: VertexTask, g: int, main: Iterable[tuple[int, list]]) -> Iterator[tuple[int, list]]:
    member = g // vt.local_parallelism
    pending = sorted(vt.broadcasts, key=lambda b: (b.priority, b.ordinal))

    def flush(up_to: float) -> Iterator[tuple[int, list]]:
        while pending and pending[0].priority <= up_to:
            b = pending.pop(0)
            for batch in b.handle.value.get(member if b.per_member else 0, ()):
                yield b.ordinal, batch

    priorities = vt.priorities
    for ordinal, batch in main:
        if pending:
            yield from flush(priorities[ordinal])
        yield ordinal, batch
    yield from flush(float("inf"))


def _contexts(vt: VertexTask, g: int) -> tuple[Any, Any]:
    from processors.api.context import vertex_contexts

    return vertex_contexts(vt.name, g, vt.local_parallelism, vt.members, job_id=vt.job_id,
                           processing_guarantee=vt.guarantee,
                           driver=vt.channel.client() if vt.channel is not None else None)  # map lookups (map.get)


def _run_vertex(vt: VertexTask, g: int, stream: Iterator, counters: dict) -> Iterator[tuple[int, list]]:
    if vt.kind is VertexKind.PROCESSOR and vt.combine is None:
        return _run_processor(vt, g, stream, counters)
    if vt.combine is not None:
        return _run_combine(vt, g, stream, counters)
    return _pass_through(vt, g, stream, counters)  # driver and text sinks: their input, flattened by the stage


def _run_processor(vt: VertexTask, g: int, stream: Iterator, counters: dict) -> Iterator[tuple[int, list]]:
    from processors.execution.staged import drive

    with _opened(vt, g, counters) as (processor, ctx, metrics):
        yield from drive(processor, ctx, inbound=stream, inbound_priorities=vt.priorities,
                         outbound_capacities=vt.capacities, metrics=metrics, vertex_name=vt.name,
                         inbound_senders={o: senders[g] for o, senders in vt.senders.items()})


@contextmanager
def _opened(vt: VertexTask, g: int, counters: dict) -> Iterator[tuple[Any, Any, Any]]:
    """Processor g of ``vt`` from its member's supplier (``init``, ``get``, the siblings closed), with its log
    records forwarded; yields ``(processor, context, metrics)``; records the metrics and closes the supplier."""
    from processors.execution.lifecycle import ProcessorMetrics, open_processors

    supplier_ctx, ctx = _contexts(vt, g)
    supplier = vt.suppliers[g // vt.local_parallelism]  # type: ignore[index]
    failure: BaseException | None = None
    metrics = ProcessorMetrics()
    try:
        supplier.init(supplier_ctx)
        mine = g % vt.local_parallelism  # this task runs one of the member's L processors
        processor = open_processors(supplier, vt.local_parallelism, vt.name, keep={mine})[mine]
        level = vt.log_levels[g] if vt.log_levels is not None else None
        with forwarding(ctx.logger, vt.channel, level):
            yield processor, ctx, metrics
    except BaseException as exc:
        failure = exc
        mark_origin(exc, vt.name, g)
        raise
    finally:
        _record(counters, vt.name, g, metrics.received, metrics.emitted)
        try:
            supplier.close(failure)
        except Exception as exc:  # noqa: BLE001 - never hide the original failure
            if failure is None:
                mark_origin(exc, vt.name, g)
                raise
            _log.warning("ProcessorSupplier.close() of vertex '%s' failed after an earlier failure: %r", vt.name, exc)


def _record(counters: dict, vertex: str, g: int, received: dict, emitted: dict) -> None:
    for o, n in received.items():
        counters[(vertex, g, RECEIVED, o)] = counters.get((vertex, g, RECEIVED, o), 0) + n
    for o, n in emitted.items():
        counters[(vertex, g, EMITTED, o)] = counters.get((vertex, g, EMITTED, o), 0) + n


def _chunks(items: list, size: int) -> Iterator[list]:
    if len(items) <= size:
        if items:
            yield items
        return
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _emit_everywhere(vt: VertexTask, g: int, batches: Iterable[list], counters: dict,
                     received: dict | None = None) -> Iterator[tuple[int, list]]:
    emitted = dict.fromkeys(range(len(vt.capacities)) if vt.emit_only is None else (vt.emit_only,), 0)
    for batch in batches:
        for o in emitted:
            emitted[o] += len(batch)
            yield o, batch
    _record(counters, vt.name, g, received or {}, emitted)


def _driver_source(vt: VertexTask, g: int, records: Iterator[list], counters: dict) -> Iterator[tuple[int, list]]:
    size = min(vt.capacities) if vt.capacities else 1024
    parts = dealt_chunks(vt.channel, vt.name, vt.emit_only, g) if vt.dealt else records
    batches = (chunk for part in parts for chunk in _chunks(part, size))
    return _emit_everywhere(vt, g, batches, counters)


def _text_source(vt: VertexTask, g: int, records: Iterator[str], counters: dict) -> Iterator[tuple[int, list]]:
    size = min(vt.capacities) if vt.capacities else 1024

    def batches() -> Iterator[list]:
        while True:
            batch = list(islice(records, size))
            if not batch:
                return
            yield batch

    return _emit_everywhere(vt, g, batches(), counters)


def _pass_through(vt: VertexTask, g: int, stream: Iterator, counters: dict) -> Iterator[tuple[int, list]]:
    received: dict[int, int] = dict.fromkeys(vt.priorities, 0)
    for ordinal, batch in stream:
        if not is_items(batch):
            continue  # a sink keeps items only
        received[ordinal] = received.get(ordinal, 0) + len(batch)
        yield ordinal, batch
    _record(counters, vt.name, g, received, {})


def _run_combine(vt: VertexTask, g: int, stream: Iterator, counters: dict) -> Iterator[tuple[int, list]]:
    """A by-key aggregator whose input was pre-aggregated: combine the ``(key, acc)`` entries, emit as it would."""
    pre = vt.combine
    op = pre.operation
    combine, missing = op.combine_fn, object()
    acc: dict = {}
    received = 0
    try:
        for _, batch in stream:
            received += len(batch)
            for k, a in batch:
                cur = acc.get(k, missing)
                acc[k] = a if cur is missing else combine(cur, a)
        if pre.receiver_output == "entry":
            out = list(acc.items())
        else:
            out = without_none(grouped_outputs(acc, op.finish_fn, pre.map_to_output_fn))
    except BaseException as exc:
        mark_origin(exc, vt.name, g)
        raise
    size = min(vt.capacities) if vt.capacities else 1024
    yield from _emit_everywhere(vt, g, _chunks(out, size), counters, {0: received})
