"""The pipelined runtime on Spark: lifecycle (cancel, failure, join timeout, metrics), explain, watermarks in
flight, and that a job leaves no thread or socket behind on the driver or in the Python workers."""

from __future__ import annotations

import time

import pytest

from dag import CancellationError, DAG, DagValidationError, ExecutionMode, JobConfig, JobFailedError, JobStatus
from edges import between
from processors import AbstractProcessor, Watermark, map_p, read_list_p, write_list_p
from tests.support import channel_closed, running, stray_jetspark_threads, unique, wait_for, wait_no_threads_left
from tests.support.processors import Endless

pytestmark = pytest.mark.spark
PIPELINED = JobConfig(execution_mode=ExecutionMode.PIPELINED)


class FailOn(AbstractProcessor):
    def try_process0(self, item):
        if item == 57:
            raise ValueError("cannot take 57")
        return self.try_emit(item)


def endless_dag(sink_name):
    dag = DAG()
    src = dag.new_vertex("endless", Endless, local_parallelism=1)
    double = dag.new_vertex("double", map_p(lambda x: 2 * x))
    sink = dag.new_vertex("sink", write_list_p(sink_name))
    dag.edge(between(src, double)).edge(between(double, sink))
    return dag


def test_pipelined_when_cancelled_then_failed_with_cancellation_error_and_nothing_left(engine):
    name = unique("endless")
    job = engine.new_job(endless_dag(name), PIPELINED)
    # live sink: results arrive while the job runs (the session's first job may start slowly on a loaded machine)
    wait_for(lambda: len(engine.get_list(name)) > 1000, 120, "the live sink to fill")
    assert job.status is JobStatus.RUNNING
    wait_for(lambda: job.metrics().total("endless", "emittedCount") > 0, 30, "live metrics")
    with pytest.raises(TimeoutError):
        job.join(timeout=0.2)
    job.cancel()
    with pytest.raises(CancellationError):
        job.join(timeout=60)
    assert job.status is JobStatus.FAILED
    assert channel_closed(job)
    wait_no_threads_left(engine)


def test_pipelined_when_processor_fails_then_job_fails_naming_vertex_processor_and_traceback(engine):
    name = unique("fail")
    engine.get_list(name + "-in").extend(range(100))
    dag = DAG()
    src = dag.new_vertex("src", read_list_p(name + "-in"))
    bad = dag.new_vertex("picky", FailOn)
    sink = dag.new_vertex("sink", write_list_p(name))
    dag.edge(between(src, bad)).edge(between(bad, sink))
    started = time.monotonic()
    job = engine.new_job(dag, PIPELINED)
    with pytest.raises(JobFailedError) as info:
        job.join(timeout=120)
    assert not isinstance(info.value, CancellationError)
    assert info.value.vertex == "picky" and info.value.exc_type == "ValueError"
    assert info.value.processor_index in (0, 1)
    assert "cannot take 57" in str(info.value) and "try_process0" in info.value.user_traceback
    assert time.monotonic() - started < 60
    assert stray_jetspark_threads() == []


def test_pipelined_when_endless_job_fails_in_another_task_then_whole_job_stops(engine):
    name = unique("endless-fail")
    dag = DAG()
    src = dag.new_vertex("endless", Endless, local_parallelism=2)
    bad = dag.new_vertex("picky", FailOn, local_parallelism=2)
    sink = dag.new_vertex("sink", write_list_p(name))
    dag.edge(between(src, bad).distributed().partitioned(lambda x: x)).edge(between(bad, sink))
    job = engine.new_job(dag, PIPELINED)
    with pytest.raises(JobFailedError, match="cannot take 57"):
        job.join(timeout=120)
    wait_no_threads_left(engine)


def test_pipelined_stream_source_with_explicit_staged_mode_refused(engine):
    from processors import stream_socket_p

    dag = DAG()
    dag.new_vertex("socket", stream_socket_p("127.0.0.1", 9))
    with pytest.raises(DagValidationError, match="PIPELINED"):
        engine.new_job(dag, JobConfig(execution_mode=ExecutionMode.STAGED))


def test_pipelined_explain_shows_tasks_and_which_edges_cross_tasks(engine):
    plan = engine.plan(endless_dag("x"), PIPELINED)
    text = plan.explain()
    assert "PIPELINED" in text and "task 0: endless#0" in text
    assert 'between("endless", "double")' in text and "TCP" in text


class EmitWithWatermarks(AbstractProcessor):
    """Processor g emits items and watermarks g*10+1, then 100 (the other processor lags until then)."""

    def init_processor(self, context):
        g = context.global_processor_index
        self.items = iter([f"a{g}", Watermark(g * 10 + 1), f"b{g}", Watermark(100)])

    def complete(self):
        return self.emit_from_traverser(self.items)


class RecordWatermarks(AbstractProcessor):
    def try_process0(self, item):
        return self.try_emit(item)

    def try_process_watermark(self, watermark):
        return self.try_emit(("wm", watermark.timestamp))


def test_pipelined_watermarks_are_coalesced_over_senders_and_strictly_increasing(engine):
    name = unique("wm")
    dag = DAG()
    src = dag.new_vertex("src", EmitWithWatermarks, local_parallelism=2)
    rec = dag.new_vertex("rec", RecordWatermarks, local_parallelism=1)
    sink = dag.new_vertex("sink", write_list_p(name))
    dag.edge(between(src, rec).distributed()).edge(between(rec, sink))
    engine.new_job(dag, PIPELINED).join(timeout=120)
    got = engine.get_list(name)
    wms = [x[1] for x in got if isinstance(x, tuple)]
    # the minimum over the senders not yet done, strictly increasing (a done sender stops holding back: Jet)
    assert wms in ([1, 11, 100], [1, 100], [11, 100])
    assert sorted(x for x in got if isinstance(x, str)) == ["a0", "a1", "b0", "b1"]


def test_new_job_when_gang_slots_taken_then_refused_naming_needed_and_free(engine, monkeypatch):
    from dag.runtime.pipelined import coordinator

    first = unique("slots-holder")
    with running(engine, endless_dag(first), PIPELINED):
        # the holder's stage runs: its tasks hold every slot
        wait_for(lambda: len(engine.get_list(first)) > 100, 30, "the holder's output")
        wait_for(lambda: coordinator.free_slots(engine.spark.sparkContext) == 0, 30, "no free slot")
        monkeypatch.setattr(coordinator, "SLOT_WAIT_SECONDS", 0.5)
        with pytest.raises(JobFailedError, match=r"needs 2 free Spark task slot\(s\).*only 0 of 2 are free"):
            engine.new_job(endless_dag(unique("slots-refused")), JobConfig(name="refused", **PIPELINED.model_dump(
                exclude={"name"})))
        assert engine.get_job("refused") is None  # refused before a Job existed
