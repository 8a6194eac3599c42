"""Issue 22, defect 1: in STAGED mode a watermark goes to ``try_process_watermark``, coalesced per upstream
processor, never into ``process()``; every windowing DAG of the manual gives the same results in both modes.

Each DAG reads a bounded ``SourceBuilder.batch`` source, stamps it with ``insert_watermarks_p`` and passes
through :class:`Recorder` vertices, which fail the job if a ``Watermark`` reaches them as an item and report
(on their second outbound edge, into the list ``recorded``) how many watermarks ``try_process_watermark`` gave
them and the last one.
"""

from __future__ import annotations

from collections import Counter

import pytest

from dag import DAG, ExecutionMode, JobConfig
from edges import Partitioner, between, from_
from processors import (AbstractProcessor, SourceBuilder, TimestampKind, Watermark, accumulate_by_frame_p,
                        aggregate_to_session_window_p, aggregate_to_sliding_window_p, combine_to_sliding_window_p,
                        counting, emit_by_frame, entry_key, insert_watermarks_p, limiting_lag,
                        limiting_lag_and_lull, map_p, no_throttling, sliding_win_policy, tumbling_win_policy,
                        wm_gen_params, write_list_p)
from dag.planner.physical_plan import EdgeOp, Route
from dag.runtime.common.senders import SenderSpec, send, senders_of
from processors.execution.staged_watermarks import DONE, SenderWatermark
from tests.support import unique

SLIDING = sliding_win_policy(2000, 1000)
KEYS = ("a", "b", "c")
EVENTS = 3000


def event_key(event: tuple) -> str:
    return event[0]


def event_time(event: tuple) -> int:
    return event[1]


def events() -> list[tuple]:
    """``(key, ts)``: 10 ms apart, each one up to 300 ms out of order (within every test's lag of 500 ms), so no
    event is late; the gap after every 400th event ends the sessions."""
    out = []
    for i in range(EVENTS):
        ts = i * 10 + (i // 400) * 5000 - (i * 7919 % 31) * 10
        out.append((KEYS[i % 3], max(ts, 0)))
    return out


def fill(state: list, buf) -> None:
    for event in state[:250]:
        buf.add(event)
    del state[:250]
    if not state:
        buf.close()


def source():
    return SourceBuilder.batch("events", lambda ctx: events()).fill_buffer_fn(fill).build()


class Recorder(AbstractProcessor):
    """Passes items on ordinal 0 and forwards watermarks; a ``Watermark`` as an item fails the job. At the end it
    emits ``(vertex, index, watermarks received, last watermark)`` on ordinal 1."""

    def init_processor(self, context):
        self.name, self.index = context.vertex_name, context.global_processor_index
        self.count, self.last = 0, None

    def try_process0(self, item):
        if isinstance(item, Watermark):
            raise AssertionError(f"{self.name}#{self.index}: process() received {item!r} as an item")
        return self.try_emit(item, 0)

    def try_process_watermark(self, watermark):
        if not self.try_emit(watermark, 0):
            return False
        if self.last is not None and watermark.timestamp <= self.last:
            raise AssertionError(f"{self.name}#{self.index}: {watermark!r} after Watermark({self.last})")
        self.count, self.last = self.count + 1, watermark.timestamp
        return True

    def complete(self):
        return self.try_emit((self.name, self.index, self.count, self.last), 1)


def build(windows: str, results: str, recorded: str, middle: bool = False) -> DAG:
    """events -> [map_p "parse" when ``middle``] -> insert_watermarks_p (lp 1) -> Recorder "stamped" (lp 1) ->
    (partitioned, distributed) windows -> Recorder "windowed" (lp 1: the window processors' watermarks meet
    there, over a coalesce) -> sink; both recorders report into ``recorded``."""
    dag = DAG()
    head = dag.new_vertex("events", source())
    if middle:  # insert_watermarks_p in the middle of the pipeline, not right after the source
        parse = dag.new_vertex("parse", map_p(tuple))
        parse.local_parallelism = 1
        dag.edge(between(head, parse))
        head = parse
    stamp = dag.new_vertex("insertWmP", insert_watermarks_p(wm_gen_params(event_time, limiting_lag(500),
                                                                          no_throttling())))
    stamped, windowed = dag.new_vertex("stamped", Recorder), dag.new_vertex("windowed", Recorder)
    stamp.local_parallelism = stamped.local_parallelism = windowed.local_parallelism = 1
    sink, record = dag.new_vertex("sink", write_list_p(results)), dag.new_vertex("recorded", write_list_p(recorded))
    first, last = _windows(dag, windows)
    (dag.edge(between(head, stamp).isolated())
        .edge(between(stamp, stamped))
        .edge(between(stamped, first).partitioned(event_key).distributed())
        .edge(between(last, windowed))
        .edge(between(windowed, sink))
        .edge(from_(stamped, 1).to(record))
        .edge(from_(windowed, 1).to(record, 1)))
    return dag


def _windows(dag: DAG, windows: str):
    if windows == "sliding":
        v = dag.new_vertex("sliding", aggregate_to_sliding_window_p(
            event_key, event_time, TimestampKind.EVENT, SLIDING, counting()))
        return v, v
    if windows == "tumbling":
        v = dag.new_vertex("tumbling", aggregate_to_sliding_window_p(
            event_key, event_time, TimestampKind.EVENT, tumbling_win_policy(1000), counting()))
        return v, v
    if windows == "session":
        v = dag.new_vertex("sessions", aggregate_to_session_window_p(500, event_time, event_key, counting()))
        return v, v
    if windows == "two-stage":
        stage1 = dag.new_vertex("stage-1", accumulate_by_frame_p(
            event_key, event_time, TimestampKind.EVENT, SLIDING, counting()))
        stage2 = dag.new_vertex("stage-2", combine_to_sliding_window_p(SLIDING, counting()))
        dag.edge(between(stage1, stage2).partitioned(entry_key).distributed())
        return stage1, stage2
    raise ValueError(windows)


def run(engine, dag_of, mode: ExecutionMode) -> tuple[list, list]:
    results, recorded = unique("results"), unique("recorded")
    engine.new_job(dag_of(results, recorded), JobConfig(execution_mode=mode)).join(timeout=300)
    return engine.get_list(results), engine.get_list(recorded)


def sliding_counts(policy) -> list:
    """The reference: per key and window end, the events in ``[end - size, end)``."""
    counts: Counter = Counter()
    for key, ts in events():
        end = (ts // policy.frame_size + 1) * policy.frame_size
        for e in range(end, end + policy.window_size, policy.frame_size):
            counts[key, e] += 1
    return sorted(counts.items())


def as_counts(results: list) -> list:
    return sorted(((r.key, r.timestamp), r.value) for r in results)


@pytest.mark.spark
@pytest.mark.parametrize("windows,middle", [("sliding", False), ("tumbling", False), ("two-stage", False),
                                            ("session", False), ("sliding", True), ("two-stage", True)])
def test_windowing_dag_when_run_staged_then_watermarks_coalesced_and_same_results_as_pipelined(
        engine, windows, middle):
    dag_of = lambda results, recorded: build(windows, results, recorded, middle)  # noqa: E731
    staged, staged_recorded = run(engine, dag_of, ExecutionMode.STAGED)
    pipelined, _ = run(engine, dag_of, ExecutionMode.PIPELINED)
    assert staged and sorted(map(repr, staged)) == sorted(map(repr, pipelined))
    if windows in ("sliding", "two-stage"):
        assert as_counts(staged) == sliding_counts(SLIDING)
    by_vertex = {name: (count, last) for name, _, count, last in staged_recorded}
    assert set(by_vertex) == {"stamped", "windowed"}, staged_recorded
    for name, (count, last) in by_vertex.items():  # watermarks reached try_process_watermark in STAGED mode
        assert count > 10 and last is not None, f"{name} got {count} watermarks in STAGED mode"


@pytest.mark.spark
def test_issue_dag_when_run_staged_then_window_counts_as_plain_python(engine):
    """The DAG of issue 22 as reported (a lull of 10 s instead of 1 s, so that a descheduled worker on a busy
    machine cannot advance the watermark past waiting events)."""
    results = unique("results")
    dag = DAG()
    src = dag.new_vertex("source", source())
    wm = dag.new_vertex("insertWmP", insert_watermarks_p(wm_gen_params(
        event_time, limiting_lag_and_lull(500, 10_000), emit_by_frame(SLIDING))))
    wm.local_parallelism = 1
    agg = dag.new_vertex("agg", aggregate_to_sliding_window_p(event_key, event_time, TimestampKind.EVENT, SLIDING,
                                                              counting()))
    sink = dag.new_vertex("sink", write_list_p(results))
    dag.edge(between(src, wm).isolated()).edge(between(wm, agg).partitioned(event_key).distributed())
    dag.edge(between(agg, sink))
    engine.new_job(dag, JobConfig(execution_mode=ExecutionMode.STAGED)).join(timeout=300)
    assert as_counts(engine.get_list(results)) == sliding_counts(SLIDING)


def test_send_when_watermark_on_partitioned_edge_then_every_candidate_gets_it_after_earlier_items_then_done():
    spec = SenderSpec(EdgeOp.PARTITION_BY, Route.PARTITIONED_ALL, 0, ls=1, ld=2, members=1, partition_count=271,
                      queue_size=1024, key_fn=lambda x: x, partitioner=Partitioner.default())
    records = list(send(spec, 1, [[1, 2, 3], Watermark(7), [4]]))
    marks = [(t, item) for t, (_, item) in records if isinstance(item, SenderWatermark)]
    assert marks == [(0, SenderWatermark(1, 7)), (1, SenderWatermark(1, 7)),
                     (0, SenderWatermark(1, DONE)), (1, SenderWatermark(1, DONE))]
    first_mark = next(i for i, (_, (_, item)) in enumerate(records) if isinstance(item, SenderWatermark))
    assert sorted(x for _, (_, items) in records[:first_mark] for x in items) == [1, 2, 3]


def test_send_when_narrow_edge_then_done_mark_only_after_a_watermark_or_nothing():
    spec = SenderSpec(EdgeOp.NARROW, Route.SAME, 0, ls=1, ld=1, members=1, partition_count=271, queue_size=1024)
    assert list(send(spec, 0, [[1], [2]])) == [(0, [1]), (0, [2])]
    assert list(send(spec, 0, [Watermark(3)])) == [(0, SenderWatermark(0, 3)), (0, SenderWatermark(0, DONE))]
    assert list(send(spec, 0, [])) == [(0, SenderWatermark(0, DONE))]


def test_senders_of_when_isolated_then_inverse_of_candidates():
    spec = SenderSpec(EdgeOp.PARTITION_BY, Route.ISOLATED, 0, ls=2, ld=4, members=1, partition_count=271,
                      queue_size=1024)
    assert senders_of(spec, 2) == [[0], [1], [0], [1]]


@pytest.mark.spark
def test_two_stage_windows_when_two_members_then_same_results_as_pipelined(engine):
    """Two members: every processor of both members sends its watermarks to every candidate of the distributed
    edges, and the receivers coalesce over all of them (``stamped#1`` gets no input: its DONE mark releases
    the others). A shuffle is read one sender's block after another, so most watermarks are released at the
    end of the edge; every ``windowed`` processor still gets the top one."""
    from dag import Engine, EngineConfig

    two = Engine(EngineConfig(members=2), spark=engine.spark)
    try:
        dag_of = lambda results, recorded: build("two-stage", results, recorded)  # noqa: E731
        staged, staged_recorded = run(two, dag_of, ExecutionMode.STAGED)
        pipelined, _ = run(two, dag_of, ExecutionMode.PIPELINED)
    finally:
        two.close()
    assert as_counts(staged) == sliding_counts(SLIDING) == as_counts(pipelined)
    top = max(ts for _, ts in events()) - 500
    windowed = [(count, last) for name, _, count, last in staged_recorded if name == "windowed"]
    assert len(windowed) == 2 and all(count >= 1 and last == top for count, last in windowed), staged_recorded
