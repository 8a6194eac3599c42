"""Lowering a pipeline to a DAG (no Spark): Jet 4's vertex names and edges, peek, unique names, repeatable
to_dag(), and the bad-input errors of the contract."""

from __future__ import annotations

import pytest

from dag.errors import DagValidationError
from edges import RoutingPolicy
from pipeline import JoinClause, Pipeline, Sinks, Sources, TestSources
from processors import ContextFactory, counting, map_p, to_list, whole_item


def _edge(dag, source: str, dest: str):
    edge, = [e for e in dag.get_outbound_edges(source) if e.dest_name == dest]
    return edge


def _names(p: Pipeline) -> list[str]:
    return [v.name for v in p.to_dag().vertices]


def test_stateless_stages_when_lowered_then_one_vertex_each_with_jets_names() -> None:
    p = Pipeline.create()
    ctx = ContextFactory.with_create_fn(lambda: 1)
    (p.read_from(Sources.list("in")).map(str).filter(bool).flat_map(list)
     .map_using_context(ctx, lambda c, x: x).filter_using_context(ctx, lambda c, x: True)
     .flat_map_using_context(ctx, lambda c, x: [x]).custom_transform("mine", map_p(str))
     .write_to(Sinks.list("out")))
    assert _names(p) == ["listSource(in)", "map", "filter", "flat-map", "map-using-context", "filter-using-context",
                         "flat-map-using-context", "mine", "listSink(out)"]
    dag = p.to_dag()
    for edge in dag.edges:
        assert edge.routing_policy is RoutingPolicy.UNICAST and edge.is_local


def test_repeated_names_when_lowered_then_suffixed_2_and_3() -> None:
    p = Pipeline.create()
    p.read_from(Sources.list("in")).map(str).map(str).map(str).set_name("last").write_to(Sinks.noop())
    assert _names(p) == ["listSource(in)", "map", "map-2", "last", "noop"]


def test_keyed_aggregate_when_lowered_then_prepare_local_partitioned_then_distributed_partitioned() -> None:
    p = Pipeline.create()
    p.read_from(Sources.list("in")).grouping_key(len).aggregate(counting()).write_to(Sinks.map("m"))
    dag = p.to_dag()
    into_prepare = _edge(dag, "listSource(in)", "group-and-aggregate-prepare")
    assert into_prepare.routing_policy is RoutingPolicy.PARTITIONED and into_prepare.is_local
    between = _edge(dag, "group-and-aggregate-prepare", "group-and-aggregate")
    assert between.routing_policy is RoutingPolicy.PARTITIONED and between.is_distributed
    assert between.key_fn(("k", 3)) == "k"
    assert "subgraph cluster_0" in dag.to_dot()


def test_unkeyed_aggregate_when_lowered_then_distributed_all_to_one_into_one_combiner() -> None:
    p = Pipeline.create()
    p.read_from(Sources.list("in")).aggregate(counting()).write_to(Sinks.list("n"))
    dag = p.to_dag()
    assert _edge(dag, "listSource(in)", "aggregate-prepare").routing_policy is RoutingPolicy.UNICAST
    edge = _edge(dag, "aggregate-prepare", "aggregate")
    assert edge.is_all_to_one and edge.is_distributed
    assert dag.get_vertex("aggregate").local_parallelism == 1


def test_co_group_when_lowered_then_each_input_partitioned_at_its_ordinal() -> None:
    p = Pipeline.create()
    a = p.read_from(Sources.list("a")).grouping_key(len)
    b = p.read_from(Sources.list("b")).grouping_key(len)
    a.aggregate2(counting(), b, to_list()).write_to(Sinks.list("out"))
    dag = p.to_dag()
    assert _edge(dag, "listSource(a)", "co-group-and-aggregate-prepare").dest_ordinal == 0
    second = _edge(dag, "listSource(b)", "co-group-and-aggregate-prepare")
    assert second.dest_ordinal == 1 and second.routing_policy is RoutingPolicy.PARTITIONED and second.is_local
    assert _edge(dag, "co-group-and-aggregate-prepare", "co-group-and-aggregate").is_distributed


def test_hash_join_when_lowered_then_collectors_broadcast_with_priority_minus_one() -> None:
    p = Pipeline.create()
    trades = p.read_from(Sources.list("trades"))
    products = p.read_from(Sources.map("products"))
    brokers = p.read_from(Sources.map("brokers"))
    trades.hash_join2(products, JoinClause.join_map_entries(len), brokers, JoinClause.join_map_entries(len),
                      lambda t, p_, b: (t, p_, b)).write_to(Sinks.list("out"))
    dag = p.to_dag()
    assert _edge(dag, "listSource(trades)", "hash-join").dest_ordinal == 0
    for n, source in ((1, "mapSource(products)"), (2, "mapSource(brokers)")):
        collector = f"hash-join-collector-{n}"
        assert dag.get_vertex(collector).local_parallelism == 1
        into = _edge(dag, source, collector)
        assert into.routing_policy is RoutingPolicy.BROADCAST and into.is_distributed
        out = _edge(dag, collector, "hash-join")
        assert (out.routing_policy, out.is_local, out.get_priority(), out.dest_ordinal) == (
            RoutingPolicy.BROADCAST, True, -1, n)


def test_peek_when_lowered_then_no_vertex_and_the_previous_vertex_wrapped() -> None:
    p = Pipeline.create()
    p.read_from(TestSources.items(1, 2)).map(str).peek().write_to(Sinks.logger())
    dag = p.to_dag()
    assert [v.name for v in dag.vertices] == ["items", "map", "loggerSink"]
    assert "Peek" in type(dag.get_vertex("map").supplier).__name__


def test_fork_when_one_stage_feeds_two_then_consecutive_outbound_ordinals() -> None:
    p = Pipeline.create()
    src = p.read_from(Sources.list("in"))
    src.write_to(Sinks.list("a"))
    src.map(str).write_to(Sinks.list("b"))
    dag = p.to_dag()
    assert sorted(e.source_ordinal for e in dag.get_outbound_edges("listSource(in)")) == [0, 1]


def test_to_dag_when_called_twice_then_equal_dags() -> None:
    p = Pipeline.create()
    words = p.read_from(Sources.list("in")).flat_map(str.split)
    words.grouping_key(whole_item).aggregate(counting()).write_to(Sinks.map("m"))
    words.distinct().peek().write_to(Sinks.list("d"))
    first, second = p.to_dag(), p.to_dag()
    assert first is not second
    assert first.describe() == second.describe()
    assert first.to_dot() == second.to_dot()


def test_distinct_when_lowered_then_two_stages() -> None:
    p = Pipeline.create()
    p.read_from(Sources.list("in")).distinct().write_to(Sinks.list("d"))
    dag = p.to_dag()
    assert _edge(dag, "distinct-prepare", "distinct").is_distributed


def test_stage_when_nothing_attached_then_error_names_the_stages() -> None:
    p = Pipeline.create()
    src = p.read_from(Sources.list("in"))
    src.map(str).set_name("dangling")
    src.filter(bool).write_to(Sinks.noop())
    with pytest.raises(DagValidationError, match=r"These transforms have nothing attached to them: \[dangling\]"):
        p.to_dag()


def test_stream_stage_when_aggregate_without_window_then_type_error_says_add_window() -> None:
    p = Pipeline.create()
    stream = p.read_from(Sources.stream_from_processor("s", map_p(str))).without_timestamps()
    with pytest.raises(TypeError, match=r"stage 's'.*window\("):
        stream.aggregate(counting())
    with pytest.raises(TypeError, match=r"window\("):
        stream.grouping_key(len).aggregate(counting())
    with pytest.raises(TypeError, match=r"window\("):
        stream.distinct()


def test_stream_source_when_used_before_timestamps_then_error_says_choose() -> None:
    p = Pipeline.create()
    stage = p.read_from(Sources.stream_from_processor("s", map_p(str)))
    with pytest.raises(AttributeError, match=r"stage 's'.*without_timestamps\(\)"):
        stage.map(str)
    with pytest.raises(DagValidationError, match=r"'s' have no timestamp choice"):
        p.to_dag()


def test_hash_join_when_stream_stage_is_the_joined_side_then_error_names_it() -> None:
    p = Pipeline.create()
    left = p.read_from(Sources.list("in"))
    stream = p.read_from(Sources.stream_from_processor("s", map_p(str))).without_timestamps()
    with pytest.raises(TypeError, match=r"stage 'listSource\(in\)'.*StreamStage 's' as the joined"):
        left.hash_join(stream, JoinClause.join_map_entries(str), lambda a, b: a)


def test_builder_when_given_a_stage_of_another_pipeline_then_error_names_it() -> None:
    p, other = Pipeline.create(), Pipeline.create()
    left = p.read_from(Sources.list("in"))
    foreign = other.read_from(Sources.map("m"))
    with pytest.raises(DagValidationError, match=r"'mapSource\(m\)' of another pipeline"):
        left.hash_join_builder().add(foreign, JoinClause.join_map_entries(str))
    with pytest.raises(DagValidationError, match="another pipeline"):
        left.grouping_key(len).aggregate_builder(counting()).add(foreign.grouping_key(len), counting())
    with pytest.raises(DagValidationError, match="another pipeline"):
        left.merge(foreign)


def test_sink_builder_product_when_written_to_then_vertex_named_by_the_sink() -> None:
    from processors import SinkBuilder

    sink = SinkBuilder.sink_builder("cpu-sink", lambda ctx: None).receive_fn(lambda s, i: None).build()
    p = Pipeline.create()
    p.read_from(TestSources.items(1)).write_to(sink)
    assert _names(p) == ["items", "cpu-sink"]
