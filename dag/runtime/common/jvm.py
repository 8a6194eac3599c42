"""The driver JVM's health: say clearly when it died, and let a new engine start after it.

When the driver JVM dies (``OutOfMemoryError`` with ``-XX:+ExitOnOutOfMemoryError``, killed by the kernel, a
crash), every py4j call fails with ``Connection refused`` or an empty answer. :func:`jvm_alive` checks it,
:data:`DEAD_JVM` is the message jetspark gives instead, and :func:`forget_dead_session` clears PySpark's
process-wide references to the dead context so that ``Engine()`` can start a new one.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEAD_JVM", "is_dead_jvm_error", "jvm_alive", "forget_dead_session"]

DEAD_JVM = ("the Spark driver JVM of this engine is no longer running (it died, e.g. out of memory: raise "
            "spark.driver.memory in EngineConfig.spark_conf); close this engine and create a new one")


def is_dead_jvm_error(error: BaseException) -> bool:
    """Whether ``error`` is py4j failing to reach the JVM at all."""
    from py4j.protocol import Py4JNetworkError

    return isinstance(error, (Py4JNetworkError, ConnectionRefusedError)) or (
        type(error).__name__ == "Py4JError" and "Answer from Java side is empty" in str(error))


def jvm_alive(session: Any) -> bool:
    """Whether the session's JVM still answers."""
    try:
        session.sparkContext._jvm.java.lang.System.currentTimeMillis()  # noqa: SLF001
        return True
    except Exception as exc:  # noqa: BLE001
        if is_dead_jvm_error(exc) or "Connection refused" in str(exc):
            return False
        raise


def forget_dead_session(session: Any) -> None:
    """Drop PySpark's process-wide references to ``session``'s dead context (so a new one can start)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    sc = session.sparkContext
    with SparkContext._lock:  # noqa: SLF001
        if SparkContext._active_spark_context is sc:  # noqa: SLF001
            SparkContext._active_spark_context = None  # noqa: SLF001
            SparkContext._gateway = None  # noqa: SLF001
            SparkContext._jvm = None  # noqa: SLF001
    for attr in ("_instantiatedSession", "_activeSession"):
        if getattr(SparkSession, attr, None) is session:
            setattr(SparkSession, attr, None)
