"""CPU per item of a partitioned edge's router (``dag/runtime/common/senders.py`` ``Router``), no Spark.

Routes ``--items`` items in batches of ``--batch`` (a busy pipelined task's rounds) over a distributed
partitioned edge into two processors, with the default partitioner, for key streams of different cardinality:
``unique ints`` (every key new: ids, sequence numbers, timestamps), ``1000 ints``, ``50000 strs``. Prints the
median ``time.process_time`` per item of ``--repeat`` runs.

Usage::

    .venv/bin/python bench/bench_router.py [--items 2000000] [--batch 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dag.planner import EdgeOp, Route  # noqa: E402
from dag.runtime.common.senders import Router, SenderSpec  # noqa: E402
from edges import Partitioner  # noqa: E402

STREAMS = {
    "unique ints": lambda item: item[1],
    "1000 ints": lambda item: item[1] % 1000,
    "50000 strs": lambda item: str(item[1] % 50000),
}


def route_all(key_fn, items: list, batch: int) -> float:
    """CPU seconds per item to route ``items`` in batches of ``batch`` with a fresh router."""
    spec = SenderSpec(op=EdgeOp.PARTITION_BY, route=Route.PARTITIONED_ALL, dest_ordinal=0, ls=1, ld=1, members=2,
                      partition_count=271, queue_size=1024, key_fn=key_fn, partitioner=Partitioner.default(),
                      member=0, edge_name="between(map, count)")
    router = Router(spec, 0)
    start = time.process_time()
    for s in range(0, len(items), batch):
        router.route(items[s:s + batch])
    return (time.process_time() - start) / len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=2_000_000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    items = [(0, i) for i in range(args.items)]
    for name, key_fn in STREAMS.items():
        runs = [route_all(key_fn, items, args.batch) for _ in range(args.repeat)]
        print(f"{name:12s} {statistics.median(runs) * 1e9:7.0f} ns/item (runs: "
              f"{', '.join(f'{r * 1e9:.0f}' for r in runs)})")


if __name__ == "__main__":
    main()
