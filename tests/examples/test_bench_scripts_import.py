"""Every script in ``bench/`` imports: a module moved or renamed inside the packages breaks a benchmark only when
someone runs it, long after the change, so this catches it at once (importing runs no benchmark: each script
does its work under ``if __name__ == "__main__"``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "bench").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bench_script_when_imported_then_its_imports_resolve(script: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    name = f"_bench_{script.stem}"
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    assert module.__doc__, f"{script.name} has no module docstring saying what it measures"
