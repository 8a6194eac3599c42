"""The docstring examples of the connectors' modules hold (no server, no engine: the examples build things,
parse and format)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["processors.io.dbapi", "connectors.cdc", "connectors.cdc_records", "connectors.pgoutput",
           "connectors.pg_replication", "connectors.kafka", "connectors.kafka_client", "connectors.kafka_source",
           "connectors.kafka_sink"]


@pytest.mark.parametrize("name", MODULES)
def test_connector_module_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
