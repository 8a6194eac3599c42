"""The PostgreSQL connectors against plain psycopg, in one process, runs alternating (issue 24).

**JDBC sink throughput.** ``--rows`` rows ``(id, text)`` into an empty table, each way in turn, ``--rounds``
times:

- ``executemany``: one psycopg connection, ``executemany`` per batch of ``--batch`` rows, a commit per batch
  (what ``write_jdbc_p`` does);
- ``copy``: one ``COPY ... FROM STDIN`` (the fastest way into PostgreSQL; a ceiling, not a like-for-like);
- ``sink``: a PIPELINED job ``list source -> write_jdbc_p`` (at-least-once, local parallelism 1);
- ``sink-eo``: the same with ``exactly_once=True`` under ``EXACTLY_ONCE`` (snapshot every 1 s);
- ``noop-job``: the same job into a no-op sink, to show how much of a job's time is the job itself.

Rows/s = rows / wall time (for the jobs: from ``new_job`` to ``join``, job start included).

**CDC latency.** A CDC source of a table, ``AT_LEAST_ONCE`` with a snapshot every second; a writer inserts
``--cdc-rate`` rows a second (10 per transaction) for ``--cdc-seconds``, each stamped with the wall clock just
before its commit; a map stage just before a list sink computes ``now - stamp``. Prints p50/p99/max (ms).

The server is a private cluster started for the run (``tests/postgres.py``: ``initdb`` in a temp dir, fsync
off) unless ``--dsn`` names one. Run::

    .venv/bin/python bench/bench_jdbc.py [--rows 100000] [--rounds 3] [--cdc-rate 1000] [--cdc-seconds 20]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dag import DAG, Engine, EngineConfig, ExecutionMode, JobConfig, ProcessingGuarantee  # noqa: E402
from edges import between  # noqa: E402
from processors import noop_p, read_list_p  # noqa: E402


def _truncate(pg) -> None:
    pg.query("truncate bench")


def plain_executemany(pg, rows: list, batch: int) -> None:
    with pg.connect() as conn, conn.cursor() as cur:
        for start in range(0, len(rows), batch):
            cur.executemany("insert into bench values (%s, %s)", rows[start:start + batch])
            conn.commit()


def plain_copy(pg, rows: list, batch: int) -> None:
    with pg.connect() as conn, conn.cursor() as cur:
        with cur.copy("copy bench (id, name) from stdin") as copy:
            for row in rows:
                copy.write_row(row)


def _job(engine, pg, sink, guarantee) -> None:
    from connectors.jdbc import write_jdbc_p

    dag = DAG()
    source = dag.new_vertex("source", read_list_p("bench-rows"), local_parallelism=1)
    supplier = noop_p() if sink == "noop" else write_jdbc_p(
        "insert into bench values (%s, %s)", pg.connection_fn(), exactly_once=sink == "eo", batch_limit=50)
    target = dag.new_vertex("jdbcSink", supplier, local_parallelism=1)
    dag.edge(between(source, target))
    config = JobConfig(execution_mode=ExecutionMode.PIPELINED, processing_guarantee=guarantee,
                       snapshot_interval_ms=1000)
    engine.new_job(dag, config).join(timeout=600)


def sink_throughput(engine, pg, n: int, rounds: int, batch: int) -> dict:
    rows = [(i, f"name-{i}") for i in range(n)]
    engine.get_list("bench-rows").extend(rows)
    ways = {
        "executemany": lambda: plain_executemany(pg, rows, batch),
        "copy": lambda: plain_copy(pg, rows, batch),
        "sink": lambda: _job(engine, pg, "alo", ProcessingGuarantee.NONE),
        "sink-eo": lambda: _job(engine, pg, "eo", ProcessingGuarantee.EXACTLY_ONCE),
        "noop-job": lambda: _job(engine, pg, "noop", ProcessingGuarantee.NONE),
    }
    _job(engine, pg, "noop", ProcessingGuarantee.NONE)  # warm-up: Python workers, imports
    results: dict = {name: [] for name in ways}
    for r in range(rounds):
        for name, run in ways.items():
            _truncate(pg)
            start = time.perf_counter()
            run()
            elapsed = time.perf_counter() - start
            if name != "noop-job":
                count = pg.query("select count(*) from bench")[0][0]
                assert count == n, f"{name}: {count} rows, expected {n}"
            results[name].append(n / elapsed)
            print(f"round {r + 1} {name:12s} {n / elapsed:10,.0f} rows/s ({elapsed:.2f} s)", flush=True)
    return {name: statistics.median(v) for name, v in results.items()}


def cdc_latency(engine, pg, rate: int, seconds: float) -> list[float]:
    from connectors.cdc import PostgresCdcSources
    from pipeline import Pipeline, Sinks
    from tests.postgres import DATABASE, PASSWORD, USER

    pg.query("drop table if exists ticks")
    pg.query("create table ticks (id bigint primary key, stamp_ms double precision)")
    source = (PostgresCdcSources.postgres("ticks-cdc").set_database_address("127.0.0.1")
              .set_database_port(pg.port).set_database_user(USER).set_database_password(PASSWORD)
              .set_database_name(DATABASE).set_table_whitelist("public\\.ticks")
              .set_replication_slot_drop_on_stop(True).build())
    p = Pipeline.create()
    (p.read_from(source).with_native_timestamps(0)
     .map(lambda r: time.time() * 1000 - r.value().to_map()["stamp_ms"])
     .write_to(Sinks.list("cdc-latency")))
    job = engine.new_job(p, JobConfig(processing_guarantee=ProcessingGuarantee.AT_LEAST_ONCE,
                                      snapshot_interval_ms=1000))
    out = engine.get_list("cdc-latency")
    try:
        _write_ticks(pg, 0, 20, 10)  # warm-up: the job is streaming once these arrive
        deadline = time.monotonic() + 120
        while len(out) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        warm = len(out)
        total = _write_ticks(pg, 1000, int(rate * seconds), rate)
        deadline = time.monotonic() + 60
        while len(out) < warm + total and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(out)[warm:]
    finally:
        job.cancel()
        try:
            job.join(timeout=60)
        except Exception:  # noqa: BLE001 - cancelled on purpose
            pass


def _write_ticks(pg, first: int, count: int, rate: int) -> int:
    """``count`` rows at ``rate`` a second, 10 per transaction, each stamped just before the commit."""
    with pg.connect(autocommit=True) as conn:
        start = time.monotonic()
        for n in range(0, count, 10):
            pause = start + n / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            stamp = time.time() * 1000
            with conn.transaction():
                conn.cursor().executemany("insert into ticks values (%s, %s)",
                                          [(first + n + i, stamp) for i in range(10)])
    return count


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--cdc-rate", type=int, default=1000)
    parser.add_argument("--cdc-seconds", type=float, default=20)
    args = parser.parse_args(argv)
    from tests.postgres import PostgresServer

    with PostgresServer.started() as pg, Engine(EngineConfig(
            master="local[2]", spark_conf={"spark.ui.enabled": "false"})) as engine:
        pg.query("create table bench (id int primary key, name text)")
        medians = sink_throughput(engine, pg, args.rows, args.rounds, args.batch)
        base = medians["executemany"]
        print(f"\nmedian rows/s over {args.rounds} rounds of {args.rows:,} rows (batch {args.batch}):")
        for name, value in medians.items():
            print(f"  {name:12s} {value:10,.0f}   {value / base:5.2f}x executemany")
        latencies = cdc_latency(engine, pg, args.cdc_rate, args.cdc_seconds)
        if latencies:
            print(f"\nCDC COMMIT -> sink at {args.cdc_rate} changes/s, {len(latencies):,} changes: "
                  f"p50 {_percentile(latencies, 0.5):.0f} ms, p99 {_percentile(latencies, 0.99):.0f} ms, "
                  f"max {max(latencies):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
