"""``connectors.cdc`` against the session's private PostgreSQL server (``wal_level=logical``): SYNC then changes
into ``CdcSinks.map`` on one and two members, exactly-once replay across an injected restart, resuming after the
server restarts, and refusals (a server without ``wal_level=logical``, a wrong password). After every test
nothing is left on the server (connections, slots, prepared transactions)."""

from __future__ import annotations

import logging
import pickle
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from connectors.cdc import CdcSinks, PostgresCdcSources
from connectors.cdc_records import ChangeRecord, Operation
from dag import Engine, EngineConfig, JobConfig, JobFailedError, ProcessingGuarantee, RestartableError
from pipeline import Pipeline, Sinks
from processors import AbstractProcessor
from tests.postgres import DATABASE, PASSWORD, USER, PostgresServer
from tests.support import free_base_port, once, running, unique, wait_for

EXACTLY_ONCE = ProcessingGuarantee.EXACTLY_ONCE
TIMEOUT = 240


# ---------------------------------------------------------------------------------------------------- records
def test_change_record_when_pickled_then_equal_and_parts_convert():
    record = ChangeRecord(Operation.UPDATE, "db", "public", "orders", 1700000000000, 99, 2, {"id": 1},
                          {"id": 1, "customer": "ann"})
    assert pickle.loads(pickle.dumps(record)) == record
    assert record != ChangeRecord(Operation.UPDATE, "db", "public", "orders", 1700000000000, 99, 3, {"id": 1},
                                  {"id": 1, "customer": "ann"})

    @dataclass
    class Order:
        id: int
        customer: str

    assert record.value().to_object(Order) == Order(1, "ann")
    assert record.key().to_json() == '{"id": 1}'
    assert '"operation": "UPDATE"' in record.to_json() and record.operation() is Operation.UPDATE


def test_change_record_when_truncate_then_unspecified_without_parts_and_pickles():
    truncate = ChangeRecord(Operation.UNSPECIFIED, "db", "public", "orders", 1700000000000, 99, 1, {}, {},
                            truncate=True)
    assert pickle.loads(pickle.dumps(truncate)) == truncate and truncate.is_truncate()
    assert truncate != ChangeRecord(Operation.UNSPECIFIED, "db", "public", "orders", 1700000000000, 99, 1, {}, {})
    assert truncate.key().to_map() == {} == truncate.value().to_map() and truncate.operation() is Operation.UNSPECIFIED
    assert '"truncate": true' in truncate.to_json() and "TRUNCATE public.orders" in repr(truncate)
    with pytest.raises(ValueError, match="TRUNCATE record of public.orders"):
        ChangeRecord(Operation.DELETE, "db", "public", "orders", 0, 99, 1, {"id": 1}, {}, truncate=True)


# ---------------------------------------------------------------------------------------------------- helpers
@pytest.fixture(autouse=True)
def no_leaks(request):
    yield
    if "postgres" in request.fixturenames:
        request.getfixturevalue("postgres").wait_no_leaks()


def _orders(pg, rows: int) -> str:
    name = unique("orders").replace("-", "_")
    pg.query(f"create table {name} (id int primary key, customer text, amount numeric(10, 2))")
    if rows:
        pg.query(f"insert into {name} select g, 'c' || (g % 5), g from generate_series(1, {rows}) g")
    return name


def _source(pg, table: str, name: str = "cdc", drop: bool = True, password: str = PASSWORD, port=None):
    return (PostgresCdcSources.postgres(name).set_database_address("127.0.0.1")
            .set_database_port(port or pg.port).set_database_user(USER).set_database_password(password)
            .set_database_name(DATABASE).set_table_whitelist(f"public\\.{table}")
            .set_replication_slot_name(f"s_{table}"[:63]).set_replication_slot_drop_on_stop(drop).build())


def _table_map(pg, table: str) -> dict:
    return {r[0]: {"id": r[0], "customer": r[1], "amount": r[2]}
            for r in pg.query(f"select id, customer, amount from {table}")}


def _map_pipeline(pg, table, map_name, log_name=None, middle=None):
    p = Pipeline.create()
    stage = p.read_from(_source(pg, table)).with_native_timestamps(0)
    if middle is not None:
        stage = stage.custom_transform("fail-once", middle)
    stage.write_to(CdcSinks.map(map_name, lambda r: r.key().to_map()["id"], lambda r: r.value().to_map()))
    if log_name:
        stage.map(lambda r: ("TRUNCATE" if r.is_truncate() else r.operation().name, r.key().to_map().get("id"),
                             r.sequence_source(), r.sequence_value())).write_to(Sinks.list(log_name))
    return p


def _changes(pg, table: str) -> None:
    pg.query(f"insert into {table} values (1000, 'new', 5)")
    pg.query(f"update {table} set amount = 77 where id = 1")
    with pg.connect() as conn:  # one transaction, two changes of one key
        conn.execute(f"update {table} set customer = 'x' where id = 3")
        conn.execute(f"update {table} set customer = 'y' where id = 3")
    pg.query(f"delete from {table} where id = 2")


# ---------------------------------------------------------------------------------------------------- SYNC + changes
@pytest.mark.spark
@pytest.mark.parametrize("members", [1, 2])
def test_cdc_when_rows_then_changes_then_map_equals_table_and_records_in_commit_order(engine, postgres, members):
    eng = engine if members == 1 else Engine(EngineConfig(members=2), spark=engine.spark)
    table, map_name, log_name = _orders(postgres, 50), unique("m"), unique("log")
    job_config = JobConfig(processing_guarantee=EXACTLY_ONCE, snapshot_interval_ms=200)
    with running(eng, _map_pipeline(postgres, table, map_name, log_name), job_config):
        target = eng.get_map(map_name)
        wait_for(lambda: len(target) == 50, 60, lambda: f"50 SYNC rows, got {len(target)}")
        _changes(postgres, table)
        wait_for(lambda: dict(target) == _table_map(postgres, table), 30,
                 lambda: f"the map to equal the table, map has {len(target)} keys")
        wait_for(lambda: len(eng.get_list(log_name)) == 55, 30,
                 lambda: f"55 records in the log, got {list(eng.get_list(log_name))[50:]}")
        log = list(eng.get_list(log_name))
    assert sorted(r[1] for r in log if r[0] == "SYNC") == list(range(1, 51))
    changes = sorted((r for r in log if r[0] != "SYNC"), key=lambda r: (r[2], r[3]))
    assert [(op, key) for op, key, _s, _v in changes] == [
        ("INSERT", 1000), ("UPDATE", 1), ("UPDATE", 3), ("UPDATE", 3), ("DELETE", 2)]
    sync_point = {r[2] for r in log if r[0] == "SYNC"}
    assert len(sync_point) == 1 and min(r[2] for r in changes) > sync_point.pop()


# ---------------------------------------------------------------------------------------------------- TRUNCATE
@pytest.mark.spark
@pytest.mark.parametrize("members", [1, 2])
def test_cdc_when_table_truncated_between_inserts_then_truncate_reported_in_order_and_map_equals_table(
        engine, postgres, members):
    eng = engine if members == 1 else Engine(EngineConfig(members=2), spark=engine.spark)
    table, other, map_name, log_name = _orders(postgres, 5), _orders(postgres, 2), unique("m"), unique("log")
    with running(eng, _map_pipeline(postgres, table, map_name, log_name),
                 JobConfig(processing_guarantee=EXACTLY_ONCE, snapshot_interval_ms=200)):
        target = eng.get_map(map_name)
        wait_for(lambda: len(target) == 5, 60, lambda: f"5 SYNC rows, got {len(target)}")
        for key in (10, 11):
            postgres.query(f"insert into {table} values ({key}, 'before', 1)")
        postgres.query(f"truncate {table}, {other}")  # the other table is not captured: no record
        for key in (20, 21):
            postgres.query(f"insert into {table} values ({key}, 'after', 2)")
        wait_for(lambda: dict(target) == _table_map(postgres, table), 30,
                 lambda: f"the map to equal the table, map has keys {sorted(target)}")
        wait_for(lambda: len(eng.get_list(log_name)) == 10, 30,
                 lambda: f"10 records in the log, got {list(eng.get_list(log_name))}")
        log = list(eng.get_list(log_name))
    assert set(target) == {20, 21}
    changes = sorted((r for r in log if r[0] != "SYNC"), key=lambda r: (r[2], r[3]))
    assert [(op, key) for op, key, _s, _v in changes] == [
        ("INSERT", 10), ("INSERT", 11), ("TRUNCATE", None), ("INSERT", 20), ("INSERT", 21)]


class FailOnceAfterTruncate(AbstractProcessor):
    """Passes records on. Once a truncate went through, the next snapshot waits (``save_to_snapshot`` returns
    False) until the test creates ``go``, then fails with ``RestartableError`` (once across processes): no
    snapshot completes after the truncate, so the restart replays it (and the rows before it in its transaction)
    after the map sink applied it."""

    def __init__(self, marker: Path, go: Path):
        super().__init__()
        self.marker, self.go, self.truncated = marker, go, False

    def try_process0(self, item):
        self.truncated = self.truncated or item.is_truncate()
        return self.try_emit(item)

    def save_to_snapshot(self):
        if not self.truncated:
            return True
        if not self.go.exists():
            return False
        if once(self.marker):
            raise RestartableError("injected after the truncate")
        return True


@pytest.mark.spark
def test_cdc_when_restart_replays_across_truncate_then_map_still_equals_table_and_each_change_once(
        engine, postgres, tmp_path):
    table, map_name, log_name = _orders(postgres, 5), unique("m"), unique("log")
    go = tmp_path / "go"
    pipeline = _map_pipeline(postgres, table, map_name, log_name,
                             middle=lambda: FailOnceAfterTruncate(tmp_path / "failed", go))
    with running(engine, pipeline, JobConfig(processing_guarantee=EXACTLY_ONCE, snapshot_interval_ms=100)) as job:
        target = engine.get_map(map_name)
        wait_for(lambda: len(target) == 5, 60, "the SYNC rows")
        postgres.query(f"insert into {table} values (100, 'streamed', 1)")
        wait_for(lambda: 100 in target, 30, "the first change")
        seen = job.metrics().last_snapshot or 0
        wait_for(lambda: (job.metrics().last_snapshot or 0) >= seen + 2, 60, "two snapshots while streaming")
        with postgres.connect() as conn:  # rows older than the truncate in its transaction: replayed after it
            conn.execute(f"insert into {table} values (200, 'gone', 2)")
            conn.execute(f"update {table} set amount = 9 where id = 1")
            conn.execute(f"truncate {table}")
            conn.execute(f"insert into {table} values (300, 'kept', 3)")
        wait_for(lambda: not set(target) - {300}, 30, lambda: f"the truncate in the map, has {sorted(target)}")
        go.touch()
        wait_for(lambda: job.metrics().restarts >= 1, 60, "the injected restart")
        postgres.query(f"insert into {table} values (400, 'last', 4)")  # after every other change (commit order)
        wait_for(lambda: ("INSERT", 400) in {r[:2] for r in engine.get_list(log_name)}, 60, "the last change")
        wait_for(lambda: dict(target) == _table_map(postgres, table), 60,
                 lambda: f"the map to equal the table, has {sorted(target)}")
        log = list(engine.get_list(log_name))
        assert job.metrics().restart_log[0].from_snapshot is not None  # a replay, not a new SYNC
    assert set(target) == {300, 400}
    assert sorted(r[1] for r in log if r[0] == "SYNC") == [1, 2, 3, 4, 5]
    changes = sorted((r for r in log if r[0] != "SYNC"), key=lambda r: (r[2], r[3]))
    assert [(op, key) for op, key, _s, _v in changes] == [
        ("INSERT", 100), ("INSERT", 200), ("UPDATE", 1), ("TRUNCATE", None), ("INSERT", 300), ("INSERT", 400)]


# ---------------------------------------------------------------------------------------------------- restart replay
class FailOnceAfterCommit(AbstractProcessor):
    """Passes records on; once ``after`` changes (not SYNC) went through and a snapshot completed since, raises
    ``RestartableError`` (once across processes), so the restart replays from a snapshot inside the changes."""

    def __init__(self, marker: Path, after: int):
        super().__init__()
        self.marker, self.after, self.seen, self.committed = marker, after, 0, False

    def try_process0(self, item):
        self.seen += item.operation() is not Operation.SYNC
        return self.try_emit(item)

    def snapshot_commit_finish(self, success):
        self.committed = self.committed or (success and self.seen >= self.after)
        return True

    def try_process(self):
        if self.committed and self.seen >= self.after and once(self.marker):
            raise RestartableError(f"injected after {self.seen} changes")
        return True


@pytest.mark.spark
def test_cdc_when_job_restarts_mid_stream_then_every_change_reaches_the_sinks_exactly_once(
        engine, postgres, tmp_path):
    table, map_name, log_name = _orders(postgres, 10), unique("m"), unique("log")
    pipeline = _map_pipeline(postgres, table, map_name, log_name,
                             middle=lambda: FailOnceAfterCommit(tmp_path / "failed", 40))
    with running(engine, pipeline, JobConfig(processing_guarantee=EXACTLY_ONCE, snapshot_interval_ms=100)) as job:
        target = engine.get_map(map_name)
        wait_for(lambda: len(target) == 10, 60, "the SYNC rows")
        for i in range(100):
            postgres.query(f"insert into {table} values ({100 + i}, 'c', {i})")
            if i % 10 == 0:
                postgres.query(f"update {table} set amount = amount + 1 where id = 1")
            time.sleep(0.01)  # pacing the changes (the behaviour): snapshots fall between them
        wait_for(lambda: job.metrics().restarts >= 1, 60, "the injected restart")
        # a last change after every other: the source emits in commit order, so once it is in the log, any
        # replayed change came before it (no fixed pause that a slow machine could outlast)
        postgres.query(f"insert into {table} values (-1, 'last', 0)")
        wait_for(lambda: ("INSERT", -1) in {r[:2] for r in engine.get_list(log_name)}, 60, "the last change")
        wait_for(lambda: dict(target) == _table_map(postgres, table), 60, "the map to equal the table")
        log = list(engine.get_list(log_name))
    changes = [r for r in log if r[0] != "SYNC" and r[1] != -1]
    assert len(changes) == 110 and len(set(changes)) == 110  # each change once, none lost
    assert (tmp_path / "failed").exists()


@pytest.mark.spark
def test_cdc_when_server_restarts_then_source_resumes_from_its_slot(engine, postgres):
    table, map_name = _orders(postgres, 5), unique("m")
    with running(engine, _map_pipeline(postgres, table, map_name),
                 JobConfig(processing_guarantee=EXACTLY_ONCE, snapshot_interval_ms=200)):
        target = engine.get_map(map_name)
        wait_for(lambda: len(target) == 5, 60, "the SYNC rows")
        postgres.query(f"insert into {table} values (100, 'before', 1)")
        wait_for(lambda: 100 in target, 30, "the change before the restart")
        postgres.restart()
        postgres.query(f"insert into {table} values (101, 'after', 2)")
        postgres.query(f"delete from {table} where id = 1")
        wait_for(lambda: dict(target) == _table_map(postgres, table), 60, "the map to equal the table")


@pytest.mark.spark
def test_cdc_when_slot_kept_then_it_outlives_the_job(engine, postgres):
    table = _orders(postgres, 1)
    p = Pipeline.create()
    p.read_from(_source(postgres, table, drop=False)).with_native_timestamps(0).write_to(Sinks.noop())
    with running(engine, p):
        wait_for(lambda: postgres.query("select 1 from pg_replication_slots where slot_name = %s",
                                        (f"s_{table}",)), 60, "the slot")
    wait_for(lambda: not postgres.query("select 1 from pg_replication_slots where active"), 15, "an idle slot")
    assert postgres.query("select slot_name from pg_replication_slots") == [(f"s_{table}",)]
    postgres.query("select pg_drop_replication_slot(%s)", (f"s_{table}",))


# ---------------------------------------------------------------------------------------------------- refusals
@pytest.mark.spark
def test_cdc_when_server_has_no_logical_wal_then_refused_at_start_naming_the_setting(engine):
    with PostgresServer.started(wal_level="replica") as plain:
        plain.query("create table orders (id int primary key)")
        p = Pipeline.create()
        p.read_from(_source(plain, "orders")).with_native_timestamps(0).write_to(Sinks.noop())
        with pytest.raises(JobFailedError, match=r"cdc.*wal_level=replica.*wal_level = logical"):
            engine.new_job(p).join(timeout=60)  # refused at job start, on the driver
        plain.wait_no_leaks()


@pytest.mark.spark
@pytest.mark.parametrize("case", ["wrong password", "unreachable port"])
def test_cdc_when_bad_credentials_or_port_then_fails_at_start_naming_vertex_and_server_not_the_password(
        engine, postgres, case):
    table = _orders(postgres, 0)
    port = free_base_port(1) if case == "unreachable port" else postgres.port
    password = "wrong-pw" if case == "wrong password" else PASSWORD
    p = Pipeline.create()
    p.read_from(_source(postgres, table, password=password, port=port)).with_native_timestamps(0) \
        .write_to(Sinks.noop())
    with pytest.raises(JobFailedError) as failed:
        engine.new_job(p).join(timeout=60)
    text = str(failed.value)
    assert f"vertex 'cdc'): connecting on 127.0.0.1:{port}" in text, text  # the first contact, not a retry loop
    assert "reconnecting" not in text
    assert ("password authentication failed" if case == "wrong password" else "refused") in text, text
    assert "wrong-pw" not in text and PASSWORD not in text


# ---------------------------------------------------------------------------------------------------- confirmation
class _Outbox:
    """Takes everything; keeps the items and the snapshot entries."""

    def __init__(self):
        self.items, self.snapshot = [], []

    def offer_many(self, items, start=0):
        self.items.extend(items[start:])
        return len(items)

    def offer_to_snapshot(self, key, value):
        self.snapshot.append((key, value))
        return True


def test_cdc_source_when_snapshot_completes_then_server_may_discard_only_up_to_its_position(postgres):
    """Engine-free: the slot's confirmed position stays at its start until a snapshot completes, then moves to
    exactly that snapshot's position (not to changes emitted after it)."""
    from connectors.cdc_source import StreamPostgresCdcP
    from connectors.pg_replication import format_lsn
    from processors import Context

    table = _orders(postgres, 2)
    config = _source(postgres, table).supplier._config  # noqa: SLF001 - the built source's configuration
    proc, out = StreamPostgresCdcP(config), _Outbox()
    proc.init(out, Context(vertex_name="cdc", processing_guarantee=EXACTLY_ONCE))

    def confirmed():
        return postgres.query("select confirmed_flush_lsn::text from pg_replication_slots where slot_name = %s",
                              (config.slot(),))[0][0]

    def emit_until(count):
        deadline = time.monotonic() + 30
        while len(out.items) < count:
            assert time.monotonic() < deadline, f"{count} records expected, got {out.items}"
            proc.complete()

    try:
        emit_until(2)  # the SYNC rows
        start = confirmed()
        postgres.query(f"insert into {table} values (10, 'a', 1)")
        emit_until(3)
        assert proc.save_to_snapshot() and proc.snapshot_commit_prepare()
        saved = out.snapshot[-1][1]["position"]
        postgres.query(f"insert into {table} values (11, 'b', 2)")
        emit_until(4)
        for _ in range(20):
            proc.complete()  # status messages go out; nothing may be confirmed yet
        assert confirmed() == start
        assert proc.snapshot_commit_finish(True)
        wait_for(lambda: confirmed() == format_lsn(saved), 10, lambda: f"{format_lsn(saved)}, is {confirmed()}")
        assert out.items[3].sequence_source() > saved  # the later change is not covered
    finally:
        proc.close()
        from connectors.cdc import drop_slot

        drop_slot(config)


def test_cdc_source_when_snapshot_requested_during_sync_then_it_waits_for_the_sync_and_every_row_precedes_it(
        postgres):
    """Engine-free: the SYNC cannot resume after a restart (its exported snapshot dies with the session), so a
    snapshot requested while it runs is saved only after the last SYNC row was emitted; until then each
    ``save_to_snapshot()`` call goes on with the SYNC and answers False."""
    from connectors.cdc import drop_slot
    from connectors.cdc_source import _FETCH, StreamPostgresCdcP
    from processors import Context

    rows = 2 * _FETCH + 100  # several chunks of SYNC rows
    table = _orders(postgres, rows)
    config = _source(postgres, table).supplier._config  # noqa: SLF001 - the built source's configuration
    proc, out = StreamPostgresCdcP(config), _Outbox()
    proc.init(out, Context(vertex_name="cdc", processing_guarantee=EXACTLY_ONCE))
    try:
        proc.complete()  # starts: creates the slot, opens the SYNC
        calls = 0
        while not proc.save_to_snapshot():
            calls += 1
            assert not out.snapshot, "saved before the SYNC ended"
            assert calls < 100, f"the SYNC did not end ({len(out.items)} of {rows} rows)"
        assert calls > 2  # the save went on with the SYNC over several calls
        assert [r.operation() for r in out.items] == [Operation.SYNC] * rows
        assert sorted(r.key().to_map()["id"] for r in out.items) == list(range(1, rows + 1))
        (key, state), = out.snapshot
        assert state["phase"] == "stream" and state["position"] > 0
    finally:
        proc.close()
        drop_slot(config)


def test_cdc_source_when_publication_omits_truncate_then_warns_at_start_naming_it(postgres, caplog):
    from connectors.cdc import drop_slot
    from connectors.cdc_source import StreamPostgresCdcP
    from processors import Context

    table = _orders(postgres, 1)
    publication = f"p_{table}"
    postgres.query(f"create publication {publication} for table {table} with (publish = 'insert, update, delete')")
    config = _source(postgres, table).supplier._config.model_copy(  # the built source's configuration
        update={"publication_name": publication})
    proc = StreamPostgresCdcP(config)
    proc.init(_Outbox(), Context(vertex_name="cdc", processing_guarantee=EXACTLY_ONCE))
    try:
        with caplog.at_level(logging.WARNING):
            proc.complete()  # starts: checks the publication, creates the slot
        assert f"publication {publication} on 127.0.0.1:{postgres.port}/{DATABASE} does not publish truncate" \
            in caplog.text, caplog.text
        assert "publish = 'insert, update, delete, truncate'" in caplog.text
    finally:
        proc.close()
        drop_slot(config)
        postgres.query(f"drop publication {publication}")
