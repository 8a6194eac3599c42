"""The Python worker daemon of jetspark's sessions preloads pyspark's worker and jetspark without starting a
thread (no Spark)."""

from __future__ import annotations

import subprocess
import sys

from dag import EngineConfig
from dag.runtime.common.session import _defaults


def test_session_defaults_when_local_then_warm_daemon_module():
    for master in ("local[2]", "local-cluster[2,1,1024]"):
        assert _defaults(EngineConfig(master=master))["spark.python.daemon.module"] == "dag.runtime.common.warm_daemon"


def test_session_defaults_when_real_cluster_then_spark_daemon_kept():
    # a cluster's executors get jetspark as a shipped zip, which Spark's own daemon does not need
    assert "spark.python.daemon.module" not in _defaults(EngineConfig(master="spark://cluster:7077", secure=False))


def test_preload_when_imported_then_modules_loaded_and_no_thread_started():
    code = ("import sys, threading; import dag.runtime.common.warm_daemon as w; w._preload(); "
            "missing = [m for m in w.PRELOADED if m not in sys.modules]; "
            "print(missing, threading.active_count())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split("\n")[0] == "[] 1"  # every module loaded, still one thread: safe to fork
