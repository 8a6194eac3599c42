"""The docstring examples of the event-time and window modules hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "processors.windowing.definitions",
    "processors.api.clock",
    "processors.windowing.watermark_policies",
    "processors.windowing.event_time",
    "processors.windowing.insert_watermarks",
    "processors.windowing.sliding_window",
    "processors.windowing.session_window",
    "processors.windowing.bulk",
]


@pytest.mark.parametrize("name", MODULES)
def test_event_time_module_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
