"""What watching costs: bench_streaming's throughput job with the web page open and Prometheus scraping, against
the same job unwatched (target: within 3%).

One engine with the page on (``EngineConfig(web_ui_port=0)``), ``local[2]`` unless ``--master`` says otherwise.
The job is bench_streaming's source -> map -> distributed partitioned keyed count over ``--items`` items; its
rate is items / (job wall time - the wall time of the same job with no items), medians of ``--repeat`` runs.
Watched and unwatched runs alternate, in the order ABBA... (so neither is always the run after the other, and a
change of the machine's load hits both). "Watched" means a thread
doing what an open job page does (``GET /api/jobs/<id>/dag.svg`` once, which runs graphviz, then ``GET
/api/jobs/<id>`` every second; ``app.js`` rewrites the picture's labels itself) plus a Prometheus scrape
(``GET /metrics``) every second, all with the token, on the running job.

On a busy machine the throughput of single runs varies far more than 3%, so the bench also reports what the
watching costs whatever the load: the CPU time of the driver process (where the page is served; the tasks run
in Spark's Python workers) and of its graphviz runs per second of job, watched and unwatched; their difference
over the machine's cores is the share of the machine that serving the page and the scrapes took.

Run: ``.venv/bin/python bench/bench_web_ui.py [--items N] [--repeat R] [--master URL]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

from bench_streaming import PIPELINED, keyed_count_dag, load_average, timed_job  # noqa: E402

from dag import Engine, EngineConfig  # noqa: E402


class Watcher:
    """Polls the newest job's page data and ``/metrics`` once a second while it runs (see the docstring)."""

    def __init__(self, engine: Engine):
        url = urlsplit(engine.web_ui_url)
        self.engine, self.base = engine, f"{url.scheme}://{url.netloc}"
        self.token = url.query.removeprefix("token=")
        self.stop = threading.Event()
        self.requests = 0
        self.drawn: set[int] = set()  # jobs whose picture the "page" fetched
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _get(self, path: str) -> None:
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
        self.requests += 1

    def _loop(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            jobs = self.engine.get_jobs()
            if jobs:
                job_id = jobs[-1].id
                if job_id not in self.drawn:
                    self.drawn.add(job_id)
                    self._get(f"/api/jobs/{job_id}/dag.svg")
                self._get(f"/api/jobs/{job_id}")
                self._get("/metrics")
            self.stop.wait(max(0.0, 1.0 - (time.monotonic() - started)))

    def __enter__(self) -> "Watcher":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=60)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--items", type=int, default=2_000_000, help="items of the throughput job")
    parser.add_argument("--repeat", type=int, default=5, help="runs per mode (watched, unwatched)")
    args = parser.parse_args(argv)
    config = EngineConfig(master=args.master, web_ui_port=0,
                          spark_conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    print(f"load average before: {load_average()}", flush=True)
    times: dict[str, list[float]] = {"unwatched": [], "watched": []}
    cpu: dict[str, list[float]] = {"unwatched": [], "watched": []}  # driver CPU s per job s
    empty: list[float] = []
    requests = 0
    with Engine(config) as engine:
        timed_job(engine, keyed_count_dag(1000, "warm"), PIPELINED)
        for i in range(args.repeat):
            empty.append(timed_job(engine, keyed_count_dag(0, "empty"), PIPELINED))
            for mode in ("unwatched", "watched")[::1 if i % 2 == 0 else -1]:  # ABBA: neither is always second
                engine.get_list("counts").clear()
                before = _driver_cpu()
                if mode == "watched":
                    with Watcher(engine) as watcher:
                        times[mode].append(timed_job(engine, keyed_count_dag(args.items, "counts"), PIPELINED))
                    requests += watcher.requests
                else:
                    times[mode].append(timed_job(engine, keyed_count_dag(args.items, "counts"), PIPELINED))
                cpu[mode].append((_driver_cpu() - before) / times[mode][-1])
                counts = dict(engine.get_list("counts"))
                assert sum(counts.values()) == args.items, "wrong counts"
    print(f"load average after: {load_average()}")
    startup = statistics.median(empty)
    rates = {mode: args.items / max(statistics.median(t) - startup, 1e-9) for mode, t in times.items()}
    print(f"master {args.master}, {args.items:,} items, {args.repeat} runs per mode, job start-up {startup:.2f} s "
          f"excluded; {requests} requests answered while watched")
    print("| run | items/s (median) | job wall s per run |")
    print("|---|---|---|")
    for mode, t in times.items():
        print(f"| {mode} | {rates[mode]:,.0f} | {', '.join(f'{x:.2f}' for x in t)} |")
    print(f"| watched / unwatched | {rates['watched'] / rates['unwatched']:.3f} | |")
    extra = statistics.median(cpu["watched"]) - statistics.median(cpu["unwatched"])
    cores = os.cpu_count() or 1
    print(f"driver CPU per job second (median): unwatched {statistics.median(cpu['unwatched']):.3f} s, watched "
          f"{statistics.median(cpu['watched']):.3f} s: watching took {extra:.3f} core = {100 * extra / cores:.2f}% "
          f"of the machine's {cores} cores")
    return 0


def _driver_cpu() -> float:
    """User + system CPU seconds so far of this (the driver's) process and of its children that ended (the
    graphviz runs; Spark's JVM runs on until the engine closes, so it is not counted)."""
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))


if __name__ == "__main__":
    sys.exit(main())
