"""Jet 4.5's stage operations lowered to DAGs, engine-free (issue 27, part 3): rebalance, sort, stateful
mapping, inner hash-join, set_preserve_order, batch add_timestamps, apply; bad arguments."""

from __future__ import annotations

import pytest

from dag.errors import DagValidationError
from edges import RoutingPolicy
from pipeline import JoinClause, Pipeline, Sinks, Sources, TestSources, WindowDefinition
from pipeline.stateful import StatefulMapP
from processors import Watermark, counting, verify_processor
from processors.api.suppliers import ProcessorMetaSupplier


def _edge(dag, source: str, dest: str):
    edge, = [e for e in dag.get_outbound_edges(source) if e.dest_name == dest]
    return edge


def test_rebalance_when_lowered_then_no_vertex_and_next_edge_distributed() -> None:
    p = Pipeline.create()
    src = p.read_from(Sources.list("in"))
    src.rebalance().map(str).write_to(Sinks.list("a"))
    src.rebalance(len).filter(bool).write_to(Sinks.list("b"))
    dag = p.to_dag()
    assert [v.name for v in dag.vertices] == ["listSource(in)", "map", "listSink(a)", "filter", "listSink(b)"]
    round_robin, keyed = _edge(dag, "listSource(in)", "map"), _edge(dag, "listSource(in)", "filter")
    assert round_robin.is_distributed and round_robin.routing_policy is RoutingPolicy.UNICAST
    assert keyed.is_distributed and keyed.routing_policy is RoutingPolicy.PARTITIONED
    assert not _edge(dag, "map", "listSink(a)").is_distributed


def test_sort_when_lowered_then_sort_then_one_collector_on_all_to_one() -> None:
    p = Pipeline.create()
    p.read_from(Sources.list("in")).sort(len).write_to(Sinks.list("out"))
    dag = p.to_dag()
    assert [v.name for v in dag.vertices] == ["listSource(in)", "sort", "sort-collect", "listSink(out)"]
    assert dag.get_vertex("sort-collect").local_parallelism == 1
    edge = _edge(dag, "sort", "sort-collect")
    assert edge.is_distributed and edge.routing_policy is RoutingPolicy.PARTITIONED  # all-to-one


def test_stateful_when_lowered_then_jet_names_global_one_processor_keyed_partitioned() -> None:
    p = Pipeline.create()
    src = p.read_from(Sources.list("in"))
    src.map_stateful(list, lambda s, x: x).write_to(Sinks.list("a"))
    src.flat_map_stateful(list, lambda s, x: [x]).write_to(Sinks.list("b"))
    src.grouping_key(len).map_stateful(list, lambda s, k, x: x).write_to(Sinks.list("c"))
    src.grouping_key(len).flat_map_stateful(list, lambda s, k, x: [x]).write_to(Sinks.list("d"))
    src.filter_stateful(set, lambda s, x: True).write_to(Sinks.list("e"))
    dag = p.to_dag()
    names = [v.name for v in dag.vertices]
    assert names[1::2] == ["map-stateful-global", "flatmap-stateful-global", "map-stateful-keyed",
                           "flatmap-stateful-keyed", "map-stateful-global-2"]
    assert dag.get_vertex("map-stateful-global").local_parallelism == 1
    assert _edge(dag, "listSource(in)", "map-stateful-keyed").routing_policy is RoutingPolicy.PARTITIONED


def test_keyed_map_stateful_when_ttl_bad_or_no_timestamps_then_errors_name_the_stage() -> None:
    p = Pipeline.create()
    keyed = p.read_from(Sources.list("in")).grouping_key(len)
    with pytest.raises(DagValidationError, match="stage 'listSource\\(in\\)'.*ttl in milliseconds > 0, got 0"):
        keyed.map_stateful(0, list, lambda s, k, x: x)
    with pytest.raises(DagValidationError, match="no timestamps"):
        keyed.map_stateful(1000, list, lambda s, k, x: x)
    with pytest.raises(TypeError, match=r"takes \(create_fn, fn\) or \(ttl, create_fn, fn\[, on_evict_fn\]\)"):
        keyed.map_stateful(list)
    with pytest.raises(TypeError, match="create_fn must be callable"):
        p.read_from(Sources.list("in")).map_stateful("list", lambda s, x: x)


def test_stateful_processor_when_ttl_passes_then_state_evicted_and_on_evict_result_emitted() -> None:
    from pipeline.events import JetEvent

    def count(state, key, item):
        state.append(item)
        return None

    p = ProcessorMetaSupplier.of(lambda: StatefulMapP(
        "map", list, count, key_fn=lambda x: x[0], ttl=100,
        on_evict_fn=lambda state, key, wm: (key, len(state), wm), events=True))
    (verify_processor(p)  # also saves and restores the state between items
     .input([JetEvent(10, ("a", 1)), JetEvent(50, ("b", 1)), JetEvent(60, ("a", 2)), Watermark(161),
             JetEvent(200, ("a", 3)), Watermark(400)])
     .expect_output([JetEvent(161, ("a", 2, 161)), JetEvent(161, ("b", 1, 161)), Watermark(161),
                     JetEvent(400, ("a", 1, 400)), Watermark(400)]))  # last event + ttl < watermark: evicted


def test_inner_hash_join_when_lowered_then_hash_join_vertex() -> None:
    p = Pipeline.create()
    right = p.read_from(Sources.map("m"))
    p.read_from(Sources.list("in")).inner_hash_join(right, JoinClause.join_map_entries(str),
                                                    lambda l, r: r).write_to(Sinks.list("out"))
    assert "hash-join" in [v.name for v in p.to_dag().vertices]


def test_preserve_order_when_set_then_stateless_stages_isolated_with_the_upstream_parallelism() -> None:
    p = Pipeline.create().set_preserve_order(True)
    p.read_from(TestSources.items(1, 2, 3)).map(str).filter(bool).write_to(Sinks.list("out"))
    dag = p.to_dag()
    assert _edge(dag, "items", "map").routing_policy is RoutingPolicy.ISOLATED
    assert dag.get_vertex("map").local_parallelism == 1 and dag.get_vertex("filter").local_parallelism == 1
    plain = Pipeline.create()
    plain.read_from(TestSources.items(1, 2, 3)).map(str).write_to(Sinks.list("out"))
    assert _edge(plain.to_dag(), "items", "map").routing_policy is RoutingPolicy.UNICAST


def test_batch_add_timestamps_when_lowered_then_stream_stage_windows_and_pipelined() -> None:
    p = Pipeline.create()
    stage = p.read_from(Sources.list("in")).add_timestamps(lambda x: x, 0)
    stage.window(WindowDefinition.tumbling(10)).aggregate(counting()).write_to(Sinks.list("out"))
    dag = p.to_dag()
    assert [v.name for v in dag.vertices][:2] == ["listSource(in)", "add-timestamps"]
    assert dag.get_vertex("add-timestamps").meta_supplier.needs_pipelined is True
    with pytest.raises(TypeError, match="needs a window"):
        stage.aggregate(counting())


def test_apply_when_given_a_function_then_its_stage() -> None:
    p = Pipeline.create()
    out = p.read_from(Sources.list("in")).apply(lambda s: s.map(str).set_name("mine"))
    assert out.name == "mine"
    with pytest.raises(TypeError, match="apply\\(transform_fn\\)"):
        out.apply(42)


def test_keyed_stateful_processor_when_key_is_none_then_null_key_error_names_the_stage() -> None:
    supplier = ProcessorMetaSupplier.of(lambda: StatefulMapP("map", list, lambda s, k, x: x, key_fn=lambda x: None,
                                                             stage="map-stateful-keyed-2"))
    with pytest.raises(ValueError, match="Null key from the key function of stage 'map-stateful-keyed-2'"):
        verify_processor(supplier).disable_snapshots().input([1]).expect_output([1])
