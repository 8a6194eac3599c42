"""``Engine``: runs DAGs on Spark (an embedded local Spark by default, or any Spark cluster).

The engine starts a SparkSession (see ``session.py`` for its settings), shares the one another engine of the
process started when the Spark settings agree, or borrows one passed in; the session stops when the last
engine using it closes, and a session the caller started is never stopped (``sharing.py``). It resolves
``members`` and the default local parallelism once, plans DAGs with the pure planner (``engine.plan(dag)``)
and runs them as asynchronous jobs (``engine.new_job``). It also holds the driver-side named collections
(``get_map``/``get_list``), Jet's IMap/IList stand-ins for ``read_map_p``/``read_list_p``/``write_map_p``/
``write_list_p``. With ``EngineConfig.web_ui_port`` set it serves a live web page of its jobs and Prometheus'
``/metrics`` (``dag/runtime/webui``) until it closes; ``engine.web_ui_url`` is the page's address.

A job's execution mode chooses its :class:`~dag.runtime.runtime.Runtime` once (:data:`RUNTIMES`); the engine
plans, admits and starts the job through that interface and hands itself to the job as the
:class:`~dag.runtime.runtime.EngineServices` it needs, so neither the job nor a runtime imports this module.

>>> # with Engine(EngineConfig(master="local[2]")) as engine:
>>> #     engine.new_job(dag).join()
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable
from typing import Any

from dag.config import EngineConfig, ExecutionMode, JobConfig
from jetspark_base.errors import DagError, DagValidationError
from dag.planner import PhysicalPlan
from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.job import Job
from dag.runtime.pipelined.runtime import PipelinedRuntime
from dag.runtime.runtime import EngineServices, Runtime
from dag.runtime.staged.runtime import StagedRuntime

__all__ = ["Engine", "as_dag"]


def as_dag(job: Any) -> Any:
    """``job`` itself, or ``job.to_dag()`` for a pipeline (anything with ``to_dag`` that is not a DAG)."""
    from dag.model import DAG

    if not isinstance(job, DAG) and callable(getattr(job, "to_dag", None)):
        return job.to_dag()
    return job

RUNTIMES: dict[ExecutionMode, Callable[[EngineServices], Runtime]] = {
    ExecutionMode.STAGED: StagedRuntime, ExecutionMode.PIPELINED: PipelinedRuntime}
"""The runtime of each execution mode."""

CLOSE_JOIN_TIMEOUT = 120.0
"""Seconds ``close()`` waits for each cancelled job to end."""

_job_ids = itertools.count(1)
"""Job ids are unique in the process (like Jet's in a cluster), so engines sharing a SparkContext never share a
Spark job group (``jetspark-<id>``) and cancelling one engine's job cannot cancel another's."""


class Engine:
    """Runs DAGs on Spark.

    Args:
        config: the :class:`~dag.config.EngineConfig` (default: ``EngineConfig()``, local Spark on all cores).
        spark: an existing ``SparkSession`` to borrow instead of starting one (``config.master`` and
            ``config.spark_conf`` are then ignored; ``close()`` stops it only when jetspark started it and this
            was the last engine using it).

    A second engine in a process (without ``spark``) shares the running session when ``master`` and
    ``spark_conf`` agree with it; members, parallelism and the other fields may differ per engine.
    """

    def __init__(self, config: EngineConfig | None = None, spark: Any = None):
        from dag.runtime.common import session as sessions
        from dag.runtime.common import sharing
        from dag.runtime.common.cluster import check_master_answers, ship_packages

        self._config = config or EngineConfig()
        if spark is None:
            check_master_answers(self._config.master)
            self._spark = sharing.acquire(self._config)
        else:
            sharing.check_alive(spark)
            sharing.borrow(spark)
            sessions.quiet(spark)
            self._spark = spark
        sc = self._spark.sparkContext
        self._master = sc.master
        self._local = sessions.is_local_master(self._master)
        # user modules travel by value unless the workers can import them from the driver's sys.path
        self._ship_user_modules = not self._local or sc.getConf().get("spark.executorEnv.PYTHONPATH") is None
        try:
            if not sessions.on_this_machine(self._master):
                ship_packages(sc)  # executors on other hosts import jetspark from this zip
            self._members = self._config.members or sessions.detect_members(sc, self._master)
        except BaseException:
            sharing.release(self._spark)
            raise
        self._default_parallelism = self._config.default_local_parallelism or max(
            1, sc.defaultParallelism // self._members)
        self._collections = DriverCollections(self._config.partition_count)
        self._jobs: list[Job] = []
        self._lock = threading.Lock()
        self._closed = False
        self._web_ui: Any = None
        if self._config.web_ui_port is not None:
            self._start_web_ui(sc)

    def _start_web_ui(self, sc: Any) -> None:
        """Serve the web page on loopback (local mode) or the driver's host; a failure releases the session."""
        import socket

        from dag.runtime.common import sharing
        from dag.runtime.webui import WebUI

        host = "127.0.0.1" if self._local else (sc.getConf().get("spark.driver.host") or socket.gethostname())
        try:
            self._web_ui = WebUI(self.get_jobs, host, self._config.web_ui_port)
        except BaseException:
            self._closed = True
            sharing.release(self._spark)
            raise

    # ------------------------------------------------------------------ properties
    @property
    def config(self) -> EngineConfig:
        return self._config

    @property
    def spark(self) -> Any:
        """The SparkSession jobs run on."""
        self._check_open()
        return self._spark

    @property
    def members(self) -> int:
        return self._members

    @property
    def web_ui_url(self) -> str | None:
        """The address of the engine's web page, with its access token (``http://127.0.0.1:PORT/?token=...``);
        None when ``EngineConfig.web_ui_port`` is None. ``/metrics`` on the same host and port serves
        Prometheus (send the token as ``Authorization: Bearer TOKEN``)."""
        return None if self._web_ui is None else self._web_ui.url

    @property
    def default_local_parallelism(self) -> int:
        return self._default_parallelism

    @property
    def driver_collections(self) -> DriverCollections:
        """The driver-side maps, lists, observables and topics of this engine (what ``get_map``, ``get_list``,
        ``get_observable``... return; the jobs' runtimes read and write them)."""
        return self._collections

    @property
    def is_local(self) -> bool:
        """True when Spark runs on this machine only (``local[...]``): the engine's ports bind to loopback."""
        return self._local

    # ------------------------------------------------------------------ collections
    def get_map(self, name: str) -> dict:
        """The driver-side map ``name`` (created empty on first use): a ``dict`` whose puts, updates and removes
        go to its event journal (``stream_map_p``); fill it before a job, read it after (or while a stream
        job runs)."""
        return self._collections.get("map", name)

    def get_list(self, name: str) -> list:
        """The driver-side list ``name`` (created empty on first use)."""
        return self._collections.get("list", name)

    def get_replicated_map(self, name: str) -> dict:
        """The driver-side replicated map ``name`` (created empty on first use; a namespace of its own, apart from
        ``get_map``): a ``dict`` whose whole content every processor of a ``map_using_replicated_map`` stage
        holds, refreshed from its event journal as it changes."""
        return self._collections.get("replicated", name)

    # ------------------------------------------------------------------ observables, topics (runtime/observables.py)
    def new_observable(self, name: str | None = None) -> Any:
        """A new, empty :class:`~dag.runtime.common.observables.Observable` for ``Sinks.observable`` (Jet's
        ``newObservable``); named ``name``, or uniquely when ``None``. A name in use is refused."""
        if name is None:
            name = f"observable-{uuid.uuid4().hex[:12]}"
        if not isinstance(name, str) or not name:
            raise DagValidationError(f"new_observable: the name must be a non-empty str or None, got {name!r}")
        if self._collections.exists("observable", name):
            raise DagValidationError(f"new_observable: an observable named '{name}' exists; use "
                                     f"engine.get_observable('{name}') or destroy() it first")
        return self._collections.get("observable", name)

    def get_observable(self, name: str) -> Any:
        """The observable ``name`` (created empty on first use), as ``Sinks.observable(name)`` writes it."""
        return self._collections.get("observable", name)

    def get_observables(self) -> list:
        """Every observable of this engine that was not destroyed, oldest first."""
        return self._collections.observables()

    def get_reliable_topic(self, name: str) -> Any:
        """The reliable topic ``name`` (:class:`~dag.runtime.common.observables.ReliableTopic`, created on first use),
        as ``Sinks.reliable_topic(name)`` publishes to it: ``add_message_listener(fn)``."""
        return self._collections.get("topic", name)

    # ------------------------------------------------------------------ planning and jobs
    def plan(self, dag: Any, config: JobConfig | None = None) -> PhysicalPlan:
        """The physical plan ``dag`` (a DAG or a pipeline) would run with under ``config`` (``.explain()``,
        ``.to_dot()``); validates the DAG. A PIPELINED job's plan explains its tasks and links."""
        dag = as_dag(dag)
        return self._runtime(dag, config).plan(dag)

    def _runtime(self, dag: Any, config: JobConfig | None) -> Runtime:
        """A new runtime of ``dag``'s execution mode under ``config``."""
        return RUNTIMES[self.execution_mode(dag, config)](self)

    def execution_mode(self, dag: Any, config: JobConfig | None = None) -> ExecutionMode:
        """How ``dag`` runs under ``config``: its ``execution_mode``, else PIPELINED iff the DAG has a stream
        source or a vertex whose meta-supplier says ``needs_pipelined = True`` (watermarks in a bounded DAG). A
        stream source given STAGED explicitly is refused (a staged job would never end)."""
        from processors.io.text_streams import is_stream_source

        streams = [v.name for v in as_dag(dag) if is_stream_source(v.meta_supplier)]
        mode = config.execution_mode if config is not None else None
        if mode is None:
            # watermarks in a bounded DAG (a pipeline's BatchStage.add_timestamps) need the pipelined runtime too
            watermarks = any(getattr(v.meta_supplier, "needs_pipelined", False) is True for v in as_dag(dag))
            return ExecutionMode.PIPELINED if streams or watermarks else ExecutionMode.STAGED
        if mode is ExecutionMode.STAGED and streams:
            raise DagValidationError(
                f"vertex '{streams[0]}' is a stream source, which never ends, so the DAG cannot run with "
                "execution_mode=STAGED; use JobConfig(execution_mode=ExecutionMode.PIPELINED) (or leave it None)")
        return mode

    def new_job(self, dag: Any, config: JobConfig | None = None) -> Job:
        """Plan ``dag`` (a DAG, or a pipeline: anything with ``to_dag()``) and start it asynchronously;
        returns the :class:`~dag.runtime.job.Job` at once.

        Planning errors (an invalid DAG or pipeline) and user functions that cannot be pickled
        (``shippable.py``) are raised here, before anything runs. A pipelined job waits here up to 30 s for
        the free Spark slots its gang-scheduled stage needs, then is refused (``JobFailedError`` saying how many
        are needed and free).
        """
        from dag.runtime.common.shippable import check_shippable

        self._check_open()
        from dag.runtime.common.jvm import DEAD_JVM, jvm_alive

        if not jvm_alive(self._spark):
            raise DagError(DEAD_JVM)
        config = config or JobConfig()
        dag = as_dag(dag)
        runtime = self._runtime(dag, config)
        plan = runtime.plan(dag)
        if self._ship_user_modules:
            from dag.runtime.common.session import register_user_modules

            register_user_modules()
        check_shippable(dag)
        runtime.admit(plan, config.name or "(unnamed)")  # a pipelined gang: refused here, not later in join()
        with self._lock:
            job_id = next(_job_ids)
            name = config.name or f"job-{job_id}"
            if any(j.name == name and not j.status.is_terminal for j in self._jobs):
                raise DagValidationError(f"A job named '{name}' is already running; choose another JobConfig.name")
            job = Job(self, runtime, dag, plan, config, job_id, name)  # starts it
            self._jobs.append(job)
        return job

    def get_jobs(self) -> list[Job]:
        """All jobs this engine started, oldest first."""
        with self._lock:
            return list(self._jobs)

    def get_job(self, name: str) -> Job | None:
        """The newest job named ``name``, or None."""
        with self._lock:
            return next((j for j in reversed(self._jobs) if j.name == name), None)

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Cancel running jobs and wait (bounded) until they ended, so none of their tasks still writes and their
        sinks cleaned up; stop the Spark session when jetspark started it and no other engine uses it. Idempotent.
        An engine whose driver JVM died just forgets it, so a new ``Engine()`` starts a new one."""
        from dag.runtime.common import sharing
        from dag.runtime.common.jvm import forget_dead_session, jvm_alive

        if self._closed:
            return
        if self._web_ui is not None:  # the page shows jobs of a live session only
            self._web_ui.close()
        if getattr(self._spark.sparkContext, "_jsc", None) is not None and not jvm_alive(self._spark):
            self._closed = True
            sharing.discard(self._spark)
            forget_dead_session(self._spark)
            return
        running = [job for job in self.get_jobs() if not job.status.is_terminal]
        try:
            for job in running:
                job.cancel()
        except DagValidationError:  # the session was stopped outside the engine: nothing runs any more
            running = []
        for job in running:
            try:
                job.join(CLOSE_JOIN_TIMEOUT)
            except Exception:  # noqa: BLE001 - a cancelled job fails, or did not end in time: close anyway
                pass
        self._closed = True
        sharing.release(self._spark)

    def _check_open(self) -> None:
        from dag.runtime.common.sharing import check_alive

        if self._closed:
            raise DagValidationError("This Engine is closed; create a new Engine")
        check_alive(self._spark)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"Engine(master={self._master!r}, members={self._members}, "
                f"default_local_parallelism={self._default_parallelism})")
