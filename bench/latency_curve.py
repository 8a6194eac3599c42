"""The pipelined runtime's latency against the offered rate: the curve ``bench_streaming.py --rate`` prints
when given several rates, and its picture.

A sweep first runs the measured pipeline unpaced (its **maximum throughput** on this machine, now), then once
per rate: a rate is items/s, or ``N%`` of that maximum (``10000,100000,80%`` is the issue's sweep). Each run
reports, per hop (the pipeline has two: a local edge and a distributed partitioned edge), the p50/p99/p99.9
of the latency from the time an item was *due* by the source's schedule to the measuring processor, and the
parts of the p99 that tell where a tail comes from:

- ``pacing``: due -> emitted by the source (its scheduler's round, or with ``--threaded-source`` its thread's
  sleep and wake-up; and back-pressure: a pipeline that falls behind holds the source back, and that shows
  here, not as a lower rate);
- ``hop1``: emitted -> the map (the source's outbox, a local queue, the cooperative scheduler's round);
- ``hop2 local`` / ``hop2 remote``: the map -> the measuring processor within a task / across the TCP link
  between the two tasks (router, the link's frames, sent and received by each task's scheduler, queues);
- the garbage collections in the measuring processes (count, total and longest pause, from ``gc.callbacks``).

Next to each rate the **machine's floor** is measured: a plain-Python TCP hop between two processes at the
same rate (``bench_streaming.machine_hop_latency``), the tail any hop gets from the machine's scheduler then.
Next to each ``N%`` rate, the **bare loop at the same load** (``bench_machine.BareLoop``): fixed work, no
pipeline, in one process per task, paced at ``N%`` of its own maximum (measured right after the pipeline's), due
-> done. The hop runs far below the machine's capacity; the bare loop runs as near to it as the pipeline does, so
its tail is what the machine's unsteady speed alone gives any program at that load.
Beside every run once the maximum is known, the **speed probe** (``bench_machine.SpeedProbe``): a process pinned
to each CPU times a fixed loop every 20 ms by its own CPU time. The column gives its median per CPU and the share
of 100 ms windows in which a CPU ran over 1.25x slower or faster than during the maximum's runs: on this machine
each vCPU switches between two speeds 1.6x apart, and a pipelined task's cost per item follows it, so a point
at ``80%`` is at 80% of the maximum only when that share is near zero (bench/README).
With ``--probe`` a thread in each measuring process sleeps 1 ms at a time and records how late it wakes (the
wait for the GIL and a core that any thread waking there has then); :func:`probe_report` prints its percentiles
and, for the worst 100 ms windows of the items' latency, the probe's longest wait in the same window.
The picture (``--plot FILE.svg``) is plain SVG text written here (no plotting library): p50/p99/p99.9 per hop
against the rate (log scale both ways), the floor's p99 dashed, the targets (p99 5 ms, p99.9 10 ms) dotted.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable

__all__ = ["CurvePoint", "parse_rates", "sweep", "probe_report", "format_curve", "curve_svg"]

TARGET_P99_MS, TARGET_P999_MS = 5.0, 10.0


@dataclass
class CurvePoint:
    """One rate of the sweep: per-hop percentiles (ms), the parts' p99 (ms), gc and the machine's floor."""

    offered: int
    delivered: float
    per_hop: tuple[float, float, float]
    parts_p99: dict[str, float]
    gc: tuple[int, float, float]          # collections, total ms, longest ms
    floor: tuple[float, float, float]     # plain TCP hop p50/p99/p99.9, ms
    load: float
    bare_loop: tuple[float, float, float] | None = None  # the bare loop at the same load, due -> done, ms
    speed: str | None = None  # the speed probe per CPU, and the windows off the maximum's speed (format_speed)


def parse_rates(text: str, maximum: Callable[[], float]) -> list[int]:
    """``"10000,100000,80%"`` -> rates in items/s; ``maximum()`` (called once, only when a ``%`` entry is
    there) gives the rate the percentages are of.

    >>> parse_rates("10000,50%", lambda: 800_000)
    [10000, 400000]
    """
    entries = [e.strip() for e in text.split(",") if e.strip()]
    top = maximum() if any(e.endswith("%") for e in entries) else 0.0
    return [int(top * float(e[:-1]) / 100) if e.endswith("%") else int(e) for e in entries]


def point(offered: int, run, floor_us: list[float], percentiles: Callable,
          bare_loop_us: list[int] | None = None) -> CurvePoint:
    """A :class:`CurvePoint` from a ``bench_streaming.LatencyRun``, the floor's latencies and the bare loop's
    (microseconds; ``None`` for a rate given in items/s)."""
    total = percentiles(run.total)
    pauses = [seconds * 1000 for _, seconds in run.gc]
    return CurvePoint(
        offered=offered, delivered=run.rate, per_hop=tuple(v / 2000 for v in total),  # type: ignore[arg-type]
        parts_p99={name: percentiles(values)[1] / 1000 for name, values in run.parts.items() if values},
        gc=(len(pauses), sum(pauses), max(pauses, default=0.0)),
        floor=tuple(v / 1000 for v in percentiles(floor_us)),  # type: ignore[arg-type]
        load=os.getloadavg()[0],
        bare_loop=None if bare_loop_us is None else tuple(v / 1000 for v in percentiles(bare_loop_us)),
        speed=run.speed)


def sweep(engine, rates: list[int], seconds: float, warmup: float, measure: Callable, floor: Callable,
          percentiles: Callable, bare_loop: Callable[[int], list[int] | None] = lambda rate: None) -> list[CurvePoint]:
    """One point per rate: ``measure(engine, rate, seconds, warmup)`` (a ``LatencyRun``),
    ``floor(rate, seconds, warmup)`` (the plain hop's latencies) and ``bare_loop(rate)`` (the bare loop's at the
    same load, or ``None``)."""
    points = []
    for rate in rates:
        run = measure(engine, rate, seconds, warmup)
        points.append(point(rate, run, floor(rate, seconds, warmup), percentiles, bare_loop(rate)))
        print(format_curve(points[-1:], header=False), flush=True)
        if run.probe:
            print(probe_report(run.probe, run.arrivals), flush=True)
    return points


def probe_report(probe: list[tuple[int, int]], arrivals: list[tuple[int, int]], worst: int = 8) -> str:
    """How late the wake probes woke (``(when ns, late us)``) over the run, and in the ``worst`` 100 ms windows
    of the items' latency (``(arrival ns, latency us)``): does a thread of the measuring processes wait long
    exactly when the items do?"""
    late = sorted(us for _, us in probe)
    n = len(late)
    text = (f"wake probe, {n} sleeps of 1 ms: late p50 {late[n // 2] / 1000:.2f}, "
            f"p99 {late[int(n * 0.99)] / 1000:.2f}, p99.9 {late[int(n * 0.999)] / 1000:.2f}, "
            f"max {late[-1] / 1000:.2f} ms")
    window = 100_000_000
    items: dict[int, int] = {}
    for at, us in arrivals:
        items[at // window] = max(items.get(at // window, 0), us)
    waits: dict[int, int] = {}
    for at, us in probe:
        waits[at // window] = max(waits.get(at // window, 0), us)
    ranked = sorted(items, key=items.get, reverse=True)[:worst]  # type: ignore[arg-type]
    pairs = ", ".join(f"{items[k] / 1000:.0f}/{waits.get(k, 0) / 1000:.1f}" for k in ranked)
    typical = sorted(waits.values())[len(waits) // 2] / 1000 if waits else math.nan
    return (f"{text}\nworst 100 ms windows, item latency / longest probe wait (ms): {pairs}; the median window's "
            f"longest probe wait: {typical:.1f} ms")


def format_curve(points: list[CurvePoint], header: bool = True) -> str:
    """The curve as a Markdown table (per-hop figures in ms)."""
    lines = []
    if header:
        lines += ["| offered/s | delivered/s | per hop p50 / p99 / p99.9 | p99 of: pacing, hop1, hop2 local, "
                  "hop2 remote | gc: n, total, longest ms | plain TCP hop p50 / p99 / p99.9 | bare loop at the same "
                  "load, due -> done p50 / p99 / p99.9 | speed probe: median per CPU (100 ms windows 1.25x off the "
                  "maximum's runs) | load |",
                  "|---|---|---|---|---|---|---|---|---|"]
    for p in points:
        bare = "-" if p.bare_loop is None else " / ".join(f"{v:.2f}" for v in p.bare_loop)
        parts = ", ".join(f"{p.parts_p99.get(k, math.nan):.2f}" for k in ("pacing", "hop1", "hop2 local",
                                                                         "hop2 remote"))
        lines.append(f"| {p.offered:,} | {p.delivered:,.0f} | {' / '.join(f'{v:.2f}' for v in p.per_hop)} | {parts} "
                     f"| {p.gc[0]}, {p.gc[1]:.0f}, {p.gc[2]:.1f} | {' / '.join(f'{v:.2f}' for v in p.floor)} "
                     f"| {bare} | {p.speed or '-'} | {p.load:.1f} |")
    return "\n".join(lines)


def curve_svg(points: list[CurvePoint], title: str) -> str:
    """The curve as SVG text: per-hop p50/p99/p99.9 (solid) and the floor's p99 (dashed) against the offered
    rate, log scales; the targets dotted."""
    width, height, left, right, top, bottom = 640, 400, 70, 150, 40, 50
    rates = [p.offered for p in points]
    values = [v for p in points for v in p.per_hop + p.floor[1:2] if v > 0] + [TARGET_P99_MS, TARGET_P999_MS]
    x_lo, x_hi = math.log10(min(rates)) - 0.1, math.log10(max(rates)) + 0.1
    y_lo, y_hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))

    def x(rate: float) -> float:
        return left + (math.log10(rate) - x_lo) / (x_hi - x_lo) * (width - left - right)

    def y(ms: float) -> float:
        return height - bottom - (math.log10(max(ms, 10 ** y_lo)) - y_lo) / (y_hi - y_lo) * (height - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           'font-size="12">', '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="22" font-size="14">{title}</text>']
    for e in range(y_lo, y_hi + 1):  # horizontal grid, one line per decade
        level = y(10 ** e)
        out.append(f'<line x1="{left}" y1="{level:.1f}" x2="{width - right}" y2="{level:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{level + 4:.1f}" text-anchor="end">{10 ** e:g} ms</text>')
    for rate in rates:
        out.append(f'<line x1="{x(rate):.1f}" y1="{top}" x2="{x(rate):.1f}" y2="{height - bottom}" stroke="#eee"/>')
        out.append(f'<text x="{x(rate):.1f}" y="{height - bottom + 16}" text-anchor="middle">'
                   f'{rate / 1000:,.0f}k/s</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">offered rate '
               '(items/s); latency per hop, due -> measuring processor / 2</text>')
    series = [("p50", [p.per_hop[0] for p in points], "#1f77b4", ""),
              ("p99", [p.per_hop[1] for p in points], "#d62728", ""),
              ("p99.9", [p.per_hop[2] for p in points], "#9467bd", ""),
              ("TCP hop p99", [p.floor[1] for p in points], "#7f7f7f", ' stroke-dasharray="6,4"')]
    for target, label in ((TARGET_P99_MS, "target p99"), (TARGET_P999_MS, "target p99.9")):
        out.append(f'<line x1="{left}" y1="{y(target):.1f}" x2="{width - right}" y2="{y(target):.1f}" stroke="#2ca02c" '
                   'stroke-dasharray="2,3"/>')
        out.append(f'<text x="{width - right + 6}" y="{y(target) + 4:.1f}" fill="#2ca02c">{label}</text>')
    for i, (label, ys, color, dash) in enumerate(series):
        path = " ".join(f"{x(r):.1f},{y(v):.1f}" for r, v in zip(rates, ys))
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        out += [f'<circle cx="{x(r):.1f}" cy="{y(v):.1f}" r="3" fill="{color}"/>' for r, v in zip(rates, ys)]
        out.append(f'<text x="{width - right + 6}" y="{top + 60 + 16 * i}" fill="{color}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
