"""The connectors' fixture: ONE private PostgreSQL cluster for the session (``tests/postgres.py``), started
on first use and stopped (``pg_ctl stop -m immediate``) and deleted at the end, leaving no process behind."""

from __future__ import annotations

import pytest

from tests.postgres import PostgresServer


@pytest.fixture(scope="session")
def postgres():
    """A running :class:`~tests.postgres.PostgresServer` (``wal_level=logical``, prepared transactions on)."""
    with PostgresServer.started() as server:
        yield server
