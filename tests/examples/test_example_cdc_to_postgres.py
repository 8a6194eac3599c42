"""examples/cdc_to_postgres.py against the run's private PostgreSQL cluster (``postgres`` of tests/conftest.py):
CDC of ``orders`` -> tumbling-window revenue -> the exactly-once JDBC sink, exact with and without a killed
Python worker; and drawable with ``jetspark dot`` without a database."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import cdc_to_postgres as example  # noqa: E402

from jetspark_cli.main import main  # noqa: E402
from tests.postgres import DATABASE, PASSWORD, USER  # noqa: E402


@pytest.fixture()
def dsn(postgres):
    yield f"host=127.0.0.1 port={postgres.port} dbname={DATABASE} user={USER} password={PASSWORD}"
    postgres.wait_no_leaks()


def test_cdc_example_when_drawn_then_no_database_needed(capsys):
    assert main(["dot", f"{EXAMPLES / 'cdc_to_postgres.py'}:job"]) == 0
    dot = capsys.readouterr().out
    assert "orders-cdc" in dot and "jdbcSink" in dot


@pytest.mark.spark
@pytest.mark.parametrize("kill_after", [None, 600], ids=["no-fault", "killed-worker"])
def test_cdc_example_when_run_then_revenue_exact(engine, dsn, kill_after):
    result = example.run(engine, dsn, orders=1500, rate=500, kill_after=kill_after, timeout=150)
    assert result.startswith("exactly once:"), result
    if kill_after:
        assert "killed worker: True" in result and "restarts: 0" not in result
