"""The pipeline package's docstring examples hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["pipeline", "pipeline.pipeline", "pipeline.stages", "pipeline.keyed_stages", "pipeline.join",
           "pipeline.connectors", "pipeline.descriptors", "pipeline.window_aggregate", "pipeline.events",
           "pipeline.services", "pipeline.transform_graph", "pipeline.arg_checks", "pipeline.stateless_ops",
           "pipeline.aggregate_ops", "pipeline.stateful_ops", "pipeline.json_util", "pipeline.file_sources",
           "pipeline.rolling_files", "processors.aggregate.operation"]


@pytest.mark.parametrize("name", MODULES)
def test_pipeline_module_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
