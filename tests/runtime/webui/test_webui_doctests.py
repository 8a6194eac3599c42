"""The docstring examples of the web UI's modules and of the metrics they read hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["dag.runtime.webui.drawing", "dag.runtime.webui.figures", "dag.runtime.webui.html",
           "dag.runtime.common.metrics", "jetspark_cli.streaming"]


@pytest.mark.parametrize("name", MODULES)
def test_webui_module_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
