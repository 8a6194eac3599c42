"""lazy_exports: the packages' public names load on first use, are cached, and unknown names fail naming the
package; ``dag`` and ``processors`` use it."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

from jetspark_base import lazy_exports as lazy_exports_module

REPO = Path(__file__).resolve().parents[2]


def test_lazy_exports_docstring_examples_hold():
    assert doctest.testmod(lazy_exports_module).failed == 0


def test_packages_when_imported_then_no_sub_module_loaded_until_a_name_is_used():
    script = ("import sys, dag, processors\n"
              "before = [m for m in ('dag.model', 'processors.library.stateless') if m in sys.modules]\n"
              "dag.DAG, processors.map_p\n"
              "print(before, 'dag.model' in sys.modules, 'DAG' in vars(dag), 'map_p' in dir(processors))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60,
                         check=True).stdout
    assert out.split("\n")[0] == "[] True True True"


@pytest.mark.parametrize("package", ["dag", "processors"])
def test_packages_when_unknown_name_then_attribute_error_names_package(package):
    module = __import__(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018
