"""Change data capture to an exactly-once database sink: the revenue per customer of every second's orders,
computed from PostgreSQL's own change stream and written back to PostgreSQL, exactly once across a crash::

    p.read_from(PostgresCdcSources.postgres("orders-cdc")...set_table_whitelist("public.orders").build())
     .with_timestamps(lambda r: r.value().to_map()["created_ms"], LAG)      # the order's own time
     .filter(SYNC or INSERT)                                                 # current rows, then new orders
     .map(kill-once)                                                         # --kill-after K
     .window(WindowDefinition.tumbling(WINDOW_MS))
     .grouping_key(customer)
     .aggregate(summing(amount))                                             # TimestampedEntry(end, cust, sum)
     .write_to(Sinks.jdbc_builder().update_query("INSERT INTO revenue ...").exactly_once(True).build())

``revenue`` has the primary key ``(window_end, customer)`` and the sink runs a plain ``INSERT``: a row written
twice would fail the job, a lost one shows in the final check. The job runs with ``EXACTLY_ONCE``: the CDC
source saves its log position in every snapshot and the sink commits one two-phase transaction per snapshot.

The example creates the tables, inserts ``--orders N`` orders at ``--rate`` a second while the job runs (then a
last order far ahead in time that closes every window), waits until ``revenue`` equals the sums computed from
``orders`` by SQL, and prints ``exactly once: ...`` (or what differs). ``--kill-after K`` kills the Spark Python
worker that runs the kill-once stage at the K-th order, once a revenue row was committed: the job restarts from
its last snapshot and the result is still exact. ``--dsn`` names the database (a libpq connection string; the
user needs the REPLICATION attribute and the server ``wal_level=logical``)::

    python examples/cdc_to_postgres.py --dsn "host=127.0.0.1 port=5432 dbname=shop user=jet password=..." \\
        --orders 2000 --rate 400 --kill-after 800
    jetspark render examples/cdc_to_postgres.py -o docs/img/cdc_to_postgres.svg      # no database needed
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from pipeline import Pipeline, Sinks, WindowDefinition
from processors import summing

WINDOW_MS = 1000
LAG_MS = 200
CLOSER = "__closer__"  # the customer of the last order, which only closes the windows
_DEFAULT_DSN = "host=127.0.0.1 port=5432 dbname=postgres user=postgres"


def _connect(dsn: str):
    import psycopg

    return psycopg.connect(dsn)


def _dsn_fields(dsn: str) -> dict:
    from psycopg.conninfo import conninfo_to_dict

    return conninfo_to_dict(dsn)


class KillOnce:
    """``record -> record``; at the ``after``-th order, once a revenue row exists, kills its own process (a
    Spark Python worker) -- once, remembered by a marker file that survives the restart."""

    def __init__(self, after: int | None, marker: str, dsn: str):
        self.after, self.marker, self.dsn, self.seen, self.next_check = after, marker, dsn, 0, 0.0

    def __call__(self, record):
        self.seen += 1
        if (self.after is not None and self.seen >= self.after and time.monotonic() >= self.next_check
                and not Path(self.marker).exists()):
            self.next_check = time.monotonic() + 0.2
            with _connect(self.dsn) as conn:
                committed = conn.execute("select count(*) from revenue").fetchone()[0]
            if committed:
                try:
                    os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    return record
                os.kill(os.getpid(), signal.SIGKILL)
        return record


def build_pipeline(dsn: str = _DEFAULT_DSN, kill_after: int | None = None, marker: str = "",
                   slot: str = "jetspark_orders") -> Pipeline:
    """The pipeline of the module docstring (building it connects to nothing)."""
    from connectors.cdc import Operation, PostgresCdcSources

    fields = _dsn_fields(dsn)
    source = (PostgresCdcSources.postgres("orders-cdc")
              .set_database_address(fields.get("host", "localhost")).set_database_port(int(fields.get("port", 5432)))
              .set_database_user(fields.get("user", "")).set_database_password(fields.get("password", ""))
              .set_database_name(fields.get("dbname", "")).set_table_whitelist("public\\.orders")
              .set_replication_slot_name(slot).set_replication_slot_drop_on_stop(True).build())
    sink = (Sinks.jdbc_builder()
            .update_query("INSERT INTO revenue (window_end, customer, revenue) VALUES (%s, %s, %s)")
            .connection_fn(functools.partial(_connect, dsn))
            .bind_fn(lambda e: (e.timestamp, e.key, e.value))
            .exactly_once(True).build())
    p = Pipeline.create()
    (p.read_from(source)
     .with_timestamps(lambda r: r.value().to_map()["created_ms"], LAG_MS)
     .filter(lambda r: r.operation() in (Operation.SYNC, Operation.INSERT))
     .map(KillOnce(kill_after, marker, dsn))
     .window(WindowDefinition.tumbling(WINDOW_MS))
     .grouping_key(lambda r: r.value().to_map()["customer"])
     .aggregate(summing(lambda r: r.value().to_map()["amount"]))
     .write_to(sink))
    return p


def job():
    """``jetspark render examples/cdc_to_postgres.py``: the pipeline, drawn without a database."""
    return build_pipeline()


def create_tables(dsn: str) -> None:
    """Fresh ``orders`` and ``revenue`` tables."""
    with _connect(dsn) as conn:
        conn.execute("drop table if exists orders, revenue")
        conn.execute("create table orders (id int primary key, customer text not null, amount numeric(12, 2) "
                     "not null, created_ms bigint not null)")
        conn.execute("create table revenue (window_end bigint, customer text, revenue numeric(14, 2) not null, "
                     "primary key (window_end, customer))")


def insert_orders(dsn: str, count: int, rate: int) -> None:
    """``count`` orders of 7 customers at ``rate`` a second, stamped with the wall clock, then the closer."""
    with _connect(dsn) as conn:
        conn.autocommit = True
        start = time.monotonic()
        for n in range(count):
            pause = start + n / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            conn.execute("insert into orders values (%s, %s, %s, %s)",
                         (n, f"customer-{n % 7}", (n % 50) + 0.25, int(time.time() * 1000)))
        conn.execute("insert into orders values (%s, %s, 0, %s)",
                     (count, CLOSER, int(time.time() * 1000) + 10 * WINDOW_MS))


def expected_revenue(dsn: str) -> set:
    """What ``revenue`` must hold: the tumbling-window sums computed by SQL."""
    with _connect(dsn) as conn:
        return set(conn.execute(
            f"select (created_ms / {WINDOW_MS}) * {WINDOW_MS} + {WINDOW_MS}, customer, sum(amount) from orders "
            f"where customer <> %s group by 1, 2", (CLOSER,)).fetchall())


def actual_revenue(dsn: str) -> set:
    with _connect(dsn) as conn:
        return set(conn.execute("select window_end, customer, revenue from revenue where customer <> %s",
                                (CLOSER,)).fetchall())


def check(dsn: str) -> str:
    """``"exactly once: ..."``, or what is missing or extra."""
    expected, actual = expected_revenue(dsn), actual_revenue(dsn)
    if expected == actual:
        return f"exactly once: {len(actual)} window results, equal to the sums of the orders"
    return (f"NOT exact: {len(expected - actual)} results missing or different (e.g. "
            f"{sorted(expected - actual)[:3]}), {len(actual - expected)} unexpected")


def run(engine, dsn: str, orders: int, rate: int, kill_after: int | None, timeout: float = 180.0) -> str:
    """Create the tables, run the job while inserting the orders, wait for the exact result, stop the job."""
    from dag import JobConfig, ProcessingGuarantee

    create_tables(dsn)
    marker = str(Path(tempfile.mkdtemp(prefix="cdc-example-")) / "killed")
    config = JobConfig(name="cdc-to-postgres", processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE,
                       snapshot_interval_ms=200)
    job = engine.new_job(build_pipeline(dsn, kill_after, marker), config)
    try:
        writer = threading.Thread(target=insert_orders, args=(dsn, orders, rate), daemon=True)
        writer.start()
        writer.join(timeout)
        deadline = time.monotonic() + timeout
        while actual_revenue(dsn) != expected_revenue(dsn) and time.monotonic() < deadline:
            if job.status.is_terminal:
                job.join()  # raises the job's failure
            time.sleep(0.2)
        time.sleep(1.0)  # a doubled row would fail the job (primary key) within this time
        if job.status.is_terminal:
            job.join()
        restarts = job.metrics().restarts
    finally:
        if not job.status.is_terminal:
            job.cancel()
            try:
                job.join(timeout=60)
            except Exception:  # noqa: BLE001 - cancelled on purpose
                pass
    return f"{check(dsn)}; restarts: {restarts}; killed worker: {Path(marker).exists()}"


def main(argv: list[str]) -> int:
    from dag import Engine, JobFailedError

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", default=_DEFAULT_DSN, help="libpq connection string of the database")
    parser.add_argument("--orders", type=int, default=2000, help="how many orders (default 2000)")
    parser.add_argument("--rate", type=int, default=400, help="orders a second (default 400)")
    parser.add_argument("--kill-after", type=int, default=None, help="kill a Python worker at this order")
    args = parser.parse_args(argv)
    with Engine() as engine:
        try:
            print(run(engine, args.dsn, args.orders, args.rate, args.kill_after))
        except JobFailedError as exc:
            print(f"the job failed: {exc}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
