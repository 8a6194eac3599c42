"""Reliability figures: how fast a job stops after cancel() or a user failure, and that nothing is published.

``.venv/bin/python bench/bench_reliability.py [--runs N]`` runs on ``local[2]`` a job that reads a list, maps
slowly and writes with ``write_file_p``; per run it measures

- cancel: seconds from ``job.cancel()`` (issued while the sink is writing) to ``join()`` returning, and
  whether any file exists in the output directory then and 3 s later (there must be none);
- failure: seconds from the moment a processor raises to ``join()`` raising ``JobFailedError``, and the same
  check for published or staged files.

It prints one table row per kind (median and max over the runs). Not a test: a measurement for the README.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dag import DAG, Engine, EngineConfig, JobFailedError  # noqa: E402
from edges import between  # noqa: E402
from processors import map_p, read_list_p, write_file_p  # noqa: E402


def slow(x):
    time.sleep(0.002)
    if x == -1:
        raise ValueError("boom")
    return str(x)


def failing(stamp_file):
    def fn(x):
        if x == 15_000:
            Path(stamp_file).write_text(repr(time.time()))
            raise ValueError("user failure")
        return slow(x)
    return fn


def dag_for(src, out, fn):
    dag = DAG()
    s = dag.new_vertex("src", read_list_p(src), local_parallelism=2)
    m = dag.new_vertex("map", map_p(fn), local_parallelism=2)
    w = dag.new_vertex("write", write_file_p(out), local_parallelism=2)
    dag.edge(between(s, m)).edge(between(m, w))
    return dag


def wait_writing(out: Path) -> None:
    deadline = time.time() + 120
    while time.time() < deadline:
        staged = [p for d in out.glob(".jetspark-job-*") for p in d.iterdir()] if out.is_dir() else []
        if any(p.stat().st_size > 0 for p in staged):
            return
        time.sleep(0.02)
    raise RuntimeError("the sink never started writing")


def left_over(out: Path) -> int:
    time.sleep(3.0)
    return len(os.listdir(out)) if out.is_dir() else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="jetspark-rel-"))
    cancel_s, fail_s, leftovers = [], [], 0
    with Engine(EngineConfig(master="local[2]")) as engine:
        src = f"nums-{uuid.uuid4().hex}"
        engine.get_list(src).extend(range(40_000))
        for run in range(args.runs):
            out = tmp / f"cancel-{run}"
            job = engine.new_job(dag_for(src, out, slow))
            wait_writing(out)
            t0 = time.perf_counter()
            job.cancel()
            try:
                job.join()
            except JobFailedError:
                pass
            cancel_s.append(time.perf_counter() - t0)
            leftovers += len(os.listdir(out)) + left_over(out)
            out = tmp / f"fail-{run}"
            stamp = tmp / f"stamp-{run}"
            job = engine.new_job(dag_for(src, out, failing(str(stamp))))
            try:
                job.join()
            except JobFailedError:
                fail_s.append(time.time() - float(stamp.read_text()))
            leftovers += len(os.listdir(out)) + left_over(out)
    print(f"{args.runs} runs on local[2], 40,000 items, write_file_p with 2 processors")
    print("| event | join() returned after (median / max) |")
    print("|---|---|")
    print(f"| cancel() while the sink writes | {statistics.median(cancel_s):.2f} s / {max(cancel_s):.2f} s |")
    print(f"| a processor raises | {statistics.median(fail_s):.2f} s / {max(fail_s):.2f} s |")
    print(f"files in the output directories when join() returned and 3 s later: {leftovers}")

if __name__ == "__main__":
    main()
