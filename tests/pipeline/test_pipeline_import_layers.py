"""The modules of ``pipeline/`` import each other in layers: no import cycle (lazy and ``TYPE_CHECKING`` imports
count too), operations and transforms never import a stage handle, and no private member is reached past."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pipeline"
HANDLES = {"pipeline.stages", "pipeline.keyed_stages", "pipeline.stream_source_stage", "pipeline.pipeline"}


def _imports() -> dict[str, set[str]]:
    """``module -> the pipeline modules it imports`` (every import statement, wherever it stands)."""
    modules = {f"pipeline.{path.stem}" for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.glob("*.py"):
        name = "pipeline" if path.stem == "__init__" else f"pipeline.{path.stem}"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.module == "pipeline":
                found.update(f"pipeline.{alias.name}" for alias in node.names
                             if f"pipeline.{alias.name}" in modules)
            elif isinstance(node, ast.ImportFrom) and node.module in modules:
                found.add(node.module)
        graph[name] = found - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules in order), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == 1:
                return path[path.index(imported):] + [imported]
            if imported not in state and (found := visit(imported)):
                return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_pipeline_modules_when_imports_read_then_no_cycle() -> None:
    cycle = _cycle(_imports())
    assert cycle is None, f"pipeline/ has an import cycle: {' -> '.join(cycle or [])}"


def test_cycle_finder_when_two_modules_import_each_other_then_names_them() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_operations_and_transforms_when_imports_read_then_no_stage_handle() -> None:
    below = {module: imported & HANDLES for module, imported in _imports().items()
             if module not in HANDLES and module != "pipeline"}
    assert {module: sorted(found) for module, found in below.items() if found} == {}


def test_pipeline_sources_when_read_then_no_private_access_suppressed() -> None:
    offenders = [f"{path.name}:{number}" for path in sorted(PACKAGE.glob("*.py"))
                 for number, line in enumerate(path.read_text().splitlines(), start=1) if "noqa: SLF001" in line]
    assert offenders == []
