"""Streaming benchmark: the pipelined runtime against Spark Structured Streaming, in one process and session.

Three figures, printed side by side (``local[2]`` unless ``--master`` says otherwise):

1. **throughput** of source -> map -> partitioned keyed count (no windows), items/s. jetspark: a pipelined job
   over ``--items`` items (a source emitting ints, ``map_p(x % 1000)``, a distributed partitioned edge into
   ``aggregate_by_key_p(counting)``, the counts checked); the rate is items / (job wall time - the wall time of
   the same job with no items), i.e. without the job's fixed start-up (printed too); medians of ``--repeat``
   runs. Structured Streaming: ``rate-micro-batch`` (``--ss-rows`` rows per batch) -> the same map as a Python
   UDF -> ``groupBy(k).count()`` (update mode, state across batches) -> the ``noop`` sink, trigger 0 s; the
   rate is rows / ``triggerExecution`` time over ``--ss-batches`` batches after the first (the first holds the
   query's start-up and warm-up). The same query with the map as a JVM expression is printed for reference.
2. **latency** at ``--rate`` items/s (default 10,000): items carry the time they were due by the source's
   schedule (so a source held back by back-pressure counts the wait); a cooperative source paces them
   (``--threaded-source``: a non-cooperative one in a thread of its own), they cross a local
   edge and a distributed partitioned edge (TCP between the two tasks for half of them) to the measuring
   processor, which keeps its measurements in arrays until the end (nothing goes to the driver while it
   measures): p50/p99/p99.9 of due -> measuring processor over ``--seconds``, after ``--warmup`` seconds left
   out (the job's first items meet processors still starting), and per hop (/2). Several rates
   (``--rate 10000,100000,80%``; "80%" of the median of three unpaced runs) print the latency curve with where
   the tail comes from and, beside each ``N%``, the same load on a bare loop with no pipeline
   (``bench_machine.BareLoop``: what the machine alone gives at that load)
   (``latency_curve.py``; ``--curve-only`` runs only that, ``--plot FILE.svg`` draws it).
   Structured Streaming: the ``rate`` source at the same rate -> the map (Python UDF) -> ``foreachBatch``,
   trigger 0 s; a row's latency is the time its batch's result reached the sink minus its creation timestamp,
   over ``--seconds`` after the first three batches (start-up and the backlog it leaves).
   ``foreachBatch`` works on this install; what crashed earlier runs was ``query.stop()`` interrupting a
   running Python ``foreachBatch``: Spark then matches the long interruption message with a regular expression
   that overflows the stream thread's stack (``StreamExecution.isInterruptionException``). The bench stops
   the query only after telling the function to return at once.
3. **word count** over the bundled sample (``examples/word_count.py``): pipelined vs staged wall time, the
   median of ``--repeat`` interleaved runs, the results checked equal.

Run: ``.venv/bin/python bench/bench_streaming.py [--items N] [--ss-rows N] [--rate R] [--seconds S] [--repeat R]``
(``--help`` for all options).
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "examples"),
                str(Path(__file__).resolve().parent)]

from dag import DAG, Engine, EngineConfig, ExecutionMode, JobConfig  # noqa: E402
from edges import between  # noqa: E402
from processors import Processor, aggregate_by_key_p, counting, map_p, write_list_p  # noqa: E402

import bench_machine  # noqa: E402

PIPELINED = JobConfig(execution_mode=ExecutionMode.PIPELINED)
STAGED = JobConfig(execution_mode=ExecutionMode.STAGED)


class CountingSource(Processor):
    """Emits ``n`` ints (split over the source's processors)."""

    def __init__(self, n: int):
        self.n = n

    def init(self, outbox, context):
        self.outbox = outbox
        share, extra = divmod(self.n, context.total_parallelism)
        g = context.global_processor_index
        self.next = g * share + min(g, extra)
        self.end = self.next + share + (1 if g < extra else 0)

    def complete(self):
        offer_many, start = self.outbox.offer_many, self.next
        self.next = offer_many(range(start, min(start + 1024, self.end)))
        self.next += start
        return self.next >= self.end


SOURCE_BATCH = 1024
"""Items a :class:`PacedSource` emits per call at most (the default queue size of an edge)."""


class PacedSource(Processor):
    """Emits ``(due_ns, i, pid, emitted_ns)`` at ``rate`` items/s for ``seconds`` (split over the processors).
    Cooperative (as Jet's sources are): each call emits the items due by then (at most :data:`SOURCE_BATCH`) and
    returns, and the task's one thread runs it with the rest of the pipeline; ``threaded=True`` makes it
    non-cooperative, in a thread of its own that sleeps 0.2 ms between rounds (``--threaded-source``). ``due_ns``
    is the time item ``i`` was due by the schedule, not the time it was emitted: an item the source emits late (it
    slept past the due time, or back-pressure held it) counts its wait, so a pipeline that cannot keep up shows as
    latency, not as a lower rate. ``rate=None`` emits as fast as the outbox takes items (the maximum throughput
    run), each item due when emitted.

    Both modes make their items with the same code, one list per call handed to ``offer_many``, and stamp them
    with one clock reading per call, so the run that gives "the maximum" and the paced runs at a percentage of it
    do the same work per item. (Before, only the paced source computed a due time per item, and both read the
    clock and offered once per item: 0.61-0.64 us per item at 70-80% against 0.35-0.45 unpaced, part of it from
    the paced source's smaller calls; bench/README.)"""

    def __init__(self, rate: int | None, seconds: float, threaded: bool = False):
        self.rate, self.seconds, self.threaded = rate, seconds, threaded

    def is_cooperative(self):
        return not self.threaded

    def init(self, outbox, context):
        self.outbox, self.sent = outbox, 0
        self.pid = os.getpid()
        self.start_ns = time.time_ns()
        self.end_ns = self.start_ns + int(self.seconds * 1e9)
        if self.rate is None:
            self.interval_ns, self.total = 0.0, None
        else:
            per_processor = self.rate / context.total_parallelism
            self.interval_ns, self.total = 1e9 / per_processor, int(per_processor * self.seconds)

    def complete(self):
        now, sent = time.time_ns(), self.sent
        if self.total is None:  # unpaced: the next batch, due now
            if now >= self.end_ns:
                return True
            base, interval, due = now, 0.0, sent + SOURCE_BATCH
        else:
            base, interval = self.start_ns, self.interval_ns
            due = min(self.total, int((now - base) / interval) + 1)
        end = min(due, sent + SOURCE_BATCH)
        if end > sent:
            pid = self.pid
            self.sent = sent + self.outbox.offer_many(
                [(base + int(i * interval), i, pid, now) for i in range(sent, end)], no_none=True)
        if self.sent == self.total:
            return True
        if self.total is not None and self.threaded and self.sent == due:  # caught up
            time.sleep(0.0002)
        return False


def keyed_count_dag(n: int, sink: str) -> DAG:
    dag = DAG()
    src = dag.new_vertex("source", lambda: CountingSource(n))
    key = dag.new_vertex("map", map_p(lambda x: x % 1000))
    count = dag.new_vertex("count", aggregate_by_key_p([lambda k: k], counting()))
    out = dag.new_vertex("sink", write_list_p(sink))
    dag.edge(between(src, key)).edge(between(key, count).partitioned(lambda k: k).distributed())
    dag.edge(between(count, out))
    return dag


def timed_job(engine: Engine, dag: DAG, config: JobConfig) -> float:
    start = time.perf_counter()
    engine.new_job(dag, config).join(timeout=600)
    return time.perf_counter() - start


def jetspark_throughput(engine: Engine, n: int, repeat: int) -> tuple[float, float]:
    """(items/s without start-up, start-up seconds): medians of ``repeat`` runs each, empty and full jobs
    alternating."""
    timed_job(engine, keyed_count_dag(1000, "warm"), PIPELINED)
    empty, full = [], []
    for _ in range(repeat):
        empty.append(timed_job(engine, keyed_count_dag(0, "empty"), PIPELINED))
        engine.get_list("counts").clear()
        full.append(timed_job(engine, keyed_count_dag(n, "counts"), PIPELINED))
        counts = dict(engine.get_list("counts"))
        assert sum(counts.values()) == n and len(counts) == min(n, 1000), "wrong counts"
    startup = statistics.median(empty)
    return n / max(statistics.median(full) - startup, 1e-9), startup


def structured_throughput(spark, rows_per_batch: int, python_map: bool, batches: int, max_seconds: float
                          ) -> tuple[float, float]:
    """Structured Streaming's steady-state throughput of the same job: ``rate-micro-batch`` (``rows_per_batch``
    per batch) -> the map (a Python UDF, or the Catalyst expression ``value % 1000``) -> ``groupBy(k).count()``
    (update mode, state kept across batches) -> the ``noop`` sink, as fast as it can (trigger 0 s). Runs until
    ``batches`` batches completed after the first (query start-up, JIT and Python worker warm-up) or
    ``max_seconds`` passed; returns (rows/s over those batches = sum(rows) / sum(triggerExecution), median
    batch seconds)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    key = F.udf(lambda v: v % 1000, LongType())("value") if python_map else F.col("value") % 1000
    stream = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch).load()
              .select(key.alias("k")).groupBy("k").count())
    query = (stream.writeStream.outputMode("update").format("noop").trigger(processingTime="0 seconds")
             .option("checkpointLocation", tempfile.mkdtemp(prefix="ss-bench-")).start())
    deadline = time.monotonic() + max_seconds
    try:
        while time.monotonic() < deadline and len(query.recentProgress) < batches + 1:
            time.sleep(0.2)
    finally:
        query.stop()
    done = [p for p in query.recentProgress if p["numInputRows"] > 0][1:]  # the first batch is the warm-up
    if not done:
        return float("nan"), float("nan")
    seconds = [p["durationMs"]["triggerExecution"] / 1000 for p in done]
    return sum(p["numInputRows"] for p in done) / sum(seconds), statistics.median(seconds)


def stamp_mapped(item: tuple) -> tuple:
    """The measured pipeline's map: appends the time the item reached the map (the end of hop 1)."""
    return item + (time.time_ns(),)


class WakeProbe:
    """A thread that sleeps 1 ms at a time and records how late it wakes (``late``, microseconds, at ``when``,
    ns): how long any thread of the process that wakes then waits for the GIL and a core (``--probe``)."""

    def __init__(self):
        self.when, self.late = array("q"), array("q")
        self.stopped = threading.Event()
        threading.Thread(target=self._loop, daemon=True, name="bench-wake-probe").start()

    def _loop(self):
        while not self.stopped.is_set():
            start = time.perf_counter_ns()
            time.sleep(0.001)
            self.late.append((time.perf_counter_ns() - start - 1_000_000) // 1000)
            self.when.append(time.time_ns())


CHUNK = 1 << 16
"""Items per array of the measuring processor (512 KB: growing one copies little)."""


class Latency(Processor):
    """Measures each ``(due_ns, i, pid, emitted_ns, mapped_ns)`` when it reaches this processor and emits, at
    the end, one dict of arrays: ``due`` (ns), ``total`` (due -> here, microseconds) and its parts ``pacing`` (due
    -> emitted by the source), ``hop1`` (emitted -> map, a local edge), ``hop2`` (map -> here, a distributed
    partitioned edge), ``remote`` (1 when hop 2 crossed tasks: the source ran in another process), and the
    garbage collections of this task's process meanwhile (``gc``: ``(generation, seconds)``, from
    ``gc.callbacks``). The measurements stay in the task until the job ends, so the measured pipeline does not
    also carry millions of results to the driver while it is measured: arrays (no object per item for the
    collector to walk) of at most :data:`CHUNK` items each, joined at the end. (One array per column, grown by
    millions of items, was copied whole when it grew: at 80% of the maximum those copies stalled this processor
    for 15-25 ms at a time, the largest part of the tail it measured; an array per ``process`` call instead
    gave the collector tens of thousands more objects to walk; bench/README.)"""

    def __init__(self, probe: bool = False):
        self.with_probe = probe

    def init(self, outbox, context):
        self.outbox, self.pid = outbox, os.getpid()
        self.probe = WakeProbe() if self.with_probe else None
        self.chunks: dict[str, list[array]] = {name: [] for name in ("due", "pacing", "hop1", "hop2", "total",
                                                                     "remote")}
        self.gc: list[tuple[int, float]] = []
        self._gc_start = 0.0
        self.result = None
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase, info):
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.gc.append((info["generation"], time.perf_counter() - self._gc_start))

    def process(self, ordinal, inbox):
        now = time.time_ns()
        c = self.chunks
        items: list = []
        inbox.drain_to(items)
        if not c["due"] or len(c["due"][-1]) >= CHUNK:
            for chunks in c.values():
                chunks.append(array("q"))
        c["due"][-1].extend(item[0] for item in items)
        c["pacing"][-1].extend((item[3] - item[0]) // 1000 for item in items)
        c["hop1"][-1].extend((item[4] - item[3]) // 1000 for item in items)
        c["hop2"][-1].extend((now - item[4]) // 1000 for item in items)
        c["total"][-1].extend((now - item[0]) // 1000 for item in items)
        c["remote"][-1].extend(int(item[2] != self.pid) for item in items)

    def complete(self):
        if self.result is None:  # made once: a refused offer is retried with the same item
            self.result = {name: array("q", b"".join(chunk.tobytes() for chunk in chunks))
                           for name, chunks in self.chunks.items()}
            self.result["gc"] = self.gc
            if self.probe is not None:
                self.result["probe"] = list(zip(self.probe.when, self.probe.late))
        return self.outbox.offer(self.result)

    def close(self):
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
        if getattr(self, "probe", None) is not None:
            self.probe.stopped.set()


@dataclass
class LatencyRun:
    """One paced run: sorted latencies (microseconds) of the measured items, due -> the measuring processor
    (``total``) and per part (``pacing``, ``hop1``, ``hop2 local``, ``hop2 remote``), the rate that reached the
    measuring processors, and the garbage collections in their processes (``(generation, seconds)``)."""

    total: list[int]
    parts: dict[str, list[int]]
    rate: float
    gc: list[tuple[int, float]]
    probe: list[tuple[int, int]] = field(default_factory=list)  # (when ns, late us) of the wake probes
    arrivals: list[tuple[int, int]] = field(default_factory=list)  # (arrival ns, latency us), with --probe
    speed: str | None = None  # the speed probe beside the run (format_speed)


def jetspark_latency(engine: Engine, rate: int | None, seconds: float, warmup: float,
                     probe: bool = False, threaded_source: bool = False) -> LatencyRun:
    """The items due after the first ``warmup`` seconds of a paced job of ``warmup + seconds`` (``rate=None``:
    unpaced, the maximum throughput): source -> map (local edge) -> the measuring processor (distributed
    partitioned edge, TCP between the tasks for half of the items). ``probe``: a :class:`WakeProbe` runs in
    each measuring processor's process; ``threaded_source``: the source in a thread of its own."""
    dag = DAG()
    src = dag.new_vertex("paced", lambda: PacedSource(rate, warmup + seconds, threaded_source))
    ident = dag.new_vertex("map", map_p(stamp_mapped))
    lat = dag.new_vertex("latency", lambda: Latency(probe))
    sink = dag.new_vertex("sink", write_list_p("latencies"))
    dag.edge(between(src, ident)).edge(between(ident, lat).partitioned(lambda x: x[1]).distributed())
    dag.edge(between(lat, sink))
    engine.get_list("latencies").clear()
    engine.new_job(dag, PIPELINED).join(timeout=warmup + seconds + 120)
    results = list(engine.get_list("latencies"))
    first = min(min(r["due"]) for r in results if r["due"])
    parts: dict[str, list[int]] = {"pacing": [], "hop1": [], "hop2 local": [], "hop2 remote": []}
    total, arrivals = [], []
    for r in results:
        for due, pacing, hop1, hop2, latency, remote in zip(r["due"], r["pacing"], r["hop1"], r["hop2"],
                                                            r["total"], r["remote"]):
            if due >= first + warmup * 1e9:
                total.append(latency)
                arrivals.append(due + latency * 1000)
                parts["pacing"].append(pacing)
                parts["hop1"].append(hop1)
                parts["hop2 remote" if remote else "hop2 local"].append(hop2)
    span = (max(arrivals) - min(arrivals)) / 1e9 if len(arrivals) > 1 else float("nan")
    start = first + warmup * 1e9
    return LatencyRun(sorted(total), {k: sorted(v) for k, v in parts.items()}, len(total) / span,
                      [g for r in results for g in r["gc"]],
                      probe=[(when, late) for r in results for when, late in r.get("probe", ()) if when >= start],
                      arrivals=list(zip(arrivals, total)) if probe else [])


def structured_latency(spark, rate: int, seconds: float, warm_batches: int) -> tuple[list[float], float]:
    """Structured Streaming at ``rate`` rows/s: the ``rate`` source -> the same map (a Python UDF) ->
    ``foreachBatch``, trigger 0 s (the next micro-batch starts as soon as the last ended). A row's latency is
    the time its batch's result reached the sink (the batch's action returned in ``foreachBatch``) minus the
    row's creation ``timestamp``. The first ``warm_batches`` batches are start-up (the first one holds every
    row created while the query started) and are left out; then ``seconds`` are measured, and at least three
    batches (at most 300 s). Returns (latencies in microseconds, median batch seconds)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    ident = F.udf(lambda v: v, LongType())
    batches: list[tuple[int, float, list]] = []
    stopping = threading.Event()

    def sink(df, batch_id):
        if stopping.is_set():
            return
        # count(k) makes Spark evaluate the UDF for every row; one result row per distinct creation ms
        rows = df.groupBy("timestamp").agg(F.count("k").alias("n")).collect()
        batches.append((batch_id, time.time(), [(r[0].timestamp(), r[1]) for r in rows]))

    query = (spark.readStream.format("rate").option("rowsPerSecond", rate).load()
             .select("timestamp", ident("value").alias("k")).writeStream.foreachBatch(sink)
             .trigger(processingTime="0 seconds").start())
    try:
        while len(batches) < warm_batches:
            if query.exception() is not None or not query.isActive:
                raise RuntimeError(f"Structured Streaming latency query failed: {query.exception()}")
            time.sleep(0.05)
        measured_from, warm = time.time(), len(batches)
        deadline = measured_from + max(seconds, 300)
        while (time.time() < measured_from + seconds or len(batches) < warm + 3) and time.time() < deadline:
            time.sleep(0.05)
    finally:
        stopping.set()  # later batches return at once, so stop() rarely interrupts a running batch
        time.sleep(0.5)
        query.stop()
    latencies: list[float] = []
    durations = [p["durationMs"]["triggerExecution"] / 1000 for p in query.recentProgress
                 if p["batchId"] >= warm_batches and p["numInputRows"] > 0]
    for _, done, counts in batches:
        if done >= measured_from:
            for created, n in counts:
                latencies.extend([(done - created) * 1e6] * n)
    return sorted(latencies), statistics.median(durations) if durations else float("nan")


def _hop_receiver(server, result) -> None:
    conn, _ = server.accept()
    stream, latencies = conn.makefile("rb"), []
    for line in stream:
        if line == b"end\n":
            break
        latencies.append((time.time_ns() - int(line)) / 1000)
    result.send(latencies)


def _hop_sender(address, rate: int, seconds: float) -> None:
    import socket

    sock = socket.create_connection(address)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    start, sent, total = time.time(), 0, int(rate * seconds)
    while sent < total:
        due = min(total, int((time.time() - start) * rate))
        while sent < due:
            sock.sendall(b"%d\n" % time.time_ns())
            sent += 1
        time.sleep(0.0002)
    sock.sendall(b"end\n")
    sock.close()


def machine_hop_latency(rate: int, seconds: float, warmup: float) -> list[float]:
    """The machine's own floor for one hop: plain Python, a paced sender process writes each item's creation
    time to a loopback TCP socket at once, a receiver process reads it (two processes, one wake-up each, no
    engine). Its tail is what the shared machine's scheduler adds to any hop at the time of the run."""
    import multiprocessing
    import socket

    ctx = multiprocessing.get_context("spawn")
    server = socket.create_server(("127.0.0.1", 0))
    mine, theirs = ctx.Pipe()
    receiver = ctx.Process(target=_hop_receiver, args=(server, theirs))
    sender = ctx.Process(target=_hop_sender, args=(server.getsockname(), rate, warmup + seconds))
    receiver.start()
    sender.start()
    latencies = mine.recv()
    sender.join()
    receiver.join()
    server.close()
    return sorted(latencies[int(rate * warmup):])


def percentiles(values: list[float]) -> tuple[float, float, float]:
    if not values:
        return (float("nan"),) * 3
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
    return pick(0.5), pick(0.99), pick(0.999)


def word_count_times(engine: Engine, repeat: int) -> tuple[float, float]:
    import word_count

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "runtime"))
    from modes import ModeEngine

    pipelined, staged = ModeEngine(engine, ExecutionMode.PIPELINED), ModeEngine(engine, ExecutionMode.STAGED)
    expected = word_count.count_words(staged)
    assert word_count.count_words(pipelined) == expected
    times: dict[str, list[float]] = {"p": [], "s": []}
    for _ in range(repeat):
        for name, eng in (("p", pipelined), ("s", staged)):
            start = time.perf_counter()
            word_count.count_words(eng)
            times[name].append(time.perf_counter() - start)
    return statistics.median(times["p"]), statistics.median(times["s"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--items", type=int, default=2_000_000, help="items of the throughput job")
    parser.add_argument("--ss-rows", type=int, default=200_000, help="rows per Structured Streaming micro-batch")
    parser.add_argument("--ss-batches", type=int, default=3, help="measured Structured Streaming batches")
    parser.add_argument("--rate", default="10000",
                        help="items/s of the latency run; a comma list (entries 'N%%': of the measured maximum, "
                             "e.g. 10000,100000,80%%) sweeps the rates and prints the latency curve "
                             "(latency_curve.py); the comparison with Structured Streaming uses the first rate")
    parser.add_argument("--curve-only", action="store_true", help="run only the latency curve of --rate")
    parser.add_argument("--plot", help="write the latency curve as SVG to this file (e.g. docs/img/latency_curve.svg)")
    parser.add_argument("--probe", action="store_true",
                        help="with --rate: a thread in each measuring process records how late it wakes from 1 ms "
                             "sleeps (the wait for the GIL and a core), printed beside the worst 100 ms of items")
    parser.add_argument("--threaded-source", action="store_true",
                        help="the latency runs' source non-cooperative, in a thread of its own (sleeping 0.2 ms "
                             "between rounds) instead of a cooperative one run by the task's scheduler")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds of the latency runs")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of the jetspark latency run left out")
    parser.add_argument("--repeat", type=int, default=3, help="word count runs per mode")
    args = parser.parse_args(argv)
    config = EngineConfig(master=args.master, spark_conf={"spark.ui.enabled": "false",
                                                          "spark.sql.shuffle.partitions": "2"})
    print(f"load average before: {load_average()}", flush=True)
    with Engine(config) as engine:
        spark = engine.spark
        if "," in args.rate or args.curve_only:
            latency_curve(engine, args)
            if args.curve_only:
                return 0
        # the comparison with Structured Streaming: the first rate in items/s (10,000 when all are percentages)
        args.rate = next((int(e) for e in args.rate.split(",") if e.strip() and not e.strip().endswith("%")), 10_000)
        rate, startup = jetspark_throughput(engine, args.items, args.repeat)
        ss_rate, ss_batch = structured_throughput(spark, args.ss_rows, True, args.ss_batches, 600)
        ss_native, ss_native_batch = structured_throughput(spark, args.ss_rows, False, args.ss_batches, 600)
        lat = percentiles(jetspark_latency(engine, args.rate, args.seconds, args.warmup,
                                           threaded_source=args.threaded_source).total)
        floor = percentiles(machine_hop_latency(args.rate, args.seconds, args.warmup))
        ss_lats, ss_lat_batch = structured_latency(spark, args.rate, args.seconds, 3)
        ss_lat = percentiles(ss_lats)
        wc_p, wc_s = word_count_times(engine, args.repeat)
    print(f"load average after: {load_average()}")
    print(f"master {args.master}, Python {sys.version.split()[0]}, pyspark {spark.version}")
    print("| figure | jetspark PIPELINED | Spark Structured Streaming | ratio |")
    print("|---|---|---|---|")
    print(f"| source -> map -> keyed count, items/s | {rate:,.0f} (job start-up {startup:.2f} s excluded) | "
          f"{ss_rate:,.0f} (Python UDF map; {args.ss_rows:,} rows/batch, {ss_batch:.2f} s/batch) | "
          f"{rate / ss_rate:.1f}x |")
    print(f"| same, Structured Streaming's map a JVM expression | | {ss_native:,.0f} ({ss_native_batch:.2f} s/batch) "
          f"| {rate / ss_native:.1f}x |")
    for name, a, b in zip(("p50", "p99", "p99.9"), lat, ss_lat):
        print(f"| latency {name} at {args.rate:,}/s, creation -> sink | {a / 1000:.2f} ms (2 hops; "
              f"{a / 2000:.2f} ms per hop) | {b / 1000:.0f} ms | 1/{b / a:.0f} |")
    print(f"| plain-Python TCP hop between two processes at {args.rate:,}/s (the machine's floor), p50/p99/p99.9 | "
          f"{' / '.join(f'{x / 1000:.2f}' for x in floor)} ms | | |")
    print(f"| Structured Streaming micro-batch at {args.rate:,}/s, median s | | {ss_lat_batch:.2f} | |")
    print(f"| word count on the sample, wall s (median of {args.repeat}) | PIPELINED {wc_p:.2f} | STAGED {wc_s:.2f} "
          f"| {wc_s / wc_p:.2f}x |")
    print(f"floor 1 (throughput >= 5x Structured Streaming): {rate / ss_rate:.1f}x: "
          f"{'met' if rate >= 5 * ss_rate else 'MISSED'}")
    print(f"floor 2 (p99 per hop <= 1/20 of Structured Streaming's median latency): {lat[1] / 2000:.1f} ms vs "
          f"{ss_lat[0] / 20000:.1f} ms: {'met' if lat[1] / 2 <= ss_lat[0] / 20 else 'MISSED'}")
    return 0


def latency_curve(engine: Engine, args: argparse.Namespace) -> list:
    """The latency curve over ``args.rate`` (``latency_curve.py``), printed, and drawn when ``args.plot``."""
    import latency_curve as lc

    reference: dict[int, float] = {}  # the probe loop's median time per CPU during the maximum's runs, us

    def maximum() -> float:  # one unpaced run moves by a third between runs: the median of three
        with bench_machine.SpeedProbe() as probe:
            runs = [jetspark_latency(engine, None, args.seconds, args.warmup,
                                     threaded_source=args.threaded_source).rate for _ in range(3)]
        reference.update(probe.loop_us())
        top = statistics.median(runs)
        print(f"maximum throughput of the measured pipeline (unpaced source; median of "
              f"{', '.join(f'{r:,.0f}' for r in runs)}): {top:,.0f} items/s; the speed probe's loop meanwhile: "
              f"{format_speed(reference, probe.off_windows(reference))}", flush=True)
        return top

    def measure(engine: Engine, rate: int, seconds: float, warmup: float) -> LatencyRun:
        """One point's run, with the speed probe beside it once the maximum's runs gave its reference."""
        if not reference:
            return jetspark_latency(engine, rate, seconds, warmup, args.probe, args.threaded_source)
        with bench_machine.SpeedProbe() as probe:
            run = jetspark_latency(engine, rate, seconds, warmup, args.probe, args.threaded_source)
        run.speed = format_speed(probe.loop_us(), probe.off_windows(reference))
        return run

    jetspark_latency(engine, 1000, 1.0, 0.5)  # warm-up: Python workers and imports
    rates = lc.parse_rates(args.rate, maximum)
    entries = [e.strip() for e in args.rate.split(",") if e.strip()]
    loads = {rate: float(e[:-1]) for e, rate in zip(entries, rates) if e.endswith("%")}
    with multiprocessing.get_context("spawn").Pool(2) as pool:  # one bare loop per task of the measured job
        loop = bench_machine.BareLoop(pool, 2, args.seconds, args.warmup)
        if loads:
            print(f"bare loop's maximum (median of three): {loop.measure_maximum():,.0f} items/s per process",
                  flush=True)
        print(lc.format_curve([]), flush=True)
        points = lc.sweep(engine, rates, args.seconds, args.warmup, measure, machine_hop_latency, percentiles,
                          lambda rate: loop.at_load(loads[rate])[0] if rate in loads else None)
    print(f"load average after the curve: {load_average()}")
    print(lc.format_curve(points))
    if args.plot:
        loads = [p.load for p in points]
        title = (f"jetspark PIPELINED, {args.master}: latency per hop ({time.strftime('%Y-%m-%d')}, load "
                 f"{min(loads):.0f}-{max(loads):.0f})")
        Path(args.plot).write_text(lc.curve_svg(points, title))
        print(f"wrote {args.plot}")
    return points


def format_speed(loop_us: dict[int, float], off: float) -> str:
    """``"122 / 80 us (37%)"``: the speed probe's median per CPU, and the share of 100 ms windows in which a CPU
    ran over 1.25x slower or faster than during the maximum's runs."""
    return f"{' / '.join(f'{us:.0f}' for _, us in sorted(loop_us.items()))} us ({100 * off:.0f}%)"


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())
