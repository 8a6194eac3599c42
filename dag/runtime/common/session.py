"""Spark session management: start (or borrow) a SparkSession set up so user code just works on the workers.

Choices (each can be overridden through ``EngineConfig.spark_conf`` or the environment):

- in local modes the workers run the driver's interpreter (``sys.executable``) unless ``PYSPARK_PYTHON`` or
  ``spark.pyspark.python`` is set: from a non-activated virtual environment plain ``python3`` could not import
  ``dag``, ``processors`` or ``edges``; on a cluster the executors' Python is chosen by
  :func:`dag.runtime.common.cluster.executor_python` (never the driver's path, which other hosts do not have);
- in local modes the driver's ``sys.path`` goes to the workers (``spark.executorEnv.PYTHONPATH``), so
  functions and classes from the user's own modules (a script's directory, a test directory) unpickle there;
  on a real cluster (and for a borrowed session started without that setting), :func:`register_user_modules`
  makes cloudpickle ship such modules by value, and jetspark ships its own packages as a zip
  (``cluster.py``);
- ``PYTHONHASHSEED`` is pinned (``"0"``) for the workers, so ``Partitioner.HASH_CODE`` agrees among them;
- in local mode the Python worker daemon is ``dag.runtime.common.warm_daemon`` (``spark.python.daemon.module``): it
  imports ``pyspark.worker`` and jetspark's task-side modules before it forks, so a fresh Python worker (the
  first ones, and the replacement of a killed one) does not spend seconds importing them (a real cluster keeps
  Spark's daemon: its executors receive jetspark as a shipped zip, which Spark puts on ``sys.path`` per task);
- quiet: a log4j2 configuration at level ERROR for the driver JVM (unless ``spark.driver.extraJavaOptions`` is
  set), log level ERROR, no console progress bar (the engine has its own, ``EngineConfig.progress``). It also
  drops Spark's start-up lines about the default log level, and the loggers that report a failed task
  (executor, task set manager, Python runner, ...) are off: a failing processor is reported once, as the
  ``JobFailedError`` ``join()`` raises, instead of after ~100 lines of JVM errors, Java stack traces and the
  encoded failure. Set the environment variable ``JETSPARK_SPARK_LOGS=1`` before the engine starts to get
  Spark's own error logging back (for debugging Spark itself);
- Spark retries lost tasks and executors as usual (``spark.task.maxFailures`` is left alone); a user
  exception still fails the job at once, because the failing task reports it on the job's channel and the
  job cancels its Spark job group (``job.py``);
- not on the network in local mode (``local``, ``local[..]``, ``local-cluster[..]``, and a ``spark://``
  master on loopback such as ``scripts/cluster.sh``'s): the driver's RPC and block manager bind to loopback
  (``spark.driver.bindAddress``/``spark.driver.host`` = ``127.0.0.1``, and ``SPARK_LOCAL_IP`` for the JVM's
  start, which also puts a UI the user enables on loopback). The Spark UI is off (``spark.ui.enabled``)
  unless the user's ``spark_conf`` turns it on. On a cluster ``EngineConfig.secure`` (its default there)
  turns on Spark's authentication and encryption (``cluster.py``);
- in local mode the driver JVM (which runs every task) gets ``spark.driver.memory`` =
  :func:`local_driver_memory` (a quarter of RAM, 2-8 GB) unless ``spark_conf`` or ``SPARK_DRIVER_MEMORY``
  sets it: Spark's 1 GB default was killed by one 200 MB line read with ``read_text_p``.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import sysconfig
import tempfile
import time
from typing import Any

from jetspark_base.errors import DagError, DagValidationError
from dag.runtime.common.cluster import SHIPPED_PACKAGES, is_local_master, on_this_machine

__all__ = ["on_loopback", "worker_python", "create_session", "detect_members",
           "register_user_modules"]

_OUR_PACKAGES = (*SHIPPED_PACKAGES, "pyspark", "py4j")


_QUIET_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = error
logger.context.name = org.apache.spark.SparkContext
logger.context.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""
# The logger that first initialises Spark's logging in a shell (PySpark counts as one) has the root's level,
# so Spark skips its "Setting default log level" and "To adjust logging level" lines.

_TASK_FAILURE_LOGGERS = (
    "org.apache.spark.executor.Executor", "org.apache.spark.scheduler.TaskSetManager",
    "org.apache.spark.scheduler.TaskSchedulerImpl", "org.apache.spark.scheduler.DAGScheduler",
    "org.apache.spark.api.python.PythonRunner", "org.apache.spark.api.python.PythonRDD",
    "org.apache.spark.util.Utils", "org.apache.spark.rdd.PairRDDFunctions",
)
"""Loggers that repeat a failed task's error (with its Java stack trace and the encoded failure) on stderr."""

SPARK_LOGS_ENV = "JETSPARK_SPARK_LOGS"
"""Environment variable: ``1`` keeps Spark's own error logging of failed tasks on the console."""


def log4j2_properties(spark_logs: bool) -> str:
    """The driver JVM's log4j2 configuration: errors only, and without Spark's reports of failed tasks unless
    ``spark_logs``."""
    text = _QUIET_LOG4J2
    if not spark_logs:
        for i, name in enumerate(_TASK_FAILURE_LOGGERS):
            text += f"logger.task{i}.name = {name}\nlogger.task{i}.level = off\n"
    return text


LOOPBACK_CONF = {
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.ui.enabled": "false",
}
"""Settings of a local engine: nothing listens beyond loopback, no UI unless asked for."""


def _quiet_log4j_file() -> str:
    """A file holding :func:`log4j2_properties` (named after its content, written atomically)."""
    text = log4j2_properties(os.environ.get(SPARK_LOGS_ENV, "") not in ("", "0"))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    path = os.path.join(tempfile.gettempdir(), f"jetspark-log4j2-{digest}.properties")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=tempfile.gettempdir(), prefix="jetspark-log4j2-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    return path


def local_driver_memory() -> str:
    """The driver JVM heap for local mode: a quarter of the machine's memory, between 2 GB and 8 GB (Spark's
    1 GB default died on one 200 MB text line; in local mode the driver JVM also runs every task)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "2g"
    return f"{min(8, max(2, total // 4 // 2**30))}g"


def on_loopback(master: str) -> bool:
    """Whether ``master`` runs on this machine only: local modes, or a ``spark://`` URL whose masters are all on
    loopback (``scripts/cluster.sh``). The driver then binds to loopback too."""
    from dag.runtime.common.cluster import master_addresses

    if on_this_machine(master):
        return True
    hosts = [host for host, _ in master_addresses(master)]
    return bool(hosts) and all(h in ("127.0.0.1", "localhost", "::1") for h in hosts)


def worker_python(config: Any) -> str:
    """The Python the workers run: ``spark.pyspark.python`` of ``spark_conf``, else ``PYSPARK_PYTHON``, else the
    driver's ``sys.executable`` in local modes; on a cluster :func:`dag.runtime.common.cluster.executor_python`."""
    from dag.runtime.common.cluster import executor_python

    if not on_this_machine(config.master):
        return executor_python(config)
    if config.python_env_archive:
        raise DagValidationError(
            f"EngineConfig.python_env_archive is for cluster masters; master {config.master!r} runs its workers on "
            "this machine with the driver's Python: leave python_env_archive unset")
    return config.spark_conf.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON") or sys.executable


def _defaults(config: Any) -> dict[str, str]:
    from dag.runtime.common.cluster import archive_conf, security_conf

    conf = {
        "spark.ui.showConsoleProgress": "false",
        "spark.ui.enabled": "false",
        "spark.executorEnv.PYTHONHASHSEED": "0",
        "spark.sql.execution.arrow.pyspark.enabled": "false",
        "spark.pyspark.python": worker_python(config),
    }
    if on_this_machine(config.master):
        conf["spark.executorEnv.PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
        # fresh Python workers start with jetspark loaded; local only: a cluster's executors get jetspark as a
        # shipped zip, which Spark adds to sys.path after its daemon module is imported
        conf["spark.python.daemon.module"] = "dag.runtime.common.warm_daemon"
        if "SPARK_DRIVER_MEMORY" not in os.environ:
            conf["spark.driver.memory"] = local_driver_memory()
    else:
        conf.update(archive_conf(config))
    if on_loopback(config.master):
        conf.update(LOOPBACK_CONF)
    conf.update(security_conf(config))
    if "spark.driver.extraJavaOptions" not in config.spark_conf:
        conf["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{_quiet_log4j_file()}"
    return conf


def create_session(config: Any) -> Any:
    """A new SparkSession for ``config`` (raises if this process already runs a SparkContext)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is not None:  # noqa: SLF001 - pyspark's own marker
        raise DagValidationError(
            "A SparkContext is already running in this process; pass its session as Engine(spark=session) or stop "
            "it before creating an Engine that starts its own"
        )
    conf = {**_defaults(config), **config.spark_conf}
    builder = SparkSession.builder.master(config.master).appName(config.app_name)
    for key, value in conf.items():
        builder = builder.config(key, value)
    # read by the JVM and by SparkContext at their start only: PYSPARK_PYTHON is the workers' command,
    # SPARK_LOCAL_IP puts the addresses Spark picks (UI, local-cluster's daemons) on loopback
    launch_env = {"PYSPARK_PYTHON": conf["spark.pyspark.python"]}
    if on_loopback(config.master) and "SPARK_LOCAL_IP" not in os.environ:
        launch_env["SPARK_LOCAL_IP"] = "127.0.0.1"
    saved = {key: os.environ.get(key) for key in launch_env}
    os.environ.update(launch_env)
    try:
        session = builder.getOrCreate()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    session.sparkContext.setLogLevel("ERROR")
    return session


def quiet(session: Any) -> None:
    """Quiet a borrowed session's console (log level ERROR)."""
    session.sparkContext.setLogLevel("ERROR")


def detect_members(sc: Any, master: str, wait_s: float = 30.0) -> int:
    """The member count by default: 1 in local mode, else the number of executors (waiting for them).

    On a ``spark://`` master no executor after ``wait_s`` seconds is an error (``DagError`` naming the master
    and the usual causes), not one member: a job would wait for executors for ever."""
    if is_local_master(master):
        return 1
    match = re.match(r"local-cluster\[\s*(\d+)\s*,", master)
    expected = int(match.group(1)) if match else int(sc.getConf().get("spark.executor.instances", "0") or 0)
    deadline = time.monotonic() + wait_s
    count = 0
    while time.monotonic() < deadline:
        count = sc._jsc.sc().getExecutorMemoryStatus().size() - 1  # noqa: SLF001 - minus the driver
        if count >= max(expected, 1) or sc._jsc.sc().isStopped():  # noqa: SLF001
            break
        time.sleep(0.2)
    if count < 1 and master.startswith("spark://"):
        raise DagError(
            f"no executor of the Spark master {master} registered within {wait_s:.0f} s. The master may refuse "
            "this application (with spark.authenticate on the cluster, spark.authenticate.secret must be the "
            "cluster's secret), have no free cores or memory for it (see its workers; lower "
            "spark.executor.memory), or the executors cannot connect back to this driver at spark.driver.host "
            f"({sc.getConf().get('spark.driver.host', '?')}); set EngineConfig.members to skip this wait")
    return max(count, 1)


def register_user_modules() -> list[str]:
    """Make cloudpickle pickle the user's own modules by value (for a real cluster); returns their names.

    A user module is one loaded from a file outside the standard library, site-packages and jetspark's and
    pyspark's packages, e.g. the script's directory or a test directory.
    """
    from pyspark import cloudpickle

    skip = {os.path.realpath(p) for p in (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
                                          sysconfig.get_paths()["platlib"])}
    registered = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file or name == "__main__" or name.split(".")[0] in _OUR_PACKAGES:
            continue
        real = os.path.realpath(file)
        if "site-packages" in real or "dist-packages" in real or any(real.startswith(s + os.sep) for s in skip):
            continue
        try:
            cloudpickle.register_pickle_by_value(module)
            registered.append(name)
        except (ValueError, TypeError):
            continue
    return registered
