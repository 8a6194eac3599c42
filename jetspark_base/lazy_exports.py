"""Lazy public names of a package (PEP 562): ``import dag`` or ``import processors`` loads no sub-module, and
``dag.Engine`` imports ``dag.runtime.engine`` only when first used (so importing a package never starts a JVM
and stays cheap).

A package lists its public names with the module each lives in and takes its module-level ``__getattr__`` and
``__dir__`` from :func:`lazy_exports`; a name, once loaded, is cached in the package's namespace, so later
uses are plain attribute reads::

    _EXPORTS = {"DAG": "dag.model", "Engine": "dag.runtime.engine"}
    __all__ = sorted(_EXPORTS)
    __getattr__, __dir__ = lazy_exports("dag", _EXPORTS, globals())
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names (``exports``: name -> the module
    defining it) load on first use into ``namespace`` (the package's ``globals()``).

    >>> ns = {}
    >>> getattr_, dir_ = lazy_exports("demo", {"sqrt": "math"}, ns)
    >>> getattr_("sqrt")(9.0), "sqrt" in ns, dir_()
    (3.0, True, ['sqrt'])
    >>> getattr_("cube")
    Traceback (most recent call last):
    AttributeError: module 'demo' has no attribute 'cube'
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
