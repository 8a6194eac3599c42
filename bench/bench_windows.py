"""Micro-benchmark: items per second through two-stage sliding window aggregation versus a plain Python loop.

The same stream (``--events`` events ``(key, timestamp_ms)`` over ``--keys`` keys, ``--rate`` events per second of
event time, timestamps in order, a ``Watermark`` at every frame boundary) is counted per key in 1 s windows
sliding by 100 ms:

- ``plain loop``: a hand-written dict-of-frames loop, the yardstick: each event is counted into
  ``frames[frame_end][key]``; at every watermark each window due adds its leading frame, emits the list of
  ``(window_end, key, count)`` tuples of its keys, deducts its trailing frame and evicts it; at the end of the
  stream the windows that still hold a frame are emitted (as the processors' ``complete()`` does);
- ``two-stage processors``: ``accumulate_by_frame_p`` -> ``combine_to_sliding_window_p`` with ``counting()``;
- ``single-stage processor`` (for comparison): ``aggregate_to_sliding_window_p``;
- ``pipeline two-stage`` (for comparison): the two vertices the Pipeline API lowers
  ``with_timestamps(entry_value, 0).grouping_key(entry_key).window(sliding(1000, 100)).aggregate(counting())
  .write_to(Sinks.noop())`` to, on the events as the lowered ``add-timestamps`` vertex sends them
  (:func:`pipeline_input`: plain, the timestamps out of band, since only the window reads them; wrapped as
  the pipeline's ``JetEvent`` if the lowering wraps them); its results are ``TimestampedEntry(end, key,
  count)`` (read only by a sink, they travel unwrapped).

The processors run as the pipelined runtime runs them (``_Job``): each in a ``ProcessorTasklet`` inside the
runtime's ``ProcessorRunner``, fed through its ``InboundEdge`` and bounded ``Queue``, sending through its
``Router`` (a partitioned edge keyed by ``entry_key`` between the stages), outboxes of ``--batch`` slots; the
source offers the stream's batches and watermarks to the first queue. Results are ``TimestampedEntry(end, key,
count)``. Every variant produces the same windows (checked in a warm-up run); the timed runs hand every result
list to a sink that drops it, as a real sink consumes results.

The input stream, built before timing, is moved out of the garbage collector's sight (``gc.freeze()``; a source's
input is not in a processor's heap): the processors' ``TimestampedEntry`` results, tuple subclasses that the
collector never untracks, trigger full collections, and each full collection would otherwise walk the 400,000
input tuples (about 20 ms each, 3 per run). ``--no-freeze`` measures with them.

Throughput counts input events per second of this process's CPU time (``time.process_time``: the shared
machine's other jobs inflate wall time unevenly), median of ``--repeat`` interleaved runs after a warm-up.
Floor (issue 10): the two-stage processors reach at least half the plain loop's rate.

Run: ``.venv/bin/python bench/bench_windows.py [--events N] [--keys K] [--rate R] [--batch B] [--repeat R]
[--no-freeze]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dag.planner.physical_plan import EdgeOp, Route  # noqa: E402
from dag.runtime.pipelined.queues import InboundEdge, Queue  # noqa: E402
from processors.execution.lifecycle import DONE  # noqa: E402
from dag.runtime.pipelined.runner import ProcessorRunner, _Outbound  # noqa: E402
from dag.runtime.common.senders import Router, SenderSpec  # noqa: E402
from edges.partitioner import Partitioner  # noqa: E402
from pipeline import Pipeline, Sinks, Sources, WindowDefinition  # noqa: E402
from pipeline.events import JetEvent  # noqa: E402
from processors.aggregate.aggregations import counting  # noqa: E402
from processors.api.context import Context  # noqa: E402
from processors.api.outbox import Outbox  # noqa: E402
from processors.api.functions import entry_key, entry_value  # noqa: E402
from processors.library.stateless import map_p  # noqa: E402
from processors.windowing.sliding_window import (accumulate_by_frame_p, aggregate_to_sliding_window_p,  # noqa: E402
                                       combine_to_sliding_window_p)
from processors.execution.tasklet import PIPELINED, ProcessorTasklet  # noqa: E402
from processors.api.watermark import Watermark  # noqa: E402
from processors.windowing.definitions import TimestampKind, sliding_win_policy  # noqa: E402

WINDOW_MS, SLIDE_MS = 1000, 100


def make_stream(events: int, keys: int, rate: int, batch: int) -> list[Any]:
    """Batches (lists) of ``(key, ts)`` events, with a ``Watermark`` after the last event before each frame
    boundary (the watermark a source with no lag emits when the stream crosses the boundary)."""
    rnd = random.Random(1)
    steps: list[Any] = []
    current: list = []
    next_boundary = SLIDE_MS
    for i in range(events):
        ts = i * 1000 // rate
        while ts >= next_boundary:
            if current:
                steps.append(current)
                current = []
            steps.append(Watermark(next_boundary))
            next_boundary += SLIDE_MS
        current.append((rnd.randrange(keys), ts))
        if len(current) == batch:
            steps.append(current)
            current = []
    if current:
        steps.append(current)
    return steps


def plain_loop(stream: list[Any], batch: int, sink: Callable[[list], None]) -> None:
    frames: dict[int, dict] = {}
    window: dict = {}
    next_end = None
    frames_per_window = WINDOW_MS // SLIDE_MS

    def emit_windows(end: int | None, last: int) -> None:
        while end is not None and end <= last:
            for key, count in frames.get(end, {}).items():  # add the leading frame
                window[key] = window.get(key, 0) + count
            sink([(end, key, count) for key, count in window.items()])
            trailing = frames.pop(end - (frames_per_window - 1) * SLIDE_MS, None)
            for key, count in (trailing or {}).items():  # deduct the trailing frame
                left = window[key] - count
                if left:
                    window[key] = left
                else:
                    del window[key]
            end += SLIDE_MS

    for step in stream:
        if step.__class__ is list:
            for key, ts in step:
                frame_end = ts - ts % SLIDE_MS + SLIDE_MS
                frame = frames.get(frame_end)
                if frame is None:
                    frame = frames[frame_end] = {}
                frame[key] = frame.get(key, 0) + 1
            continue
        wm = step.timestamp
        emit_windows(min(frames) if next_end is None and frames else next_end, wm)
        next_end = wm - wm % SLIDE_MS + SLIDE_MS
    if frames:  # end of the stream: every window that holds a remaining frame
        emit_windows(min(frames) if next_end is None else next_end, max(frames) + WINDOW_MS - SLIDE_MS)


class _Job:
    """A chain of processors run by the pipelined runtime's own machinery, in this process and thread: each one a
    ``ProcessorTasklet`` (the ``PIPELINED`` policy) wrapped in the runtime's ``ProcessorRunner``, fed through an
    ``InboundEdge`` of bounded ``Queue``s (the queue-level watermark coalescing included) and sending through the
    runtime's ``Router``: a partitioned edge keyed by ``entry_key`` between the stages (with one processor per
    vertex the router still extracts and checks every key, as Jet does), one-to-one into the sink. The source
    offers the stream's batches and watermarks to the first queue as a source's runner would; the runners are
    stepped round-robin, as the cooperative scheduler of a task does, until the end-of-stream mark has gone
    through. The sink receives every item list the last processor emitted."""

    def __init__(self, suppliers: list, batch: int, sink: Callable[[list], None]):
        wake = threading.Event()
        self.head = Queue(wake)
        self.runners: list[ProcessorRunner] = []
        inbound = self.head
        for i, supplier in enumerate(suppliers):
            last = i == len(suppliers) - 1
            name = f"stage{i + 1}"
            tasklet = ProcessorTasklet(supplier(), Context(vertex_name=name), inbound_priorities={0: 0},
                                       outbound_capacities=[batch], vertex_name=name, policy=PIPELINED)
            if last:
                spec = SenderSpec(EdgeOp.FUSED, Route.SAME, 0, ls=1, ld=1, members=1, partition_count=271,
                                  queue_size=batch)
                deliver = _sink_deliverer(sink)
            else:
                spec = SenderSpec(EdgeOp.PARTITION_BY, Route.PARTITIONED_ALL, 0, ls=1, ld=1, members=1,
                                  partition_count=271, queue_size=batch, key_fn=entry_key,
                                  partitioner=Partitioner.default())
                target = Queue(wake)
                deliver = _queue_deliverer(target)
            self.runners.append(ProcessorRunner(name, 0, tasklet, {0: InboundEdge(0, [inbound], None)},
                                                [_Outbound(Router(spec, 0), deliver)]))
            if not last:
                inbound = target

    def run(self, stream: list) -> None:
        head, runners = self.head, self.runners
        entries = iter(stream)
        entry = next(entries, DONE)
        try:
            while not runners[-1].finished:
                while entry is not None and head.offer(entry):  # the source: as much as the queue takes
                    entry = None if entry is DONE else next(entries, DONE)
                for runner in runners:
                    runner.run_once()
        finally:
            for runner in runners:
                runner.tasklet.close(None)


def _queue_deliverer(queue: Queue) -> Callable[[int, Any], bool]:
    return lambda target, entry: queue.offer(entry)


def _sink_deliverer(sink: Callable[[list], None]) -> Callable[[int, Any], bool]:
    def deliver(target: int, entry: Any) -> bool:
        if entry.__class__ is list:
            sink(entry)
        return True
    return deliver


def two_stage(stream: list[Any], batch: int, sink: Callable[[list], None]) -> None:
    policy = sliding_win_policy(WINDOW_MS, SLIDE_MS)
    _Job([accumulate_by_frame_p(entry_key, entry_value, TimestampKind.EVENT, policy, counting()),
          combine_to_sliding_window_p(policy, counting())], batch, sink).run(stream)


def single_stage(stream: list[Any], batch: int, sink: Callable[[list], None]) -> None:
    """For comparison: ``aggregate_to_sliding_window_p`` alone (no stage-1 -> stage-2 hop)."""
    policy = sliding_win_policy(WINDOW_MS, SLIDE_MS)
    _Job([aggregate_to_sliding_window_p(entry_key, entry_value, TimestampKind.EVENT, policy, counting())], batch,
         sink).run(stream)


def _lowered_pipeline() -> Any:
    p = Pipeline.create()
    (p.read_from(Sources.stream_from_processor("events", map_p(str))).with_timestamps(entry_value, 0)
     .grouping_key(entry_key).window(WindowDefinition.sliding(WINDOW_MS, SLIDE_MS)).aggregate(counting())
     .write_to(Sinks.noop()))
    return p.to_dag()


def pipeline_suppliers() -> list:
    """The suppliers of the two vertices the Pipeline API lowers a keyed sliding-window count to."""
    dag = _lowered_pipeline()
    return [dag.get_vertex("sliding-window-prepare").supplier, dag.get_vertex("sliding-window").supplier]


def pipeline_input(stream: list) -> list:
    """The stream as the lowered pipeline's ``events-add-timestamps`` vertex sends it to the window: each event
    as that vertex's processor emits it (wrapped as ``JetEvent(timestamp, event)`` or, with the timestamps out
    of band, the plain event)."""
    stamper = _lowered_pipeline().get_vertex("events-add-timestamps").supplier()
    outbox = Outbox([16])
    stamper.init(outbox, Context(vertex_name="events-add-timestamps"))
    stamper.try_process0((0, 0))
    if outbox.drain(0)[-1].__class__ is not JetEvent:
        return stream
    return [[JetEvent(event[1], event) for event in step] if step.__class__ is list else step for step in stream]


def pipeline_two_stage(stream: list[Any], batch: int, sink: Callable[[list], None]) -> None:
    _Job(pipeline_suppliers(), batch, sink).run(stream)


def _collected(fn: Callable[[list, int, Callable[[list], None]], None], stream: list, batch: int) -> list:
    out: list = []
    fn(stream, batch, out.extend)
    entries = (e.item if e.__class__ is JetEvent else e for e in out)
    return sorted(e if e.__class__ is tuple else (e.timestamp, e.key, e.value) for e in entries)


def _discard(items: list) -> None:
    """The timed runs' sink: results are consumed (as a sink would) and not kept alive."""


Variant = Callable[[list, int, Callable[[list], None]], None]


def measure(variants: dict[str, tuple[Variant, list]], events: int, batch: int,
            repeat: int) -> tuple[dict[str, float], int]:
    """Events per second of each variant (run on its stream): median of ``repeat`` interleaved runs; and the
    number of results."""
    expected = _collected(plain_loop, variants["plain loop"][1], batch)
    for name, (fn, stream) in variants.items():  # warm-up and correctness check
        if _collected(fn, stream, batch) != expected:
            raise SystemExit(f"{name} produced different windows from the plain loop")
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, (fn, stream) in variants.items():
            start = time.process_time()
            fn(stream, batch, _discard)
            times[name].append(time.process_time() - start)
    return {name: events / statistics.median(t) for name, t in times.items()}, len(expected)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=400_000, help="input events (default 400000)")
    parser.add_argument("--keys", type=int, default=10_000, help="distinct keys (default 10000)")
    parser.add_argument("--rate", type=int, default=200_000, help="events per second of event time (default 200000)")
    parser.add_argument("--batch", type=int, default=1024, help="inbound batch size and outbox capacity")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per variant (median)")
    parser.add_argument("--no-freeze", action="store_true",
                        help="leave the input stream in the garbage collector's sight (see the module docstring)")
    args = parser.parse_args(argv)
    stream = make_stream(args.events, args.keys, args.rate, args.batch)
    variants = {"plain loop": (plain_loop, stream), "two-stage processors": (two_stage, stream),
                "single-stage processor": (single_stage, stream),
                "pipeline two-stage": (pipeline_two_stage, pipeline_input(stream))}
    if not args.no_freeze:
        gc.collect()
        gc.freeze()
    load = os.getloadavg()
    rates, results = measure(variants, args.events, args.batch, args.repeat)
    base = rates["plain loop"]
    print(f"{args.events} events, {args.keys} keys, {args.rate} events/s of event time, {WINDOW_MS} ms windows "
          f"sliding by {SLIDE_MS} ms, counting(), {results} window results, batch {args.batch}, median of "
          f"{args.repeat} interleaved runs (CPU time), input {'not ' if args.no_freeze else ''}frozen out of the GC, "
          f"Python {sys.version.split()[0]}, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the start")
    print(f"| {'variant':<22} | {'events/s':>12} | {'vs plain loop':>13} |")
    print(f"|{'-' * 24}|{'-' * 14}|{'-' * 15}|")
    for name, rate in rates.items():
        print(f"| {name:<22} | {rate:>12,.0f} | {rate / base:>12.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
