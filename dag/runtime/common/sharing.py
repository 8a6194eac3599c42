"""One SparkContext per process, shared by the engines that agree on it (reference counted).

Spark allows one SparkContext per process, but a notebook cell run twice, or an engine with ``members=2``
next to one with ``members=1``, wants a second :class:`~dag.runtime.engine.Engine`. The rules:

- The first engine without ``spark=`` starts a session (``session.create_session``) and registers it here.
- A later engine without ``spark=`` **shares** that session when its ``master`` equals the running one's and
  every entry of its ``spark_conf`` equals the running context's value (or the running context has it and the
  engine leaves it out). Everything else of ``EngineConfig`` (members, parallelism, partition count, the
  planner's switches, progress) is per engine. ``app_name`` is the first engine's. On a conflict the engine
  is refused with a message listing each differing setting.
- An engine given ``spark=`` a session jetspark started counts as a user of it too; a session jetspark did
  not start is the caller's: never stopped here.
- :func:`release` when an engine closes; the SparkContext stops when the last engine using it closes.
- A SparkContext jetspark did not start that is running when an engine starts without ``spark=`` is
  refused (pass it as ``Engine(spark=session)``).
- :func:`check_alive` gives a clear error when the session an engine uses was stopped behind its back
  (``SparkSession.stop()``), instead of pyspark's ``'NoneType' object has no attribute ...``.
"""

from __future__ import annotations

import threading
from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = ["acquire", "borrow", "release", "discard", "check_alive", "conflicts"]

_lock = threading.Lock()
_sessions: dict[Any, list] = {}  # SparkContext -> [session, number of engines using it]


def conflicts(master: str, conf: dict[str, str], config: Any) -> list[str]:
    """The settings of ``config`` that differ from a running context's ``master`` and ``conf`` (as text).

    >>> from dag.config import EngineConfig
    >>> conflicts("local[2]", {"spark.ui.enabled": "false"}, EngineConfig(master="local[2]", members=2))
    []
    >>> for c in conflicts("local[2]", {}, EngineConfig(master="local[4]", spark_conf={"spark.ui.enabled": "false"})):
    ...     print(c)
    master: running 'local[2]', this engine wants 'local[4]'
    spark.ui.enabled: running (not set), this engine wants 'false'
    """
    found = []
    if master != config.master:
        found.append(f"master: running {master!r}, this engine wants {config.master!r}")
    for key, value in sorted(config.spark_conf.items()):
        running = conf.get(key)
        if running != str(value):
            shown = "(not set)" if running is None else repr(running)
            found.append(f"{key}: running {shown}, this engine wants {str(value)!r}")
    return found


def acquire(config: Any) -> Any:
    """The session for a new engine with ``config``: the running jetspark session when it agrees, else a new
    one (see the module docstring); raises ``DagValidationError`` on a conflict."""
    from pyspark import SparkContext

    from dag.runtime.common.session import create_session

    with _lock:
        sc = SparkContext._active_spark_context  # noqa: SLF001 - pyspark's own marker
        if sc is None:
            session = create_session(config)
            _sessions[session.sparkContext] = [session, 1]
            return session
        entry = _sessions.get(sc)
        if entry is None:
            raise DagValidationError(
                "A SparkContext that jetspark did not start is already running in this process; pass its session "
                "as Engine(config, spark=session) or stop it before creating an Engine that starts its own"
            )
        found = conflicts(sc.master, dict(sc.getConf().getAll()), config)
        if found:
            raise DagValidationError(
                "This process already runs a SparkContext (started by another Engine) with different Spark "
                f"settings: {'; '.join(found)}. Spark allows one SparkContext per process: use the running one's "
                "settings (members, parallelism and the other EngineConfig fields may differ per engine), or close "
                "every engine using it first"
            )
        entry[1] += 1
        return entry[0]


def borrow(session: Any) -> None:
    """An engine given ``spark=session``: it counts as a user when jetspark started the session."""
    with _lock:
        entry = _sessions.get(session.sparkContext)
        if entry is not None:
            entry[1] += 1


def release(session: Any) -> bool:
    """An engine using ``session`` closed; stops the session when it was the last user of a jetspark session.
    Returns whether it stopped it."""
    with _lock:
        sc = session.sparkContext
        entry = _sessions.get(sc)
        if entry is None:
            return False
        entry[1] -= 1
        if entry[1] > 0:
            return False
        del _sessions[sc]
    session.stop()
    return True


def discard(session: Any) -> None:
    """Forget ``session`` without stopping it (its driver JVM died: there is nothing left to stop)."""
    with _lock:
        _sessions.pop(session.sparkContext, None)


def check_alive(session: Any) -> None:
    """Raise a clear ``DagValidationError`` when ``session`` was stopped (its SparkContext is gone)."""
    sc = session.sparkContext
    if getattr(sc, "_jsc", None) is None:
        raise DagValidationError(
            "The Spark session this engine used was stopped by SparkSession.stop() or SparkContext.stop() called "
            "outside jetspark's engines; close this engine and create a new one (it starts or shares a running "
            "session)"
        )
