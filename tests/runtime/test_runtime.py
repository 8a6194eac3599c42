"""The ``Runtime`` interface (``dag/runtime/runtime.py``): both runtimes implement it, ``Engine`` offers what jobs
and runtimes use of it, and a ``Job`` runs on any runtime: here a fake one, without Spark."""

from __future__ import annotations

import inspect
import threading
from types import SimpleNamespace

import pytest

from dag import DAG, CancellationError, DagError, EngineConfig, JobConfig, JobFailedError, JobStatus
from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.engine import RUNTIMES, Engine
from dag.runtime.job import Job
from dag.runtime.common.metrics import EMITTED, JobMetrics
from dag.runtime.pipelined.runtime import PipelinedRuntime
from dag.runtime.runtime import EngineServices, RunningJob, Runtime
from dag.runtime.staged.runtime import StagedRuntime
from processors import noop_p
from tests.support import wait_for

WAIT = 10.0


def _members(protocol: type) -> list[str]:
    return [name for name in vars(protocol) if not name.startswith("_")]


class FakeSparkContext:
    """What a job reads of a SparkContext when its runtime does the Spark work."""

    master = "local[1]"
    pythonExec = "python3"

    def __init__(self):
        self.cancelled: list[str] = []

    def getConf(self) -> dict:
        return {}

    def cancelJobGroup(self, group: str) -> None:
        self.cancelled.append(group)

    def setJobDescription(self, text: str) -> None:
        pass

    def statusTracker(self) -> SimpleNamespace:
        return SimpleNamespace(getJobIdsForGroup=lambda group: [])


class FakeEngine:
    """An :class:`EngineServices` without Spark."""

    def __init__(self):
        self.config = EngineConfig()
        self.sc = FakeSparkContext()
        self.spark = SimpleNamespace(sparkContext=self.sc)
        self.members, self.default_local_parallelism, self.is_local = 1, 1, True
        self.driver_collections = DriverCollections(self.config.partition_count)


class FakeRuntime:
    """Records the calls a job makes, with the job's status at each; ``run()`` waits for ``release``."""

    def __init__(self, fail: BaseException | None = None):
        self.calls: list[str] = []
        self.statuses: dict[str, JobStatus] = {}
        self.job: RunningJob | None = None
        self.release = threading.Event()
        self.fail = fail
        self.closed_with: list[BaseException | None] = []

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if self.job is not None:
            self.statuses[name] = self.job.status

    def plan(self, dag):
        return None

    def admit(self, plan, job_name: str) -> None:
        self._call("admit")

    def attach(self, job: RunningJob) -> None:
        self.job = job
        self._call("attach")

    def start(self) -> None:
        self._call("start")
        assert self.job is not None and self.job.channel is not None, "the channel opens before start()"

    def run(self) -> None:
        self._call("run")
        assert self.release.wait(WAIT), "the test never released run()"
        if self.fail is not None:
            raise self.fail

    def cancel(self) -> None:
        self._call("cancel")
        self.release.set()

    def on_task_failure(self, record: dict) -> None:
        self._call("on_task_failure")

    def metrics(self) -> JobMetrics:
        return JobMetrics({("v", 0, EMITTED, 0): 3})

    def suspension(self, what: str):
        raise DagError(f"{what}: not here")

    def progress_lines(self):
        return None

    def close(self, error: BaseException | None) -> None:
        self._call("close")
        self.closed_with.append(error)


def _dag() -> DAG:
    dag = DAG()
    dag.new_vertex("v", noop_p())
    return dag


def _job(runtime: FakeRuntime, engine: FakeEngine | None = None, name: str = "fake") -> Job:
    return Job(engine or FakeEngine(), runtime, _dag(), None, JobConfig(name=name), 7, name)  # type: ignore[arg-type]


@pytest.mark.parametrize("implementation", [StagedRuntime, PipelinedRuntime])
def test_runtimes_when_compared_with_the_interface_then_each_implements_every_method_with_its_parameters(
        implementation):
    runtime = implementation(FakeEngine())
    assert isinstance(runtime, Runtime)
    for name in _members(Runtime):
        expected = list(inspect.signature(getattr(Runtime, name)).parameters)
        assert list(inspect.signature(getattr(implementation, name)).parameters) == expected, name


def test_engine_when_it_chooses_a_runtime_then_every_execution_mode_has_one_and_engine_offers_engine_services():
    from dag.config import ExecutionMode

    assert set(RUNTIMES) == set(ExecutionMode)
    for name in _members(EngineServices):
        assert isinstance(getattr(Engine, name), property), f"Engine.{name} is what jobs and runtimes read"


def test_job_when_run_on_a_runtime_then_calls_follow_the_lifecycle_and_the_statuses_between_them():
    runtime = FakeRuntime()
    job = _job(runtime)
    wait_for(lambda: "run" in runtime.calls, WAIT, "the runtime's run()")
    assert job.status is JobStatus.RUNNING and job.group_id == "jetspark-7"
    runtime.release.set()
    job.join(WAIT)
    assert runtime.calls == ["attach", "start", "run", "close"]
    assert runtime.statuses == {"attach": JobStatus.NOT_RUNNING, "start": JobStatus.STARTING,
                                "run": JobStatus.RUNNING, "close": JobStatus.COMPLETING}
    assert runtime.closed_with == [None] and job.status is JobStatus.COMPLETED and job.failure is None


def test_job_when_its_runtime_fails_then_close_gets_the_failure_the_group_is_cancelled_and_join_raises_it():
    runtime, engine = FakeRuntime(fail=DagError("the plan broke")), FakeEngine()
    runtime.release.set()
    job = _job(runtime, engine, name="broken")
    with pytest.raises(JobFailedError, match="Job 'broken' failed: the plan broke"):
        job.join(WAIT)
    assert isinstance(runtime.closed_with[0], DagError) and job.status is JobStatus.FAILED
    assert engine.sc.cancelled == ["jetspark-7"]


def test_job_when_cancelled_twice_then_its_runtime_cancels_once_and_join_raises_cancellation_error():
    runtime = FakeRuntime()
    job = _job(runtime, name="stopped")
    wait_for(lambda: "run" in runtime.calls, WAIT, "the runtime's run()")
    job.cancel()
    job.cancel()
    with pytest.raises(CancellationError, match="Job 'stopped' was cancelled"):
        job.join(WAIT)
    assert runtime.calls.count("cancel") == 1 and job.status is JobStatus.FAILED
    job.cancel()  # a finished job ignores a cancel
    assert runtime.calls.count("cancel") == 1


def test_job_when_asked_for_metrics_or_a_suspension_then_its_runtime_answers():
    runtime = FakeRuntime()
    job = _job(runtime)
    try:
        assert job.metrics().total("v", EMITTED) == 3
        with pytest.raises(DagError, match="suspend: not here"):
            job.suspend()
    finally:
        runtime.release.set()
        job.join(WAIT)


def test_staged_runtime_when_suspended_then_refused_naming_the_staged_job():
    runtime = StagedRuntime(FakeEngine())
    runtime.attach(RunningJob(1, "batch", JobConfig(), _dag(), None))  # type: ignore[arg-type]
    with pytest.raises(DagError, match="Job 'batch': resume\\(\\) needs a running PIPELINED job; this one is a "
                                       "STAGED job"):
        runtime.suspension("resume")
    assert runtime.metrics().vertices == [] and runtime.progress_lines() is None


def test_staged_runtime_when_tasks_report_failures_then_the_job_group_is_cancelled_once():
    engine = FakeEngine()
    runtime = StagedRuntime(engine)
    runtime.attach(RunningJob(3, "batch", JobConfig(), _dag(), None))  # type: ignore[arg-type]
    runtime.on_task_failure({"vertex": "v"})
    runtime.on_task_failure({"vertex": "v"})
    wait_for(lambda: engine.sc.cancelled, WAIT, "the job group's cancel")
    assert engine.sc.cancelled == ["jetspark-3"]


def test_pipelined_runtime_when_not_started_then_suspend_names_the_status_and_a_cancel_sets_the_stop_flag():
    runtime = PipelinedRuntime(FakeEngine())
    runtime.attach(RunningJob(4, "stream", JobConfig(), _dag(), None))  # type: ignore[arg-type]
    with pytest.raises(DagError, match="Job 'stream': suspend\\(\\) needs a running PIPELINED job; this one is "
                                       "NOT_RUNNING"):
        runtime.suspension("suspend")
    assert runtime.metrics().vertices == [] and runtime.progress_lines() is None
    runtime.cancel()
    assert runtime._stop.is_set()  # noqa: SLF001 - the flag the coordinator's tasks poll
