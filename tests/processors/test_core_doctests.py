from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "processors.watermark",
    "processors.inbox",
    "processors.outbox",
    "processors.context",
    "processors.context_factory",
    "processors.processor",
    "processors.suppliers",
    "processors.traverser",
    "processors.functions",
    "processors.driver",
    "processors.testing",
    "processors.stateless_loops",
    "processors.staged_watermarks",
    "processors.coalescer",
    "processors.tasklet",
    "processors.lifecycle",
]


@pytest.mark.parametrize("name", MODULES)
def test_core_module_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
