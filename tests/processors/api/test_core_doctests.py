from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "processors.api.watermark",
    "processors.api.inbox",
    "processors.api.outbox",
    "processors.api.context",
    "processors.api.context_factory",
    "processors.api.processor",
    "processors.api.suppliers",
    "processors.api.traverser",
    "processors.api.functions",
    "processors.execution.staged",
    "processors.testing",
    "processors.library.stateless_loops",
    "processors.execution.staged_watermarks",
    "processors.execution.coalescer",
    "processors.execution.tasklet",
    "processors.execution.lifecycle",
    "processors.library.aggregating",
]


@pytest.mark.parametrize("name", MODULES)
def test_core_module_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
