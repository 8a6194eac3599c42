"""Micro-benchmark: items per second through two-stage sliding window aggregation versus a plain Python loop.

The same stream (``--events`` events ``(key, timestamp_ms)`` over ``--keys`` keys, ``--rate`` events per second of
event time, timestamps in order) is counted per key in 1 s windows sliding by 100 ms, two ways:

- ``plain loop``: a hand-written dict-of-frames loop, the yardstick: each event is counted into
  ``frames[frame_end][key]``; at every frame boundary the running window adds its leading frame, emits the list
  of ``(window_end, key, count)`` of its keys and deducts its trailing frame;
- ``single-stage processor`` (for comparison): ``aggregate_to_sliding_window_p`` driven the same way;
- ``two-stage processors``: ``accumulate_by_frame_p`` -> ``combine_to_sliding_window_p`` with ``counting()``,
  driven in-process: inbound batches of ``--batch`` items go to ``process``, a ``Watermark`` at every frame
  boundary to ``try_process_watermark`` (retried until done), outboxes of ``--batch`` slots drained after every
  call, stage 1's output fed to stage 2 as a runtime would; results are ``TimestampedEntry(end, key, count)``.

Both produce the same windows (checked in a warm-up run); the timed runs hand every result list to a sink that
drops it, as a real sink consumes results (keeping millions alive would time the garbage collector instead).
Throughput counts input events per second of this process's CPU time
(``time.process_time``: the shared machine's other jobs inflate wall time unevenly), median of ``--repeat``
interleaved runs after a warm-up. Floor (issue 10): the processors reach at least half the plain loop's rate.

Run: ``.venv/bin/python bench/bench_windows.py [--events N] [--keys K] [--rate R] [--batch B] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from processors.context import Context  # noqa: E402
from processors.functions import entry_key, entry_value  # noqa: E402
from processors.inbox import Inbox  # noqa: E402
from processors.outbox import Outbox  # noqa: E402
from processors.aggregations import counting  # noqa: E402
from processors.sliding_window import (accumulate_by_frame_p, aggregate_to_sliding_window_p,  # noqa: E402
                                       combine_to_sliding_window_p)
from processors.watermark import Watermark  # noqa: E402
from processors.windows import TimestampKind, sliding_win_policy  # noqa: E402

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
        end = min(frames) if next_end is None and frames else next_end
        while end is not None and end <= wm:
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
        next_end = wm - wm % SLIDE_MS + SLIDE_MS


class _Stage:
    """One processor driven in-process: items and watermarks in, drained outbox items out."""

    def __init__(self, supplier: Any, capacity: int):
        self.processor = supplier()
        self.outbox = Outbox([capacity])
        self.processor.init(self.outbox, Context())
        self.inbox = Inbox()

    def items(self, items: list, sink: Callable[[list], None]) -> None:
        inbox, processor, outbox = self.inbox, self.processor, self.outbox
        inbox._items.extend(items)
        while inbox._items:
            outbox.reset()
            processor.process(0, inbox)
            drained = outbox.drain(0)
            if drained:
                sink(drained)

    def watermark(self, wm: Watermark, sink: Callable[[list], None]) -> None:
        processor, outbox = self.processor, self.outbox
        while True:
            outbox.reset()
            done = processor.try_process_watermark(wm)
            drained = outbox.drain(0)
            if drained:
                sink(drained)
            if done:
                return


def _without_watermark(items: list) -> tuple[list, Watermark | None]:
    """Split what one processor call emitted into its items and the watermark it forwarded (a windowing processor
    forwards a watermark last, after the windows it released, so only the last item can be one)."""
    if items and items[-1].__class__ is Watermark:
        return items[:-1], items[-1]
    return items, None


def two_stage(stream: list[Any], batch: int, sink: Callable[[list], None]) -> None:
    policy = sliding_win_policy(WINDOW_MS, SLIDE_MS)
    stage1 = _Stage(accumulate_by_frame_p(entry_key, entry_value, TimestampKind.EVENT, policy, counting()), batch)
    stage2 = _Stage(combine_to_sliding_window_p(policy, counting()), batch)

    def to_output(items: list) -> None:
        sink(_without_watermark(items)[0])

    def to_stage2(items: list) -> None:
        entries, watermark = _without_watermark(items)
        if entries:
            stage2.items(entries, to_output)
        if watermark is not None:
            stage2.watermark(watermark, to_output)

    for step in stream:
        if step.__class__ is list:
            stage1.items(step, to_stage2)
        else:
            stage1.watermark(step, to_stage2)


def _collected(fn: Callable[[list, int, Callable[[list], None]], None], stream: list, batch: int) -> list:
    out: list = []
    fn(stream, batch, out.extend)
    return sorted(e if len(e) == 3 else (e.timestamp, e.key, e.value) for e in out)


def _discard(items: list) -> None:
    """The timed runs' sink: results are consumed (as a sink would) and not kept alive."""


def single_stage(stream: list[Any], batch: int, sink: Callable[[list], None]) -> None:
    """For comparison: ``aggregate_to_sliding_window_p`` alone (no stage-1 -> stage-2 hop)."""
    policy = sliding_win_policy(WINDOW_MS, SLIDE_MS)
    stage = _Stage(aggregate_to_sliding_window_p(entry_key, entry_value, TimestampKind.EVENT, policy, counting()),
                   batch)

    def to_output(items: list) -> None:
        sink(_without_watermark(items)[0])

    for step in stream:
        if step.__class__ is list:
            stage.items(step, to_output)
        else:
            stage.watermark(step, to_output)


def measure(variants: dict[str, Callable[[list, int, Callable[[list], None]], None]], stream: list, events: int,
            batch: int, repeat: int) -> tuple[dict[str, float], int]:
    """Events per second of each variant: median of ``repeat`` interleaved runs; and the number of results."""
    expected = _collected(plain_loop, stream, batch)
    for name, fn in variants.items():  # warm-up and correctness check
        if _collected(fn, stream, batch) != expected:
            raise SystemExit(f"{name} produced different windows from the plain loop")
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
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
    args = parser.parse_args(argv)
    stream = make_stream(args.events, args.keys, args.rate, args.batch)
    variants = {"plain loop": plain_loop, "two-stage processors": two_stage, "single-stage processor": single_stage}
    rates, results = measure(variants, stream, args.events, args.batch, args.repeat)
    base = rates["plain loop"]
    print(f"{args.events} events, {args.keys} keys, {args.rate} events/s of event time, {WINDOW_MS} ms windows "
          f"sliding by {SLIDE_MS} ms, counting(), {results} window results, batch {args.batch}, median of "
          f"{args.repeat} interleaved runs (CPU time), Python {sys.version.split()[0]}")
    print(f"| {'variant':<22} | {'events/s':>12} | {'vs plain loop':>13} |")
    print(f"|{'-' * 24}|{'-' * 14}|{'-' * 15}|")
    for name, rate in rates.items():
        print(f"| {name:<22} | {rate:>12,.0f} | {rate / base:>12.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
