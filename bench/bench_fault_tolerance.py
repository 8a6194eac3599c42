"""Fault tolerance of PIPELINED jobs: a soak run of kill-and-restart rounds, the cost of snapshots, recovery time.

    .venv/bin/python bench/bench_fault_tolerance.py soak [--rounds 100] [--per-job 10] [--kill-every 4] [--members 1,2]
    .venv/bin/python bench/bench_fault_tolerance.py cost [--items 400000] [--repeat 3]
    .venv/bin/python bench/bench_fault_tolerance.py recovery [--faults 5] [--kind error|kill]

- ``soak``: EXACTLY_ONCE jobs over the tutorial's fault-tolerant sequence source; each job injects ``--per-job``
  faults at random items (a ``RestartableError``, every ``--kill-every``-th one a killed Python worker) until
  ``--rounds`` faults ran; prints every job's lost and duplicated item counts and the totals (must be 0 / 0).
  ``--members 1,2`` runs the jobs on one and two members in turn (two engines sharing the session).
- ``cost``: the same job with snapshots every 1 s (EXACTLY_ONCE) and without (NONE), interleaved; prints
  items/s of each and the ratio (floor in the issue: snapshots cost at most 10%).
- ``recovery``: time from a failure (the moment a processor raises) to processing resumed (the first item the failing
  processor handles in the next execution), per fault (``--kind kill``: a killed Python worker instead of a
  ``RestartableError``); floor in the issue: at most 3 s on local[2]. Also prints each restart's timeline.

Not part of CI (it takes minutes and the machine is shared); the figures go into README.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dag import DAG, Engine, EngineConfig, ExecutionMode, JobConfig, ProcessingGuarantee, RestartableError  # noqa: E402
from edges import between  # noqa: E402
from processors import AbstractProcessor, SourceBuilder, write_list_p  # noqa: E402


def sequence(count: int, per_fill: int = 200, pause: float = 0.0):
    """The fault-tolerant sequence source (seed tutorial step 19), bounded to ``count`` items."""

    def fill(state, buf):
        for _ in range(per_fill):
            if state["n"] >= count:
                buf.close()
                return
            buf.add(state["n"])
            state["n"] += 1
        if pause:
            time.sleep(pause)

    def restore(state, saved):
        state["n"] = saved[0]

    return (SourceBuilder.batch("sequence", lambda ctx: {"n": 0}).fill_buffer_fn(fill)
            .create_snapshot_fn(lambda state: state["n"]).restore_snapshot_fn(restore).build())


class Faults(AbstractProcessor):
    """Passes items on; at each fault point fails once (marker files): ``RestartableError`` or a killed worker.
    Writes ``fault-<item>`` with the failure time and ``resumed-<n>`` with the time of the first item of each
    execution, for the recovery figure."""

    def __init__(self, points: dict, markers: str):
        super().__init__()
        self.points, self.markers, self.fresh = points, Path(markers), True

    def try_process0(self, item):
        if self.fresh:  # the first item of this execution
            self.fresh = False
            stamp = self.markers / f"resumed-{time.time_ns()}"
            stamp.write_text(str(time.time()))
        kind = self.points.get(item)
        if kind is not None:
            marker = self.markers / f"fault-{item}"
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return self.try_emit(item)
            os.write(fd, str(time.time()).encode())
            os.close(fd)
            if kind == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RestartableError(f"injected at {item}")
        return self.try_emit(item)


def build(count: int, points: dict, markers: str, sink: str, pause: float = 0.0) -> DAG:
    dag = DAG()
    source = dag.new_vertex("sequence", sequence(count, pause=pause))
    faults = dag.new_vertex("faults", lambda: Faults(points, markers), local_parallelism=1)
    out = dag.new_vertex("sink", write_list_p(sink), local_parallelism=1)
    dag.edge(between(source, faults))
    dag.edge(between(faults, out))
    return dag


def config(guarantee: ProcessingGuarantee, interval_ms: int = 1000, max_restarts: int = 100) -> JobConfig:
    return JobConfig(execution_mode=ExecutionMode.PIPELINED, processing_guarantee=guarantee,
                     snapshot_interval_ms=interval_ms, max_restarts=max_restarts)


def soak(engine: Engine, args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    engines = [engine if m == engine.members else Engine(EngineConfig(members=m), spark=engine.spark)
               for m in map(int, args.members.split(","))]
    done = total_lost = total_dup = jobs = 0
    while done < args.rounds:
        engine = engines[jobs % len(engines)]
        n = min(args.per_job, args.rounds - done)
        count = 20_000
        picks = sorted(rng.sample(range(500, count), n))
        points = {p: ("kill" if (done + i + 1) % args.kill_every == 0 else "error") for i, p in enumerate(picks)}
        markers = tempfile.mkdtemp(prefix="soak-")
        name = f"soak-{jobs}"
        job = engine.new_job(build(count, points, markers, name, pause=0.002), config(ProcessingGuarantee.EXACTLY_ONCE, 200))
        job.join(timeout=1200)
        got = Counter(engine.get_list(name))
        lost = count - len(set(got) & set(range(count)))
        dup = sum(c - 1 for c in got.values())
        total_lost, total_dup = total_lost + lost, total_dup + dup
        done += n
        jobs += 1
        print(f"job {jobs} ({engine.members} member(s)): {n} faults "
              f"({list(points.values()).count('kill')} killed workers), "
              f"restarts {job.metrics().restarts}, lost {lost}, duplicated {dup}", flush=True)
    print(f"soak: {done} kill-and-restart rounds in {jobs} jobs: lost {total_lost}, duplicated {total_dup}")


def cost(engine: Engine, args: argparse.Namespace) -> None:
    rates: dict[str, list[float]] = {"NONE (no snapshots)": [], "EXACTLY_ONCE, snapshot every 1 s": []}
    for r in range(args.repeat):
        for label, guarantee in (("NONE (no snapshots)", ProcessingGuarantee.NONE),
                                 ("EXACTLY_ONCE, snapshot every 1 s", ProcessingGuarantee.EXACTLY_ONCE)):
            name = f"cost-{r}-{guarantee.value}"
            job = engine.new_job(build(args.items, {}, tempfile.mkdtemp(), name), config(guarantee, 1000))
            start = time.perf_counter()
            job.join(timeout=1200)
            rates[label].append(args.items / (time.perf_counter() - start))
            assert len(engine.get_list(name)) == args.items
    base = statistics.median(rates["NONE (no snapshots)"])
    print(f"{args.items} items, median of {args.repeat} interleaved runs (job wall time, startup included)")
    for label, values in rates.items():
        print(f"| {label:34} | {statistics.median(values):12,.0f} items/s | {statistics.median(values) / base:5.2f}x |")


class Timelines(logging.Handler):
    """Collects the restart timelines the coordinator logs at debug level (logger ``jetspark.snapshots``)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.timelines: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        timeline = getattr(record, "timeline", None)
        if timeline is not None:
            self.timelines.append(timeline)


def recovery(engine: Engine, args: argparse.Namespace) -> None:
    handler = Timelines()
    logger = logging.getLogger("jetspark.snapshots")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    count = 40_000
    points = {p: args.kind for p in range(4000, count, count // (args.faults + 1))[: args.faults]}
    markers = Path(tempfile.mkdtemp(prefix="recovery-"))
    job = engine.new_job(build(count, points, str(markers), "recovery", pause=0.002),
                         config(ProcessingGuarantee.EXACTLY_ONCE, 500))
    job.join(timeout=1200)
    faults = sorted(float(p.read_text()) for p in markers.glob("fault-*"))
    resumed = sorted(float(p.read_text()) for p in markers.glob("resumed-*"))
    gaps = [min(r for r in resumed if r > f) - f for f in faults if any(r > f for r in resumed)]
    print(f"{len(gaps)} failures; seconds from failure to processing resumed: "
          + ", ".join(f"{g:.2f}" for g in gaps) + f"; median {statistics.median(gaps):.2f} s")
    for timeline in handler.timelines:  # the same failure: the fault whose time is nearest the timeline's origin
        fault = min(faults, key=lambda f: abs(f - timeline["origin"]))
        later = [r for r in resumed if r > fault]
        if later:
            timeline["processing resumed"] = min(later) - fault
    if handler.timelines:
        print("restart timeline, median seconds after the failure (each restart's, in order):")
        for step in [s for s in handler.timelines[0] if s != "origin"]:
            values = [t[step] for t in handler.timelines if step in t]
            print(f"  {step:22} {statistics.median(values):6.2f}   ({', '.join(f'{v:.2f}' for v in values)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["soak", "cost", "recovery"])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--per-job", type=int, default=10)
    parser.add_argument("--kill-every", type=int, default=4)
    parser.add_argument("--items", type=int, default=400_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--faults", type=int, default=5)
    parser.add_argument("--kind", choices=["error", "kill"], default="error",
                        help="recovery: raise RestartableError (default) or kill the Python worker")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--members", default="1", help="soak: members of the jobs' engines in turn, e.g. 1,2")
    args = parser.parse_args()
    print("load average at start: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), flush=True)
    with Engine(EngineConfig(master="local[2]", spark_conf={"spark.ui.enabled": "false"})) as engine:
        {"soak": soak, "cost": cost, "recovery": recovery}[args.what](engine, args)
    print("load average at end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
