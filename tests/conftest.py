"""Shared fixtures: ONE local Spark session (``local[2]``) for every Spark test of the run.

``engine`` is session-scoped: created on first use, closed at the end of the run. Tests that need another
engine configuration on the same session borrow it: ``Engine(EngineConfig(members=2), spark=engine.spark)``,
or share it with an equal master: ``Engine(EngineConfig(master="local[2]", members=2))`` (the context stops
only when the last engine using it closes; see ``dag/runtime/common/sharing.py``). Spark tests are marked ``@pytest.mark.spark``; tests that need
more than the shared session (the local-cluster test) are marked ``slow`` and run in a subprocess.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def engine():
    """The shared Engine on local[2] (Spark UI off, small shuffle defaults)."""
    from dag import Engine, EngineConfig

    eng = Engine(EngineConfig(master="local[2]", app_name="jetspark-tests",
                              spark_conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"}))
    yield eng
    eng.close()


# ---------------------------------------------------------------------------------------------- PostgreSQL
@pytest.fixture(scope="session")
def postgres():
    """ONE private PostgreSQL cluster for the run (``tests/postgres.py``: ``wal_level=logical``, prepared
    transactions on), started on first use, stopped (``pg_ctl stop -m immediate``) and deleted at the end."""
    from tests.postgres import PostgresServer

    with PostgresServer.started() as server:
        yield server
