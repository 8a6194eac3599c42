"""Jobs on Spark: lifecycle order across priorities, fan-out computed once, failures, metrics, status,
cancellation, named jobs, driver collections and the plan's explain output."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from dag import DAG, JobConfig, JobFailedError, JobStatus
from edges import between, from_
from processors import (
    AbstractProcessor,
    Processor,
    aggregate_p,
    counting,
    map_p,
    read_list_p,
    read_map_p,
    traverse_iterable,
    write_list_p,
    write_map_p,
)
from tests.support import numbers, unique, wait_for
from tests.support.modes import MODES, ModeEngine
from tests.support.processors import Emit, EmitsNone, Slow

pytestmark = pytest.mark.spark


class Recorder(AbstractProcessor):
    """Emits its lifecycle as events: ("item", ordinal, item), ("complete_edge", ordinal), ("complete",)."""

    def init_processor(self, context):
        self.events = [("init", context.global_processor_index)]
        self.out = None

    def try_process_any(self, ordinal, item):
        self.events.append(("item", ordinal, item))
        return True

    def complete_edge(self, ordinal):
        self.events.append(("complete_edge", ordinal))
        return True

    def complete(self):
        if self.out is None:
            self.events.append(("complete",))
            self.out = traverse_iterable(self.events)
        return self.emit_from_traverser(self.out)


def test_priorities_when_three_inputs_then_groups_drained_and_completed_in_ascending_priority(engine):
    name = unique("prio")
    dag = DAG()
    a = dag.new_vertex("a", lambda: Emit(["a1", "a2"]), local_parallelism=1)
    b = dag.new_vertex("b", lambda: Emit(["b1", "b2"]), local_parallelism=1)
    c = dag.new_vertex("c", lambda: Emit(["c1", "c2"]), local_parallelism=2)
    r = dag.new_vertex("rec", Recorder, local_parallelism=1)
    s = dag.new_vertex("sink", write_list_p(name))
    dag.edge(from_(a).to(r, 0).priority(2))
    dag.edge(from_(b).to(r, 1).partitioned(str))
    dag.edge(from_(c).to(r, 2).broadcast().priority(1))
    dag.edge(between(r, s))
    engine.new_job(dag).join()
    events = list(engine.get_list(name))
    assert events[0] == ("init", 0) and events[-1] == ("complete",)
    kinds = [(e[0], e[1]) for e in events[1:-1]]
    expected = [("item", 1), ("item", 1), ("complete_edge", 1), ("item", 2), ("item", 2), ("complete_edge", 2),
                ("item", 0), ("item", 0), ("complete_edge", 0)]
    assert kinds == expected
    assert sorted(e[2] for e in events if e[0] == "item") == ["a1", "a2", "b1", "b2", "c1", "c2"]


class CountInits(Processor):
    """Emits one item per init call, to two outbound ordinals."""

    def init(self, outbox, context):
        self.outbox = outbox
        self.pending = [(0, context.global_processor_index), (1, context.global_processor_index)]

    def complete(self):
        while self.pending:
            ordinal, item = self.pending[0]
            if not self.outbox.offer(ordinal, item):
                return False
            self.pending.pop(0)
        return True


def test_fan_out_vertex_when_two_consumers_then_computed_once(engine):
    left, right = unique("left"), unique("right")
    dag = DAG()
    src = dag.new_vertex("src", CountInits, local_parallelism=2)
    x = dag.new_vertex("x", write_list_p(left))
    y = dag.new_vertex("y", write_list_p(right))
    dag.edge(from_(src, 0).to(x)).edge(from_(src, 1).to(y))
    job = engine.new_job(dag)
    job.join()
    assert sorted(engine.get_list(left)) == [0, 1] and sorted(engine.get_list(right)) == [0, 1]
    metrics = job.metrics()
    assert metrics.total("src", "emittedCount", 0) == 2  # each processor ran exactly once
    assert metrics.total("src", "emittedCount", 1) == 2
    assert "persisted once" in engine.plan(dag).explain()


class Boom(AbstractProcessor):
    def init_processor(self, context):
        self.index = context.global_processor_index

    def try_process0(self, item):
        if item == 7:
            explode(item)
        return self.try_emit(item)


def explode(item):
    raise ValueError(f"cannot handle {item}")


def failing_dag(source_list, sink_list):
    dag = DAG()
    s = dag.new_vertex("numbers", read_list_p(source_list), local_parallelism=2)
    b = dag.new_vertex("boom", Boom, local_parallelism=2)
    k = dag.new_vertex("sink", write_list_p(sink_list))
    # isolated: boom#g gets exactly numbers#g's contiguous slice (a unicast edge lets the source deal on demand)
    dag.edge(between(s, b).isolated()).edge(between(b, k))
    return dag


def test_failure_when_processor_raises_then_job_failed_error_names_vertex_index_type_and_traceback(engine):
    src = numbers(engine, 10)  # 0..4 -> processor 0, 5..9 -> processor 1
    job = engine.new_job(failing_dag(src, unique("out")), JobConfig(name=unique("failing")))
    with pytest.raises(JobFailedError) as info:
        job.join()
    err = info.value
    assert (err.vertex, err.processor_index, err.exc_type) == ("boom", 1, "ValueError")
    assert err.exc_message == "cannot handle 7" and err.job_name == job.name
    assert "in explode" in err.user_traceback and "raise ValueError" in err.user_traceback
    assert "py4j" not in str(err) and "org.apache.spark" not in str(err)
    assert job.status is JobStatus.FAILED
    # the engine stays usable
    ok = unique("ok")
    engine.get_list(ok).extend(range(5))
    out = unique("out")
    engine.new_job(failing_dag(ok, out)).join()
    assert sorted(engine.get_list(out)) == list(range(5))


def test_failure_when_processor_emits_none_then_contract_error_reported(engine):
    src = numbers(engine, 3)
    dag = DAG()
    s = dag.new_vertex("numbers", read_list_p(src), local_parallelism=1)
    n = dag.new_vertex("nones", EmitsNone, local_parallelism=1)
    k = dag.new_vertex("sink", write_list_p(unique("out")))
    dag.edge(between(s, n)).edge(between(n, k))
    with pytest.raises(JobFailedError) as info:
        engine.new_job(dag).join()
    assert info.value.exc_type == "ProcessorContractError" and info.value.vertex == "nones"
    assert "None" in info.value.exc_message


def test_metrics_when_job_done_then_received_and_emitted_per_processor_and_ordinal(engine):
    src, out = numbers(engine, 10), unique("out")
    dag = DAG()
    s = dag.new_vertex("numbers", read_list_p(src), local_parallelism=2)
    m = dag.new_vertex("evens", map_p(lambda x: x if x % 2 == 0 else None), local_parallelism=2)
    k = dag.new_vertex("sink", write_list_p(out))
    # isolated: evens#g gets exactly numbers#g's contiguous slice (a unicast edge would let the source deal
    # its items on demand, EngineConfig.deal_driver_sources, and which processor takes which would vary)
    dag.edge(between(s, m).isolated()).edge(between(m, k))
    job = engine.new_job(dag)
    job.join()
    metrics = job.metrics()
    assert metrics["evens"][0] == {"receivedCount": {0: 5}, "emittedCount": {0: 3}}  # 0, 2, 4
    assert metrics["evens"][1] == {"receivedCount": {0: 5}, "emittedCount": {0: 2}}  # 6, 8
    assert metrics.total("numbers", "emittedCount") == 10
    assert metrics.total("sink", "receivedCount") == 5


def test_driver_map_round_trip_then_entries_sliced_and_written(engine):
    src, out = unique("map-in"), unique("map-out")
    engine.get_map(src).update({f"k{i}": i for i in range(7)})
    dag = DAG()
    s = dag.new_vertex("read", read_map_p(src))
    m = dag.new_vertex("inc", map_p(lambda e: (e[0], e[1] + 1)))
    k = dag.new_vertex("write", write_map_p(out))
    dag.edge(between(s, m)).edge(between(m, k))
    engine.new_job(dag).join()
    assert engine.get_map(out) == {f"k{i}": i + 1 for i in range(7)}


def test_job_when_started_then_named_listed_and_status_completes(engine):
    src = numbers(engine, 2)
    name = unique("named")
    job = engine.new_job(failing_dag(src, unique("out")), JobConfig(name=name))
    assert job.name == name and job.submission_time <= time.time()
    assert job.status in (JobStatus.NOT_RUNNING, JobStatus.STARTING, JobStatus.RUNNING, JobStatus.COMPLETING,
                          JobStatus.COMPLETED)
    job.join(timeout=120)
    assert job.status is JobStatus.COMPLETED
    assert engine.get_job(name) is job and job in engine.get_jobs()


def test_job_when_cancelled_then_fails_as_cancelled(engine):
    src = numbers(engine, 200)
    dag = DAG()
    s = dag.new_vertex("numbers", read_list_p(src), local_parallelism=1)
    w = dag.new_vertex("slow", Slow, local_parallelism=1)
    dag.edge(between(s, w))
    job = engine.new_job(dag)
    tracker = engine.spark.sparkContext.statusTracker()
    wait_for(lambda: job.status is JobStatus.RUNNING and tracker.getActiveStageIds(), 60,
             lambda: f"the job RUNNING with a Spark stage active (status {job.status})")
    job.cancel()
    with pytest.raises(JobFailedError, match="cancelled"):
        job.join(timeout=60)
    assert job.status is JobStatus.FAILED


def test_plan_explain_when_engine_plans_then_shows_stages_ops_and_parallelism(engine):
    src = unique("nums")
    text = engine.plan(failing_dag(src, unique("out"))).explain()
    assert "Stage 0: 2 tasks" in text
    assert "boom: processors, parallelism 2 (local 2 x 1 member)" in text
    assert "fused (same task, no serialization)" in text
    assert "widened from local parallelism 1 (driver sink" in text  # was coalesce(2 -> 1), see widening.py


class TwoInsteadOfOne:
    """A ProcessorSupplier breaking the get(count) contract."""

    def init(self, context):
        pass

    def get(self, count):
        return [Slow() for _ in range(count + 1)]

    def close(self, error):
        pass


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name.lower())
def test_failure_when_supplier_returns_wrong_count_then_clear_error(engine, mode):
    from processors import ProcessorSupplier

    class Wrong(TwoInsteadOfOne, ProcessorSupplier):
        pass

    dag = DAG()
    dag.new_vertex("wrong", Wrong(), local_parallelism=1)
    with pytest.raises(JobFailedError, match="DagValidationError .*Requested: 1, returned: 2") as info:
        ModeEngine(engine, mode).new_job(dag).join()
    assert info.value.vertex == "wrong"


class WaitsForFile(AbstractProcessor):
    """Holds its task running until ``release`` exists (at most 60 s), so a progress poll can see it."""

    def __init__(self, release):
        super().__init__()
        self.release = release

    def try_process0(self, item):
        deadline = time.monotonic() + 60
        while not os.path.exists(self.release) and time.monotonic() < deadline:
            time.sleep(0.05)
        return True


def test_progress_when_enabled_then_prints_stage_lines(engine, capsys, tmp_path):
    from dag import Engine, EngineConfig

    eng = Engine(EngineConfig(progress=True), spark=engine.spark)
    src = numbers(eng, 3)
    release = str(tmp_path / "release")
    dag = DAG()
    s = dag.new_vertex("numbers", read_list_p(src), local_parallelism=1)
    w = dag.new_vertex("slow", lambda: WaitsForFile(release), local_parallelism=1)
    dag.edge(between(s, w))
    job = eng.new_job(dag, JobConfig(name=unique("progress")))
    printed = []

    def running_line() -> bool:
        printed.append(capsys.readouterr().err)
        return " tasks (1 running)" in "".join(printed)

    try:  # Spark's status tracker lags its listener bus, by seconds after busy tests: wait for the line
        wait_for(running_line, 60, lambda: f"a ' tasks (1 running)' progress line; printed {''.join(printed)!r}",
                 interval=0.1)
    finally:
        open(release, "w").close()
    job.join()
    err = "".join(printed) + capsys.readouterr().err
    assert f"[{job.name}] numbers, slow: count() (runs the sink processors)" in err
    assert f"[{job.name}] stage " in err and " tasks (1 running)" in err


def test_failure_when_partition_key_fn_raises_then_sending_vertex_named(engine):
    src = numbers(engine, 4)
    dag = DAG()
    s = dag.new_vertex("numbers", read_list_p(src), local_parallelism=1)
    m = dag.new_vertex("halves", map_p(lambda x: x / 2), local_parallelism=1)
    k = dag.new_vertex("sink", write_list_p(unique("out")), local_parallelism=2)
    dag.edge(between(s, m)).edge(between(m, k).partitioned(lambda x: {}[x]))
    with pytest.raises(JobFailedError) as info:
        engine.new_job(dag).join()
    assert (info.value.vertex, info.value.processor_index, info.value.exc_type) == ("halves", 0, "KeyError")


class Closes(Processor):
    """Records every close() in a file of its own, so the test can count closes across Spark tasks."""

    def __init__(self, directory):
        self.directory = directory

    def close(self):
        (self.directory / uuid.uuid4().hex).write_text("closed")


def test_close_when_supplier_creates_sibling_processors_then_every_created_processor_is_closed(engine, tmp_path):
    dag = DAG()
    dag.new_vertex("v", lambda: Closes(tmp_path), local_parallelism=2)
    engine.new_job(dag).join()
    # each of the 2 tasks asks the member's supplier for get(2): 4 processors made, 2 of them run; all 4 closed
    assert len(list(tmp_path.iterdir())) == 4


class Sides(AbstractProcessor):
    """Ordinals 0 and 1: side inputs (arrive first); ordinal 2: items, emitted with both side inputs."""

    def __init__(self):
        super().__init__()
        self.sides = ([], [])

    def try_process0(self, item):
        self.sides[0].append(item)
        return True

    def try_process1(self, item):
        self.sides[1].append(item)
        return True

    def try_process2(self, item):
        return self.try_emit((item, sorted(self.sides[0]), sorted(self.sides[1])))


def test_broadcast_side_inputs_when_ready_together_then_one_spark_job_collects_them_and_main_input_keeps_ordinal(
        engine):
    name = unique("sides")
    dag = DAG()
    left = dag.new_vertex("left", lambda: Emit(["l1", "l2"]), local_parallelism=1)
    right = dag.new_vertex("right", lambda: Emit(["r1"]), local_parallelism=1)
    main_input = unique("main-input")
    main = dag.new_vertex("main", read_list_p(main_input))
    count = dag.new_vertex("count", aggregate_p(counting()), local_parallelism=1)
    sides = dag.new_vertex("sides", Sides, local_parallelism=2)
    sink = dag.new_vertex("sink", write_list_p(name))
    engine.get_list(main_input).extend(["a", "b", "c"])
    dag.edge(from_(left).to(sides, 0).broadcast().priority(-1)) \
        .edge(from_(right).to(count).broadcast()) \
        .edge(from_(count).to(sides, 1).broadcast().priority(-1)) \
        .edge(from_(main).to(sides, 2)) \
        .edge(between(sides, sink))
    job = engine.new_job(dag)
    job.join()
    assert sorted(engine.get_list(name)) == [(x, ["l1", "l2"], [1]) for x in "abc"]
    tracker = engine.spark.sparkContext.statusTracker()
    assert len(tracker.getJobIdsForGroup(job.group_id)) == 2  # one collection for both broadcasts, one action
    assert "broadcast into the only processor of 'count'" in job.plan.explain()
