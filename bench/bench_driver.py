"""Micro-benchmark: items per second through ``processors.execution.staged.drive`` versus a plain Python loop.

Three ways to run the same three functions (lower-case a line, drop comment lines, split into words) over the
same lines:

- ``plain loop``: a ``for`` loop calling the functions, the yardstick;
- ``built-in chain``: ``map_p -> filter_p -> flat_map_p``, three processors, each run by ``drive`` and fed the
  batches the previous one yields (the driver's ``BatchTransform`` fast path, as a fused Spark task runs them);
- ``AbstractProcessor``: one user processor doing all three in ``try_process0`` with a ``flat_mapper``,
  through the generic inbox/outbox path.

Throughput counts input lines per second (median of ``--repeat`` interleaved runs after a warm-up); the words
produced are checked to be identical.

Run: ``.venv/bin/python bench/bench_driver.py [--lines N] [--batch B] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from processors.api.context import Context  # noqa: E402
from processors.execution.staged import drive  # noqa: E402
from processors.api.processor import AbstractProcessor  # noqa: E402
from processors.library.stateless import filter_p, flat_map_p, map_p  # noqa: E402

lower = str.lower
split = str.split


def not_comment(line: str) -> bool:
    return not line.startswith("#")


def make_lines(n: int) -> list[str]:
    words = "The quick Brown fox jumps over the lazy Dog while it rains in Spain".split()
    return [("# " if i % 10 == 0 else "") + " ".join(words[(i + j) % len(words)] for j in range(8)) for i in range(n)]


def plain_loop(lines: list[str], batch: int) -> list[str]:
    out: list[str] = []
    extend = out.extend
    for line in lines:
        y = lower(line)
        if y is not None and not_comment(y):
            extend(split(y))
    return out


def batches(lines: list[str], size: int) -> Iterator[tuple[int, list]]:
    for i in range(0, len(lines), size):
        yield 0, lines[i:i + size]


def run_driven(processor, inbound: Iterable[tuple[int, list]], capacity: int) -> Iterator[tuple[int, list]]:
    return drive(processor, Context(), inbound=inbound, inbound_priorities={0: 0}, outbound_capacities=[capacity])


def builtin_chain(lines: list[str], batch: int) -> list[str]:
    stream: Iterable[tuple[int, list]] = batches(lines, batch)
    for supplier in (map_p(lower), filter_p(not_comment), flat_map_p(split)):
        stream = run_driven(supplier(), stream, batch)
    out: list[str] = []
    for _ordinal, items in stream:
        out.extend(items)
    return out


class LowerFilterSplitP(AbstractProcessor):
    """The three functions in one user processor."""

    def __init__(self):
        super().__init__()
        self.words = self.flat_mapper(self.transform)

    @staticmethod
    def transform(line: str):
        y = lower(line)
        return split(y) if y is not None and not_comment(y) else ()

    def try_process0(self, item) -> bool:
        return self.words.try_process(item)


def abstract_processor(lines: list[str], batch: int) -> list[str]:
    out: list[str] = []
    for _ordinal, items in run_driven(LowerFilterSplitP(), batches(lines, batch), batch):
        out.extend(items)
    return out


def measure(variants: dict[str, Callable[[list[str], int], list[str]]], lines: list[str], batch: int,
            repeat: int) -> dict[str, float]:
    """Lines per second of each variant: median of ``repeat`` runs, interleaved so machine noise hits all alike."""
    expected = plain_loop(lines, batch)
    for name, fn in variants.items():  # warm-up and correctness check
        if fn(lines, batch) != expected:
            raise SystemExit(f"{name} produced different output from the plain loop")
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
            start = time.perf_counter()
            fn(lines, batch)
            times[name].append(time.perf_counter() - start)
    return {name: len(lines) / statistics.median(t) for name, t in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=300_000, help="input lines (default 300000)")
    parser.add_argument("--batch", type=int, default=1024, help="inbound batch size and outbox capacity")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per variant (median)")
    args = parser.parse_args(argv)
    lines = make_lines(args.lines)
    rates = measure({"plain loop": plain_loop, "built-in chain": builtin_chain,
                     "AbstractProcessor": abstract_processor}, lines, args.batch, args.repeat)
    base = rates["plain loop"]
    print(f"{args.lines} lines, batch {args.batch}, median of {args.repeat} interleaved runs, "
          f"Python {sys.version.split()[0]}")
    print(f"| {'variant':<18} | {'lines/s':>12} | {'vs plain loop':>13} |")
    print(f"|{'-' * 20}|{'-' * 14}|{'-' * 15}|")
    for name, rate in rates.items():
        print(f"| {name:<18} | {rate:>12,.0f} | {rate / base:>12.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
