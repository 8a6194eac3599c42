"""A test's own Spark driver in a subprocess (one SparkContext per process: the suite's shared session is
``local[2]``), for tests on ``local-cluster`` or a standalone cluster.

``run_driver(directory, script, *args, user_module=...)`` writes ``usermod.py`` (the source of
``tests.support.cluster_faults``, then ``user_module``) and the driver ``script`` into ``directory``, runs the
script there with the repository on ``PYTHONPATH`` (and ``PYSPARK_PYTHON`` unset), bounded, and returns the
dict its last ``RESULT <json>`` line holds; a driver that fails or prints no result fails the test with the
end of its output.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support import cluster_faults

__all__ = ["DRIVER_TIMEOUT", "REPO", "run_driver"]

REPO = str(Path(__file__).resolve().parents[2])
DRIVER_TIMEOUT = 600.0
"""The bound of one driver process (s)."""


def run_driver(directory: Path, script: str, *args: str, user_module: str, env_extra: dict | None = None,
               timeout: float = DRIVER_TIMEOUT) -> dict:
    """Run ``script`` (with ``usermod.py`` next to it) as its own driver process; its RESULT line as a dict."""
    (directory / "usermod.py").write_text(inspect.getsource(cluster_faults) + textwrap.dedent(user_module))
    path = directory / "driver.py"
    path.write_text(textwrap.dedent(script))
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYTHONPATH")}
    env.update({"PYTHONPATH": REPO, **(env_extra or {})})
    proc = subprocess.run([sys.executable, str(path), *args], cwd=directory, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-5000:]
    return json.loads(lines[-1][len("RESULT "):])
