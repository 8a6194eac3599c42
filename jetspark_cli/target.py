"""Finding and calling a command-line target: ``MODULE[:FUNCTION]`` or ``PATH.py[:FUNCTION]``.

Rules:

- A target naming an existing file, or ending in ``.py`` (before an optional ``:FUNCTION``), is a file: its
  directory is put first on ``sys.path`` (so Spark's local workers can import it too) and the file is imported
  as a module named after its stem. Anything else is an importable module name (``examples.word_count``,
  ``mypackage.jobs``).
- ``FUNCTION`` defaults to :data:`DEFAULT_FUNCTION` (``job``).
- The function's parameters become options: ``--books DIR`` or ``--books=DIR`` sets ``books``
  (dashes in option names are underscores in parameter names). A value is converted to the type of the
  parameter's default (or its annotation: ``int``, ``float``, ``bool``, ``str``, ``Path``); a bool parameter is a
  flag (``--interactive``; ``--no-interactive`` for False). Parameters without a default may also be given
  positionally, in order.
- The function returns a :class:`~dag.DAG`, a pipeline (``pipeline.Pipeline``: anything with ``to_dag()``) or a
  :class:`~jetspark_cli.spec.JobSpec` (whose ``dag`` may be a pipeline too); a pipeline is lowered with
  ``to_dag()``, and a DAG is wrapped in a ``JobSpec`` with no ``prepare``/``report``.

Every user mistake raises :class:`TargetError` with a one-paragraph message naming the target and the fix.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from jetspark_cli.spec import JobSpec

__all__ = ["DEFAULT_FUNCTION", "TargetError", "Target", "resolve", "parse_function_args", "parameter_help"]

DEFAULT_FUNCTION = "job"
"""The function a target without ``:FUNCTION`` names."""

_TYPES_BY_NAME: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str, "Path": Path}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class TargetError(Exception):
    """A target that cannot be found, called or used; the message says what to fix."""


class Target:
    """A resolved target: the module, the function, and the text the user wrote."""

    def __init__(self, text: str, module: ModuleType, function: Callable[..., Any], function_name: str):
        self.text = text
        self.module = module
        self.function = function
        self.function_name = function_name

    def call(self, tokens: list[str]) -> JobSpec:
        """Call the function with the options in ``tokens`` and return a ``JobSpec``."""
        kwargs = parse_function_args(self, tokens)
        try:
            result = self.function(**kwargs)
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(
                f"{self.function_name}() of {self.text} raised {type(exc).__name__}: {exc}"
            ) from exc
        return _as_spec(self, result)


def _split(text: str) -> tuple[str, str]:
    """``(module_or_path, function)`` from ``text``; a Windows drive colon is not a separator."""
    head, sep, tail = text.rpartition(":")
    if sep and tail and tail.isidentifier() and len(head) > 1:
        return head, tail
    return text, DEFAULT_FUNCTION


def _import_file(path: Path, text: str) -> ModuleType:
    if path.suffix != ".py" or not path.is_file():
        raise TargetError(f"target {text!r}: no such Python file {str(path)!r}; give MODULE[:FUNCTION] or "
                          f"PATH.py[:FUNCTION] (function default: {DEFAULT_FUNCTION})")
    path = path.resolve()
    directory = str(path.parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = path.stem
    existing = sys.modules.get(name)
    if existing is not None and getattr(existing, "__file__", None) and Path(existing.__file__).resolve() == path:
        return existing
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise TargetError(f"cannot import {text!r}: {_describe_exception(exc)}") from exc
    return module


def _import_module(name: str, text: str) -> ModuleType:
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise TargetError(f"target {text!r}: no module named {exc.name!r} (and no file of that name); give "
                              f"MODULE[:FUNCTION] importable from the current directory, or PATH.py[:FUNCTION]") from exc
        raise TargetError(f"cannot import {text!r}: {_describe_exception(exc)}") from exc
    except Exception as exc:
        raise TargetError(f"cannot import {text!r}: {_describe_exception(exc)}") from exc


def _describe_exception(exc: BaseException) -> str:
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if isinstance(exc, SyntaxError):
        where = f" ({exc.filename}, line {exc.lineno})"
    elif tb is not None:
        where = f" ({tb.tb_frame.f_code.co_filename}, line {tb.tb_lineno})"
    return f"{type(exc).__name__}: {exc}{where}"


def resolve(text: str) -> Target:
    """Import the module or file of ``text`` and find its function."""
    location, function_name = _split(text)
    if location.endswith(".py") or os.sep in location or "/" in location or Path(location).is_file():
        module = _import_file(Path(location), text)
    else:
        module = _import_module(location, text)
    function = getattr(module, function_name, None)
    if function is None or not callable(function):
        callables = sorted(
            n for n, v in vars(module).items()
            if inspect.isfunction(v) and v.__module__ == module.__name__ and not n.startswith("_")
        )
        raise TargetError(
            f"target {text!r}: {module.__name__} has no function {function_name!r}; name one with "
            f"{location}:FUNCTION (functions there: {', '.join(callables) or 'none'})"
        )
    return Target(text, module, function, function_name)


def _parameter_type(param: inspect.Parameter) -> type:
    if param.default is not inspect.Parameter.empty and param.default is not None:
        return type(param.default) if type(param.default) in _TYPES_BY_NAME.values() else str
    annotation = param.annotation
    if isinstance(annotation, str):
        annotation = _TYPES_BY_NAME.get(annotation.split("|")[0].strip(), str)
    return annotation if annotation in _TYPES_BY_NAME.values() else str


def _convert(target: Target, param: inspect.Parameter, option: str, value: str) -> Any:
    kind = _parameter_type(param)
    if kind is bool:
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise TargetError(f"{option} of {target.text}: expected true or false, got {value!r}")
    try:
        return kind(value)
    except ValueError:
        raise TargetError(f"{option} of {target.text}: expected {kind.__name__}, got {value!r}") from None


def _parameters(target: Target) -> tuple[dict[str, inspect.Parameter], bool]:
    signature = inspect.signature(target.function)
    params = {
        name: p for name, p in signature.parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    takes_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    return params, takes_any


def parse_function_args(target: Target, tokens: list[str]) -> dict[str, Any]:
    """Turn ``--name value`` / ``--name=value`` / ``--flag`` / positional tokens into keyword arguments."""
    params, takes_any = _parameters(target)
    required = [name for name, p in params.items() if p.default is inspect.Parameter.empty]
    kwargs: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("--") or token == "--":
            pending = [name for name in required if name not in kwargs]
            if not pending:
                raise TargetError(f"{target.text}: unexpected argument {token!r}; {_usage(target)}")
            kwargs[pending[0]] = _convert(target, params[pending[0]], pending[0], token)
            continue
        option, has_value, value = token[2:].partition("=")
        name = option.replace("-", "_")
        negated = name.startswith("no_") and name[3:] in params and _parameter_type(params[name[3:]]) is bool
        if negated:
            name = name[3:]
        param = params.get(name)
        if param is None and not takes_any:
            raise TargetError(f"{target.text}: {target.function_name}() has no parameter {name!r} (from "
                              f"--{option}); {_usage(target)}")
        if param is not None and _parameter_type(param) is bool and not has_value:
            kwargs[name] = not negated
            continue
        if not has_value:
            if i >= len(tokens):
                raise TargetError(f"{target.text}: --{option} needs a value; {_usage(target)}")
            value = tokens[i]
            i += 1
        kwargs[name] = value if param is None else _convert(target, param, f"--{option}", value)
    missing = [name for name in required if name not in kwargs]
    if missing:
        raise TargetError(f"{target.text}: {target.function_name}() needs {', '.join('--' + m.replace('_', '-') for m in missing)}; "
                          f"{_usage(target)}")
    return kwargs


def _usage(target: Target) -> str:
    params, takes_any = _parameters(target)
    if not params:
        return f"{target.function_name}() takes no options" + (" but accepts any --name value" if takes_any else "")
    return "its options: " + " ".join(_option_text(name, p) for name, p in params.items())


def _option_text(name: str, param: inspect.Parameter) -> str:
    option = "--" + name.replace("_", "-")
    kind = _parameter_type(param)
    if kind is bool:
        return f"[{option}]"
    text = f"{option} {kind.__name__.upper()}"
    return text if param.default is inspect.Parameter.empty else f"[{text}]"


def parameter_help(target: Target) -> str:
    """The function's options and defaults, for ``--help`` after a target."""
    params, _ = _parameters(target)
    lines = [f"options of {target.function_name}() in {target.text}:"]
    for name, param in params.items():
        default = "" if param.default is inspect.Parameter.empty else f" (default: {param.default!r})"
        lines.append(f"  {_option_text(name, param).strip('[]'):<28}{default}")
    if len(lines) == 1:
        lines.append("  (none)")
    doc = inspect.getdoc(target.function)
    if doc:
        lines += ["", doc]
    return "\n".join(lines)


def _as_spec(target: Target, result: Any) -> JobSpec:
    import dataclasses

    from dag.model import DAG
    from dag.runtime.engine import as_dag

    if isinstance(result, JobSpec) and not isinstance(result.dag, DAG):
        result = dataclasses.replace(result, dag=_lowered(target, result.dag, as_dag))
    elif not isinstance(result, (DAG, JobSpec)):
        result = _lowered(target, result, as_dag)
    if isinstance(result, JobSpec):
        if not isinstance(result.dag, DAG):
            raise TargetError(f"{target.function_name}() of {target.text} returned a JobSpec whose dag is a "
                              f"{type(result.dag).__name__}, not a DAG")
        return result
    if isinstance(result, DAG):
        return JobSpec(result)
    raise TargetError(
        f"{target.function_name}() of {target.text} returned {type(result).__name__}, expected a DAG, a "
        f"pipeline or a jetspark_cli.spec.JobSpec(dag, prepare=None, report=None)"
    )


def _lowered(target: Target, job: Any, as_dag: Any) -> Any:
    """A pipeline's DAG (``job`` unchanged if it is not a pipeline); lowering errors become ``TargetError``."""
    try:
        return as_dag(job)
    except Exception as exc:
        raise TargetError(f"the pipeline {target.function_name}() of {target.text} returned cannot be lowered to "
                          f"a DAG: {type(exc).__name__}: {exc}") from exc
