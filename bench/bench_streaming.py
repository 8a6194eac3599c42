"""Streaming benchmark: the pipelined runtime against Spark Structured Streaming, in one process and session.

Three figures, printed side by side (``local[2]`` unless ``--master`` says otherwise):

1. **throughput** of source -> map -> partitioned keyed count (no windows), items/s. jetspark: a pipelined job
   over ``--items`` items (a source emitting ints, ``map_p(x % 1000)``, a distributed partitioned edge into
   ``aggregate_by_key_p(counting)``); the rate is items / (job wall time - the wall time of the same job with
   no items), i.e. without the job's fixed start-up, which is printed too. Structured Streaming: the
   ``rate-micro-batch`` source, the same map as a Python UDF, ``groupBy(key).count()`` in update mode into a
   memory sink; the rate is Spark's own ``processedRowsPerSecond`` averaged over the batches.
2. **latency** at ``--rate`` items/s (default 10,000): items carry their creation time (``time.time_ns``); a
   source paces them, they cross a local edge and a distributed partitioned edge (TCP between the two tasks
   for half of them) to the measuring processor: p50/p99/p99.9 of creation -> sink, and per hop (/2).
   Structured Streaming: the ``rate`` source at the same rate into a memory sink polled every 10 ms; latency =
   (time a row is first seen in the sink - row timestamp). (``foreachBatch`` would be the natural sink, but on
   this install a query with ``foreachBatch`` dies at once with a ``StackOverflowError`` in the stream thread,
   also with a plain SparkSession.)
3. **word count** over the bundled sample (``examples/word_count.py``): pipelined vs staged wall time, the
   median of ``--repeat`` interleaved runs, the results checked equal.

Run: ``.venv/bin/python bench/bench_streaming.py [--items N] [--rate R] [--seconds S] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "examples")]

from dag import DAG, Engine, EngineConfig, ExecutionMode, JobConfig  # noqa: E402
from edges import between  # noqa: E402
from processors import Processor, aggregate_by_key_p, aggregations, map_p, write_list_p  # noqa: E402

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


class PacedSource(Processor):
    """Emits ``(created_ns, i)`` at ``rate`` items/s for ``seconds`` (split over the processors); non-cooperative,
    so it has its own thread and may sleep."""

    def __init__(self, rate: int, seconds: float):
        self.rate, self.seconds = rate, seconds

    def is_cooperative(self):
        return False

    def init(self, outbox, context):
        self.outbox, self.rate = outbox, self.rate / context.total_parallelism
        self.start, self.sent, self.pending = time.time(), 0, None
        self.total = int(self.rate * self.seconds)

    def complete(self):
        if self.pending is not None and not self.outbox.offer(self.pending):
            return False
        self.pending = None
        due = min(self.total, int((time.time() - self.start) * self.rate))
        while self.sent < due:
            item = (time.time_ns(), self.sent)
            self.sent += 1
            if not self.outbox.offer(item):
                self.pending = item
                return False
        if self.sent >= self.total:
            return True
        time.sleep(0.0002)
        return False


def keyed_count_dag(n: int, sink: str) -> DAG:
    dag = DAG()
    src = dag.new_vertex("source", lambda: CountingSource(n))
    key = dag.new_vertex("map", map_p(lambda x: x % 1000))
    count = dag.new_vertex("count", aggregate_by_key_p([lambda k: k], aggregations.counting()))
    out = dag.new_vertex("sink", write_list_p(sink))
    dag.edge(between(src, key)).edge(between(key, count).partitioned(lambda k: k).distributed())
    dag.edge(between(count, out))
    return dag


def timed_job(engine: Engine, dag: DAG, config: JobConfig) -> float:
    start = time.perf_counter()
    engine.new_job(dag, config).join(timeout=600)
    return time.perf_counter() - start


def jetspark_throughput(engine: Engine, n: int) -> tuple[float, float]:
    """(items/s without start-up, start-up seconds)."""
    timed_job(engine, keyed_count_dag(1000, "warm"), PIPELINED)
    empty = statistics.median(timed_job(engine, keyed_count_dag(0, "empty"), PIPELINED) for _ in range(3))
    engine.get_list("counts").clear()
    full = timed_job(engine, keyed_count_dag(n, "counts"), PIPELINED)
    counts = dict(engine.get_list("counts"))
    assert sum(counts.values()) == n and len(counts) == min(n, 1000), "wrong counts"
    return n / max(full - empty, 1e-9), empty


def structured_throughput(spark, rows_per_batch: int, seconds: float) -> float:
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    key = F.udf(lambda v: v % 1000, LongType())
    stream = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch).load()
              .select(key("value").alias("k")).groupBy("k").count())
    query = (stream.writeStream.outputMode("update").format("memory").queryName("ss_counts")
             .trigger(processingTime="0 seconds").start())
    time.sleep(seconds)
    query.stop()
    rates = [p["processedRowsPerSecond"] for p in query.recentProgress if p["numInputRows"] > 0][1:]  # skip warm-up
    return statistics.mean(rates) if rates else float("nan")


class Latency(Processor):
    """Turns ``(created_ns, i)`` into the latency in microseconds when it reaches this processor."""

    def init(self, outbox, context):
        self.outbox = outbox

    def process(self, ordinal, inbox):
        now = time.time_ns()
        while not inbox.is_empty():
            if not self.outbox.offer((now - inbox.peek()[0]) / 1000):
                return
            inbox.remove()


def jetspark_latency(engine: Engine, rate: int, seconds: float) -> list[float]:
    dag = DAG()
    src = dag.new_vertex("paced", lambda: PacedSource(rate, seconds))
    ident = dag.new_vertex("map", map_p(lambda x: x))
    lat = dag.new_vertex("latency", Latency)
    sink = dag.new_vertex("sink", write_list_p("latencies"))
    dag.edge(between(src, ident)).edge(between(ident, lat).partitioned(lambda x: x[1]).distributed())
    dag.edge(between(lat, sink))
    engine.get_list("latencies").clear()
    engine.new_job(dag, PIPELINED).join(timeout=seconds + 120)
    return sorted(engine.get_list("latencies"))


def structured_latency(spark, rate: int, seconds: float) -> list[float]:
    """Rows of the ``rate`` source as they become visible in a memory sink, polled every 10 ms (the poll's own
    query time is included: an upper bound of Structured Streaming's latency)."""
    query = (spark.readStream.format("rate").option("rowsPerSecond", rate).load().writeStream.format("memory")
             .queryName("ss_latency").outputMode("append").trigger(processingTime="0 seconds").start())
    latencies: list[float] = []
    seen, end = 0, time.time() + seconds + 5
    while time.time() < end:
        rows = spark.sql(f"SELECT value, timestamp FROM ss_latency WHERE value >= {seen}").collect()
        now = time.time()
        if rows:
            latencies.extend((now - r[1].timestamp()) * 1e6 for r in rows)
            seen = max(r[0] for r in rows) + 1
        time.sleep(0.01)
    query.stop()
    return sorted(latencies[len(latencies) // 10:])  # drop the first tenth (start-up batches)


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
    parser.add_argument("--rate", type=int, default=10_000, help="items/s of the latency run")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the latency and SS runs")
    parser.add_argument("--repeat", type=int, default=3, help="word count runs per mode")
    args = parser.parse_args(argv)
    config = EngineConfig(master=args.master, spark_conf={"spark.ui.enabled": "false",
                                                          "spark.sql.shuffle.partitions": "2"})
    with Engine(config) as engine:
        spark = engine.spark
        rate, startup = jetspark_throughput(engine, args.items)
        ss_rate = structured_throughput(spark, 200_000, args.seconds)
        lat = percentiles(jetspark_latency(engine, args.rate, args.seconds))
        ss_lat = percentiles(structured_latency(spark, args.rate, args.seconds))
        wc_p, wc_s = word_count_times(engine, args.repeat)
    print(f"master {args.master}, Python {sys.version.split()[0]}")
    print("| figure | jetspark PIPELINED | Spark Structured Streaming | ratio |")
    print("|---|---|---|---|")
    print(f"| source -> map -> keyed count, items/s | {rate:,.0f} (job start-up {startup:.2f} s excluded) | "
          f"{ss_rate:,.0f} | {rate / ss_rate:.1f}x |")
    for name, a, b in zip(("p50", "p99", "p99.9"), lat, ss_lat):
        print(f"| latency {name} at {args.rate:,}/s, creation -> sink (2 hops) | {a / 1000:.2f} ms "
              f"({a / 2000:.2f} ms per hop) | {b / 1000:.1f} ms | 1/{b / a:.0f} |")
    print(f"| word count on the sample, wall s (median of {args.repeat}) | PIPELINED {wc_p:.2f} | STAGED {wc_s:.2f} "
          f"| {wc_s / wc_p:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
