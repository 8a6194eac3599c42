"""``jetspark pack-env OUT.tar.gz``: pack a virtual environment for executors that have nothing installed.

The archive is made by venv-pack (``pip install 'jetspark[cluster]'``), PySpark's documented tool for this.
Give it to the engine as ``EngineConfig(python_env_archive="OUT.tar.gz")``: Spark copies it to every
executor, unpacks it as ``./environment`` and runs the Python workers with ``./environment/bin/python``
(``dag/runtime/common/cluster.py``).

A venv-pack archive holds the environment's packages but not the Python interpreter itself: its
``bin/python`` points to the interpreter the environment was made from, which must exist at the same path on
every worker (use the same base image, or a conda environment and conda-pack, which does include Python).
jetspark's own packages need not be in the environment: the engine ships them to the executors itself. An
editable install of jetspark (``pip install -e``, a development checkout) is left out of the archive: its
import hook points at the checkout's directory, which the executors do not have.
"""

from __future__ import annotations

import os
import sys

from jetspark_base.errors import DagValidationError

__all__ = ["pack_env"]

EXCLUDED = ("*/__editable__*jetspark*",)
"""venv-pack patterns of files left out: jetspark's editable-install hooks."""


def _current_venv() -> str:
    """The virtual environment this Python runs in; raises ``DagValidationError`` outside one."""
    if sys.prefix == sys.base_prefix:
        raise DagValidationError(
            f"this Python ({sys.executable}) does not run in a virtual environment; run jetspark pack-env with "
            "the Python of the venv to pack (e.g. .venv/bin/jetspark pack-env OUT.tar.gz), or pass --venv DIR")
    return sys.prefix


def pack_env(output: str, venv: str | None = None, force: bool = False) -> str:
    """Pack the virtual environment ``venv`` (default: the current one) into ``output`` with venv-pack; returns
    the archive's path. ``force`` overwrites an existing ``output``. For example ``pack_env("out/env.tar.gz")``,
    then ``EngineConfig(master=..., python_env_archive="out/env.tar.gz")``.
    """
    try:
        import venv_pack
    except ImportError as exc:
        raise DagValidationError(
            "jetspark pack-env needs venv-pack: pip install 'jetspark[cluster]' (or pip install venv-pack)") from exc
    prefix = os.path.abspath(venv) if venv else _current_venv()
    if not os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
        raise DagValidationError(f"{prefix} is not a virtual environment (no pyvenv.cfg)")
    if not output.endswith((".tar.gz", ".tgz", ".zip")):
        raise DagValidationError(f"output {output!r} must end in .tar.gz, .tgz or .zip (a format Spark unpacks)")
    if os.path.exists(output) and not force:
        raise DagValidationError(f"{output} exists; remove it or pass --force to overwrite it")
    parent = os.path.dirname(os.path.abspath(output))
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{os.path.basename(output)}.{os.getpid()}.partial{_suffix(output)}")
    try:
        venv_pack.pack(prefix=prefix, output=tmp, force=True, filters=[("exclude", p) for p in EXCLUDED])
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return output


def _suffix(output: str) -> str:
    return ".tar.gz" if output.endswith(".tar.gz") else os.path.splitext(output)[1]
