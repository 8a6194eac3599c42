"""A windowing vertex shows its window (size, slide) in DOT, describe() and the planner's explain()/to_dot();
ordinary vertices stay as they were (DOT byte for byte Jet's: tests/dag/test_dag_dot.py)."""

from __future__ import annotations

import pydot

from dag import DAG, EngineConfig
from dag.planner import plan_dag
from edges import between
from processors import (TimestampKind, accumulate_by_frame_p, aggregate_to_session_window_p,
                        combine_to_sliding_window_p, counting, entry_key, entry_value, noop_p, sliding_win_policy)


def windowed_dag() -> DAG:
    policy = sliding_win_policy(1000, 100)
    dag = DAG()
    source = dag.new_vertex("source", noop_p(), 1)
    stage1 = dag.new_vertex("frames", accumulate_by_frame_p(entry_key, entry_value, TimestampKind.EVENT, policy,
                                                            counting()), 1)
    stage2 = dag.new_vertex("windows", combine_to_sliding_window_p(policy, counting()), 1)
    dag.edge(between(source, stage1).partitioned(entry_key))
    dag.edge(between(stage1, stage2).partitioned(entry_key))
    return dag


def test_dot_when_windowing_vertex_then_label_names_window_and_other_vertices_unchanged():
    text = windowed_dag().to_dot()
    lines = text.split("\n")
    assert '\t"source" [localParallelism=1];' in lines
    assert '\t"frames" [localParallelism=1, label="frames\\nframes of sliding window 1000 by 100"];' in lines
    assert '\t"windows" [localParallelism=1, label="windows\\nsliding window 1000 by 100"];' in lines
    (graph,) = pydot.graph_from_dot_data(text)
    assert graph.get_node('"windows"')[0].get("label") == '"windows\\nsliding window 1000 by 100"'


def test_describe_when_windowing_vertex_then_description_field():
    described = {v.name: v.description for v in windowed_dag().describe().vertices}
    assert described == {"source": None, "frames": "frames of sliding window 1000 by 100",
                         "windows": "sliding window 1000 by 100"}


def test_explain_when_windowing_vertex_then_window_in_vertex_line_and_plan_dot():
    plan = plan_dag(windowed_dag(), EngineConfig(), 1, 2)
    assert "(sliding window 1000 by 100)" in plan.explain()
    assert "\\nsliding window 1000 by 100" in plan.to_dot()


def test_description_when_session_or_tumbling_then_named():
    dag = DAG()
    v = dag.new_vertex("sessions", aggregate_to_session_window_p(30000, entry_value, entry_key, counting()))
    assert v.description == "session window, timeout 30000"
    t = dag.new_vertex("tumbling", combine_to_sliding_window_p(sliding_win_policy(60, 60).with_offset(5), counting()))
    assert t.description == "tumbling window 60, offset 5"
