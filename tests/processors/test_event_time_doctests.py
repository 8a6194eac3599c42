"""The docstring examples of the event-time and window modules hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "processors.windows",
    "processors.clock",
    "processors.watermark_policies",
    "processors.event_time",
    "processors.insert_watermarks",
    "processors.sliding_window",
    "processors.session_window",
    "processors.window_bulk",
]


@pytest.mark.parametrize("name", MODULES)
def test_event_time_module_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
