"""A private PostgreSQL cluster for tests (not a test module): ``initdb`` in a temporary directory, a free
loopback port, password authentication for the user ``jet``, and ``wal_level=logical`` with room for prepared
transactions and replication slots.

The binaries are Debian's ``postgresql-15`` (``scripts/setup.sh`` installs it when missing). Running as root,
the cluster runs as the ``postgres`` user (PostgreSQL refuses root), which then owns the directory.

>>> with PostgresServer.started() as pg:                                  # doctest: +SKIP
...     with pg.connect() as conn: conn.execute("select 1")
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from tests.support import free_base_port

BIN = Path("/usr/lib/postgresql/15/bin")
USER, PASSWORD, DATABASE = "jet", "s3cret-pw", "jet"
_START_TIMEOUT = 60


class PostgresServer:
    """One private cluster; ``start()``/``stop()``/``restart()`` run ``pg_ctl`` with bounded waits."""

    def __init__(self, wal_level: str = "logical"):
        if not (BIN / "initdb").exists():
            raise RuntimeError(f"PostgreSQL binaries missing in {BIN}: run scripts/setup.sh (Debian postgresql-15)")
        self.wal_level = wal_level
        self.dir = Path(tempfile.mkdtemp(prefix="jetspark-pg-"))
        self.data = self.dir / "data"
        self.port = free_base_port(1)
        self._as = self._run_as()

    @staticmethod
    def _run_as() -> dict:
        if os.geteuid() != 0:
            return {}
        pw = pwd.getpwnam("postgres")
        return {"user": pw.pw_uid, "group": pw.pw_gid}

    def _run(self, *args: str, timeout: float = _START_TIMEOUT, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                              check=check, cwd=self.dir, **self._as)

    # ---------------------------------------------------------------- life cycle
    def start(self) -> "PostgresServer":
        """``initdb`` (first time) then start the server and wait until it accepts connections."""
        if self._as:
            os.chown(self.dir, self._as["user"], self._as["group"])
        if not self.data.exists():
            pwfile = self.dir / "pw"
            pwfile.write_text(PASSWORD)
            if self._as:
                os.chown(pwfile, self._as["user"], self._as["group"])
            self._run(BIN / "initdb", "-D", self.data, "-U", USER, "--pwfile", pwfile, "-A", "scram-sha-256",
                      "--no-sync", "-E", "UTF8")
            pwfile.unlink()
            with open(self.data / "postgresql.conf", "a") as conf:
                conf.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                           f"unix_socket_directories = '{self.dir}'\nwal_level = {self.wal_level}\n"
                           "max_prepared_transactions = 20\nmax_replication_slots = 20\nmax_wal_senders = 20\n"
                           "fsync = off\nfull_page_writes = off\n"
                           "shared_buffers = 32MB\nmax_connections = 100\n")
        self._run(BIN / "pg_ctl", "-D", self.data, "-l", self.dir / "log", "-w", "-t", str(_START_TIMEOUT), "start")
        self._wait_ready()
        with self.connect(dbname="postgres", autocommit=True) as conn:
            if not conn.execute("select 1 from pg_database where datname = %s", (DATABASE,)).fetchone():
                conn.execute(f"create database {DATABASE}")
        return self

    def _wait_ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            try:
                psycopg.connect(**self.params(dbname="postgres"), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop at once (``-m immediate``); nothing of the cluster keeps running."""
        if (self.data / "postmaster.pid").exists():
            self._run(BIN / "pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop", check=False)

    def restart(self) -> None:
        """``pg_ctl restart`` (fast mode: clients are disconnected), waiting until it accepts connections."""
        self._run(BIN / "pg_ctl", "-D", self.data, "-l", self.dir / "log", "-m", "fast", "-w",
                  "-t", str(_START_TIMEOUT), "restart")
        self._wait_ready()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    @classmethod
    @contextmanager
    def started(cls, wal_level: str = "logical"):
        server = cls(wal_level)
        try:
            yield server.start()
        finally:
            server.remove()

    # ---------------------------------------------------------------- clients
    def params(self, **overrides) -> dict:
        """psycopg connection keywords for the test user over TCP."""
        return {"host": "127.0.0.1", "port": self.port, "user": USER, "password": PASSWORD, "dbname": DATABASE,
                **overrides}

    def connect(self, **overrides):
        import psycopg

        autocommit = overrides.pop("autocommit", False)
        return psycopg.connect(**self.params(**overrides), autocommit=autocommit)

    def connection_fn(self, **overrides):
        """A picklable ``new_connection_fn`` for the connectors (runs in Spark's Python workers too)."""
        import psycopg

        return functools.partial(psycopg.connect, **self.params(**overrides))

    def query(self, sql: str, params=None) -> list[tuple]:
        """Run one statement in autocommit and return its rows (none for a statement without a result)."""
        with self.connect(autocommit=True) as conn:
            cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def leaks(self) -> dict:
        """Other client sessions of the test database, replication slots and prepared transactions."""
        return {
            "connections": self.query("select pid, application_name, state, query from pg_stat_activity "
                                      "where datname = %s and pid <> pg_backend_pid() and backend_type = "
                                      "'client backend'", (DATABASE,)),
            "slots": self.query("select slot_name from pg_replication_slots"),
            "prepared": self.query("select gid from pg_prepared_xacts"),
        }

    def wait_no_leaks(self, timeout: float = 15.0) -> None:
        """Wait (bounded) until nothing is left open; fail showing what is."""
        deadline = time.monotonic() + timeout
        while (left := self.leaks()) != {"connections": [], "slots": [], "prepared": []}:
            if time.monotonic() > deadline:
                raise AssertionError(f"left open on the server after {timeout} s: {left}")
            time.sleep(0.1)
