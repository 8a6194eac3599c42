"""No module of ``dag`` imports a module that imports it back, directly or around a longer circle.

Every import counts: at module level, inside a function (a lazy import) and under ``TYPE_CHECKING``, because
each of them is a dependency a reader has to follow. The graph is read from the source with ``ast``
(nothing is imported), so the test also guards modules that need Spark.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("dag",)


def _module_files(package: str) -> dict[str, Path]:
    files = {}
    for path in (REPO / package).rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _imported(tree: ast.AST, module: str, is_package: bool, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``module``'s source imports (``from p import name`` counts ``p.name`` when
    that is a module, else ``p``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in known:
                    found.add(target)
                elif base in known:
                    found.add(base)
    found.discard(module)
    return found


def _import_graph(package: str) -> dict[str, set[str]]:
    files = _module_files(package)
    return {module: _imported(ast.parse(path.read_text(encoding="utf-8")), module, path.name == "__init__.py", files)
            for module, path in files.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_circles_when_a_made_up_graph_has_one_then_it_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]


def test_import_graph_when_a_module_imports_lazily_or_for_types_then_the_import_counts():
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dag.model import DAG\n"
              "def f():\n    from dag import validation\n")
    known = {"dag": Path(), "dag.model": Path(), "dag.validation": Path(), "dag.dot": Path()}
    assert _imported(ast.parse(source), "dag.dot", False, known) == {"dag.model", "dag.validation"}


def test_dag_modules_when_their_imports_are_read_then_no_module_imports_one_that_imports_it_back():
    for package in PACKAGES:
        circles = _circles(_import_graph(package))
        assert circles == [], f"import circles in {package}/ (move what both need into a module below them): " \
                              f"{circles}"
