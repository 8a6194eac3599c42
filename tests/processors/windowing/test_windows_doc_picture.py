"""docs/windows_picture.py draws docs/img/windows.svg from a real verify_processor run: the run and the drawing
still work, and docs/windows.md quotes the run's actual input and output."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from processors import TimestampedEntry

ROOT = Path(__file__).resolve().parents[3]


def _script():
    spec = importlib.util.spec_from_file_location("windows_picture", ROOT / "docs" / "windows_picture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_windows_picture_when_drawn_then_one_bar_per_window_result_and_doc_quotes_the_run():
    script = _script()
    output = script.run()
    results = [item for item in output if isinstance(item, TimestampedEntry)]
    drawing = script.svg(output)
    assert drawing.count("<rect") == 1 + len(results)  # background + one bar per window result
    assert drawing.count("<circle") == sum(1 for item in script.STREAM if isinstance(item, tuple))
    doc = (ROOT / "docs" / "windows.md").read_text(encoding="utf-8")
    assert "output: " + ", ".join(repr(i) for i in output) in doc
    assert "input:  " + ", ".join(repr(i) for i in script.STREAM) in doc
    assert (ROOT / "docs" / "img" / "windows.svg").read_text(encoding="utf-8") == drawing
