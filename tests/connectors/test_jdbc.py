"""``connectors.jdbc`` against a real PostgreSQL server (the session's private cluster, ``tests/postgres.py``):
the parallel and the streaming read, the batched sink (also through a server restart), the exactly-once sink
across injected restarts, and bad input; after every test nothing is left open on the server (connections,
prepared transactions, replication slots)."""

from __future__ import annotations

import functools
import logging
import sqlite3
import time
from pathlib import Path

import psycopg
import pytest

from connectors.jdbc import read_jdbc_p, write_jdbc_p
from dag import DAG, Engine, EngineConfig, ExecutionMode, JobConfig, JobFailedError, ProcessingGuarantee
from edges import between
from pipeline import Pipeline, Sinks, Sources
from processors import Inbox, write_list_p
from tests.support import counter_stream, free_base_port, numbers, running, unique, wait_for
from tests.support.processors import FailAt, sequence

pytestmark = pytest.mark.spark

STAGED, PIPELINED = ExecutionMode.STAGED, ExecutionMode.PIPELINED
EXACTLY_ONCE = ProcessingGuarantee.EXACTLY_ONCE
TIMEOUT = 240


@pytest.fixture(autouse=True)
def no_leaks(postgres):
    yield
    postgres.wait_no_leaks()


def _engine(engine, members: int):
    return engine if members == 1 else Engine(EngineConfig(members=members), spark=engine.spark)


def _table(pg, rows: int = 0) -> str:
    name = unique("t").replace("-", "_")
    pg.query(f"create table {name} (id int primary key, name text)")
    if rows:
        pg.query(f"insert into {name} select g, 'n' || g from generate_series(0, {rows - 1}) g")
    return name


def _content(pg, table: str) -> list[tuple]:
    return pg.query(f"select id, name from {table} order by id")


# ---------------------------------------------------------------------------------------------------- source
@pytest.mark.parametrize("members", [1, 2])
@pytest.mark.parametrize("mode", [STAGED, PIPELINED])
def test_read_when_result_set_fn_shares_then_every_row_once_from_every_processor(engine, postgres, members, mode):
    table, out = _table(postgres, 5000), unique("rows")

    def share(conn, parallelism, index):
        return conn.execute(f"select id, name from {table} where id %% %s = %s", (parallelism, index))

    dag = DAG()
    source = dag.new_vertex("jdbcSource", read_jdbc_p(postgres.connection_fn(), share), local_parallelism=2)
    dag.edge(between(source, dag.new_vertex("sink", write_list_p(out))))
    eng = _engine(engine, members)
    eng.new_job(dag, JobConfig(execution_mode=mode)).join(timeout=TIMEOUT)
    assert sorted(eng.get_list(out)) == [(i, f"n{i}") for i in range(5000)]


def test_read_when_query_then_one_processor_streams_through_a_server_side_cursor_in_fetch_size_chunks(postgres):
    """Engine-free: the outbox takes 10 items per call; the server-side cursor has sent at most one fetch ahead."""
    table = _table(postgres, 20000)
    meta = read_jdbc_p(postgres.connection_fn(), f"select id from {table} order by id", lambda r: r[0],
                       fetch_size=100)
    proc = meta.get([0])(0).get(1)[0]
    taken: list = []

    class SmallOutbox:
        def offer_many(self, items, start=0):
            end = min(len(items), start + 10)
            taken.extend(items[start:end])
            return end

    from processors import Context

    proc.init(SmallOutbox(), Context(vertex_name="jdbcSource"))
    assert proc.complete() is False
    assert isinstance(proc._cursor, psycopg.ServerCursor) and proc._cursor.rownumber <= 100  # noqa: SLF001
    while not proc.complete():
        assert len(proc._pending) <= 100  # noqa: SLF001 - never more than one fetch held
    proc.close()
    assert taken == list(range(20000))


def test_read_when_pipeline_sources_jdbc_query_then_rows_as_created(engine, postgres):
    table, out = _table(postgres, 300), unique("rows")
    p = Pipeline.create()
    p.read_from(Sources.jdbc(postgres.connection_fn(), f"select id, name from {table}",
                             lambda row: f"{row[0]}:{row[1]}")).write_to(Sinks.list(out))
    assert "jdbcSource" in p.to_dag().to_dot()
    engine.new_job(p).join(timeout=TIMEOUT)
    assert sorted(engine.get_list(out)) == sorted(f"{i}:n{i}" for i in range(300))


# ---------------------------------------------------------------------------------------------------- sink
class _RecordingConnection:
    """Wraps a psycopg connection and records the size of every ``executemany`` and every commit."""

    def __init__(self, conn, log):
        self.conn, self.log = conn, log

    def cursor(self):
        outer = self

        class Cursor:
            def executemany(self, query, rows):
                outer.log.append(("batch", len(rows)))
                with outer.conn.cursor() as cur:
                    cur.executemany(query, rows)

            def close(self):
                pass

        return Cursor()

    def commit(self):
        self.log.append("commit")
        self.conn.commit()

    def rollback(self):
        self.conn.rollback()

    def close(self):
        self.conn.close()


def test_sink_when_items_then_batches_of_batch_limit_each_in_its_own_transaction(postgres):
    table, log = _table(postgres), []
    meta = write_jdbc_p(f"insert into {table} values (%s, %s)", lambda: _RecordingConnection(postgres.connect(), log),
                        bind_fn=lambda i: (i, f"n{i}"), batch_limit=50)
    from processors import Context

    meta.init(Context(vertex_name="jdbcSink"))
    proc = meta.get([0])(0).get(1)[0]
    proc.init(None, Context(vertex_name="jdbcSink"))
    proc.process(0, Inbox(range(120)))
    proc.close()
    assert log == [("batch", 50), "commit", ("batch", 50), "commit", ("batch", 20), "commit"]
    assert _content(postgres, table) == [(i, f"n{i}") for i in range(120)]


@pytest.mark.parametrize("members", [1, 2])
@pytest.mark.parametrize("mode", [STAGED, PIPELINED])
def test_sink_when_pipeline_sinks_jdbc_then_table_holds_every_item(engine, postgres, members, mode):
    table, eng = _table(postgres), _engine(engine, members)
    p = Pipeline.create()
    p.read_from(Sources.list(numbers(eng, 3000))).write_to(
        Sinks.jdbc(f"insert into {table} values (%s, %s)", postgres.connection_fn(), lambda i: (i, f"n{i}")))
    eng.new_job(p, JobConfig(execution_mode=mode)).join(timeout=TIMEOUT)
    assert _content(postgres, table) == [(i, f"n{i}") for i in range(3000)]


def _until_marker(marker_dir: Path):
    """A batch source counting 0, 1, 2, ... (20 numbers per 10 ms) until ``marker_dir/stop`` exists; then it
    writes how many it emitted to ``marker_dir/count`` and completes."""
    from processors import SourceBuilder

    def fill(state, buf):
        if (marker_dir / "stop").exists():
            (marker_dir / "count").write_text(str(state["n"]))
            buf.close()
            return
        for _ in range(20):
            buf.add(state["n"])
            state["n"] += 1
        time.sleep(0.01)  # pacing the source (the behaviour): it runs until the test says stop

    return SourceBuilder.batch("numbers", lambda ctx: {"n": 0}).fill_buffer_fn(fill).build()


def test_sink_when_server_restarts_mid_job_then_reconnects_logs_the_retry_and_loses_nothing(
        engine, postgres, tmp_path, caplog):
    table = _table(postgres)
    upsert = f"insert into {table} values (%s, %s) on conflict (id) do update set name = excluded.name"
    dag = DAG()
    source = dag.new_vertex("numbers", _until_marker(tmp_path))
    sink = dag.new_vertex("jdbcSink", write_jdbc_p(upsert, postgres.connection_fn(), lambda i: (i, f"n{i}")),
                          local_parallelism=2)
    dag.edge(between(source, sink))

    def rows():
        return postgres.query(f"select count(*) from {table}")[0][0]

    with caplog.at_level(logging.WARNING, logger="jetspark"):
        job = engine.new_job(dag, JobConfig(execution_mode=PIPELINED))
        try:
            wait_for(lambda: rows() > 200, 60, "the first rows")
            postgres.restart()
            after = rows()
            wait_for(lambda: rows() > after + 200, 60, "rows written after the restart")
        finally:
            (tmp_path / "stop").touch()
            job.join(timeout=TIMEOUT)
    count = int((tmp_path / "count").read_text())
    assert _content(postgres, table) == [(i, f"n{i}") for i in range(count)]
    assert any("reconnecting and retrying the batch" in r.getMessage() for r in caplog.records), \
        [r.getMessage() for r in caplog.records]


# ---------------------------------------------------------------------------------------------------- exactly-once
@pytest.mark.parametrize("members,kill", [(1, False), (2, False), (1, True)])
def test_exactly_once_sink_when_restarted_then_each_row_once_and_no_prepared_transaction_left(
        engine, postgres, tmp_path, members, kill):
    """A plain INSERT into a primary key: a duplicate would fail the job; a loss shows in the content."""
    table, n = _table(postgres), 3000
    dag = DAG()
    source = dag.new_vertex("sequence", sequence(n))
    middle = dag.new_vertex("middle", lambda: FailAt([n // 3, 2 * n // 3], tmp_path, kill=kill), local_parallelism=2)
    sink = dag.new_vertex("jdbcSink", write_jdbc_p(f"insert into {table} values (%s, %s)", postgres.connection_fn(),
                                                   lambda i: (i, f"n{i}"), exactly_once=True), local_parallelism=2)
    dag.edge(between(source, middle))
    dag.edge(between(middle, sink))
    job = _engine(engine, members).new_job(dag, JobConfig(
        execution_mode=PIPELINED, processing_guarantee=EXACTLY_ONCE, snapshot_interval_ms=100))
    job.join(timeout=TIMEOUT)
    assert job.metrics().restarts >= 1
    assert _content(postgres, table) == [(i, f"n{i}") for i in range(n)]
    assert postgres.query("select gid from pg_prepared_xacts") == []


def test_exactly_once_sink_when_job_cancelled_then_its_prepared_transactions_rolled_back(engine, postgres):
    """One sink processor: a snapshot's items are one transaction, committed whole or rolled back, so what a
    cancel at any moment leaves is a prefix of the stream (with two, a cancel between their phase-2 commits
    would leave one processor's share of a snapshot only: a committed set with holes, by design)."""
    table = _table(postgres)
    p = Pipeline.create()
    p.read_from(counter_stream("numbers", 0.01)).without_timestamps().write_to(
        Sinks.jdbc_builder().update_query(f"insert into {table} values (%s, %s)")
        .connection_fn(postgres.connection_fn()).bind_fn(lambda i: (i, f"n{i}")).exactly_once(True).build()
    ).set_local_parallelism(1)
    # running() cancels the job and checks that it ended by the cancellation (no duplicate-key failure first)
    with running(engine, p, JobConfig(processing_guarantee=EXACTLY_ONCE, snapshot_interval_ms=200)):
        wait_for(lambda: postgres.query(f"select count(*) from {table}")[0][0] > 0, 60, "a committed snapshot")
    rows = [r[0] for r in postgres.query(f"select id from {table} order by id")]
    assert rows == list(range(len(rows)))  # a committed prefix, each once
    assert postgres.query("select gid from pg_prepared_xacts") == []


def test_exactly_once_sink_when_connection_has_no_tpc_then_refused_at_start(engine, postgres, tmp_path):
    connect = functools.partial(sqlite3.connect, str(tmp_path / "db.sqlite"))
    p = Pipeline.create()
    p.read_from(Sources.list(numbers(engine, 10))).write_to(
        Sinks.jdbc_builder().update_query("insert into t values (?)").connection_fn(connect)
        .bind_fn(lambda i: (i,)).exactly_once(True).build())
    job = engine.new_job(p, JobConfig(execution_mode=PIPELINED, processing_guarantee=EXACTLY_ONCE))
    with pytest.raises(JobFailedError, match=r"jdbcSink.*no DB-API two-phase commit methods .*tpc_begin"):
        job.join(timeout=60)


# ---------------------------------------------------------------------------------------------------- bad input
def _bad_cases(pg, table):
    good = pg.connection_fn()
    return {
        "wrong password": (pg.connection_fn(password="not-the-password"), f"select id from {table}",
                           "password authentication failed"),
        "unreachable port": (pg.connection_fn(port=free_base_port(1)), f"select id from {table}", "refused"),
        "missing table": (good, "select id from no_such_table", 'relation "no_such_table" does not exist'),
        "broken sql": (good, "selec id frm", 'syntax error at or near "selec"'),
    }


@pytest.mark.parametrize("case", ["wrong password", "unreachable port", "missing table", "broken sql"])
@pytest.mark.parametrize("side", ["source", "sink"])
def test_bad_input_when_job_runs_then_fails_at_first_contact_naming_vertex_server_and_message(
        engine, postgres, case, side):
    table = _table(postgres, 5)
    connect, query, message = _bad_cases(postgres, table)[case]
    p = Pipeline.create()
    if side == "source":
        p.read_from(Sources.jdbc(connect, query)).write_to(Sinks.noop())
    else:
        update = query.replace("select id from", "insert into") + " values (%s)"
        p.read_from(Sources.list(numbers(engine, 5))).write_to(Sinks.jdbc(update, connect, lambda i: (i,)))
    with pytest.raises(JobFailedError) as failed:  # STAGED: PIPELINED may report a peer's broken link first
        engine.new_job(p, JobConfig(execution_mode=STAGED)).join(timeout=60)
    text = str(failed.value)
    vertex = "jdbcSource" if side == "source" else "jdbcSink"
    assert vertex in text and "127.0.0.1:" in text and message in text, text
    assert "reconnecting" not in text  # a configuration error fails at once: no bounded retry loop first
    assert "s3cret-pw" not in text and "not-the-password" not in text


def test_exactly_once_sink_when_crash_between_prepare_and_finish_then_restore_commits_it_and_rolls_back_later_ones(
        postgres):
    """Engine-free, deterministic: the restored snapshot's prepared transaction is committed; one prepared after
    that snapshot (its items are replayed) is rolled back; a processor never reuses a transaction id."""
    from processors.io.jdbc_two_phase import TwoPhaseJdbcSinkP, xid_prefix
    from processors import Context

    table, prefix = _table(postgres), xid_prefix("test", 7)
    query = f"insert into {table} values (%s, %s)"

    class SnapshotOutbox:
        def __init__(self):
            self.entries = []

        def offer_to_snapshot(self, key, value):
            self.entries.append((key, value))
            return True

    def sink(outbox):
        proc = TwoPhaseJdbcSinkP(query, postgres.connection_fn(), lambda i: (i, f"n{i}"), 50, prefix)
        proc.init(outbox, Context(vertex_name="jdbcSink", processing_guarantee=EXACTLY_ONCE))
        return proc

    snap1 = SnapshotOutbox()
    first = sink(snap1)
    first.process(0, Inbox(range(0, 10)))
    first.snapshot_commit_prepare()  # snapshot 1 covers 0..9; its phase 2 never comes (a crash)
    first.process(0, Inbox(range(10, 20)))
    first.snapshot_commit_prepare()  # snapshot 2 (never completes) covers 10..19
    first.process(0, Inbox(range(20, 25)))  # open, never prepared
    first.close()
    assert len(postgres.query("select gid from pg_prepared_xacts")) == 2

    second = sink(SnapshotOutbox())
    second.restore_from_snapshot(Inbox([(k, v) for k, v in snap1.entries[:1]]))  # snapshot 1's entries
    assert second.finish_snapshot_restore() is True
    assert _content(postgres, table) == [(i, f"n{i}") for i in range(10)]  # committed; 10..19 rolled back
    assert postgres.query("select gid from pg_prepared_xacts") == []
    assert second._seq == 2  # noqa: SLF001 - after the rolled back transaction 1, never reused
    second.process(0, Inbox(range(10, 25)))  # the replay
    assert second.complete() is True
    second.close()
    assert _content(postgres, table) == [(i, f"n{i}") for i in range(25)]
