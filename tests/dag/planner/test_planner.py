"""Planner decisions, without Spark: fusion, the Spark op of every edge kind, validation, pre-aggregation,
explain/DOT content and planning speed."""

from __future__ import annotations


import pytest

from dag import DAG, DagValidationError, EngineConfig
from dag.planner import EdgeOp, Route, plan_dag
from edges import between, from_
from processors import (
    accumulate_by_key_p,
    aggregate_by_key_p,
    combine_by_key_p,
    counting,
    entry_key,
    flat_map_p,
    map_p,
    noop_p,
    read_list_p,
    whole_item,
    write_list_p,
)

CFG = EngineConfig()


def plan(dag, members=1, parallelism=2, config=CFG):
    return plan_dag(dag, config, members, parallelism)


def chain(*lps):
    dag = DAG()
    vs = [dag.new_vertex(f"v{i}", noop_p(), local_parallelism=lp) for i, lp in enumerate(lps)]
    for a, b in zip(vs, vs[1:]):
        dag.edge(between(a, b))
    return dag


def op_of(p, source, dest):
    return next(ep for ep in p.edges if ep.source == source and ep.dest == dest)


def test_plan_when_equal_parallelism_chain_then_one_fused_stage():
    p = plan(chain(None, None, None))
    assert len(p.stages) == 1
    assert p.stages[0].vertices == ["v0", "v1", "v2"]
    assert all(ep.op is EdgeOp.FUSED for ep in p.edges)
    assert p.vertices["v1"].total_parallelism == 2


def test_plan_when_members_then_total_parallelism_is_local_times_members():
    p = plan(chain(3, 3), members=2)
    assert p.vertices["v0"].total_parallelism == 6
    assert op_of(p, "v0", "v1").op is EdgeOp.FUSED  # g -> g keeps the member


def test_plan_when_fusion_switched_off_then_each_vertex_own_stage():
    p = plan(chain(None, None), config=EngineConfig(fuse_narrow_edges=False))
    ep = op_of(p, "v0", "v1")
    assert ep.op is EdgeOp.PARTITION_BY and ep.route is Route.SAME
    assert len(p.stages) == 2


@pytest.mark.parametrize("members, lps, op, route", [
    (1, (4, 2), EdgeOp.COALESCE, Route.UNICAST_ALL),
    (1, (2, 4), EdgeOp.REPARTITION, Route.UNICAST_ALL),
    (2, (4, 2), EdgeOp.PARTITION_BY, Route.UNICAST_MEMBER),
])
def test_plan_when_unicast_unequal_parallelism_then_op_follows_routing_rule(members, lps, op, route):
    ep = op_of(plan(chain(*lps), members=members), "v0", "v1")
    assert (ep.op, ep.route) == (op, route)


def test_plan_when_isolated_unequal_then_keyed_isolated_route():
    dag = DAG()
    a, b = dag.new_vertex("a", noop_p(), 3), dag.new_vertex("b", noop_p(), 2)
    dag.edge(between(a, b).isolated())
    ep = op_of(plan(dag), "a", "b")
    assert (ep.op, ep.route) == (EdgeOp.PARTITION_BY, Route.ISOLATED)


def test_plan_when_isolated_distributed_on_two_members_then_rejected():
    dag = DAG()
    a, b = dag.new_vertex("a", noop_p()), dag.new_vertex("b", noop_p())
    dag.edge(between(a, b).isolated().distributed())
    with pytest.raises(DagValidationError, match=r'Isolated edges must be local: between\("a", "b"\)'):
        plan(dag, members=2)


def test_plan_when_distribute_to_not_partitioned_or_missing_member_then_rejected():
    dag = DAG()
    a, b = dag.new_vertex("a", noop_p()), dag.new_vertex("b", noop_p())
    dag.edge(between(a, b).distribute_to(1))
    with pytest.raises(DagValidationError, match="must be partitioned"):
        plan(dag, members=2)
    dag2 = DAG()
    a, b = dag2.new_vertex("a", noop_p()), dag2.new_vertex("b", noop_p())
    dag2.edge(between(a, b).partitioned(str).distribute_to(2))
    with pytest.raises(DagValidationError, match=r"member 2.*2 member\(s\)"):
        plan(dag2, members=2)
    ep = op_of(plan(dag2, members=3), "a", "b")
    assert (ep.route, ep.member) == (Route.PARTITIONED_MEMBER, 2)


def test_plan_when_partitioned_local_or_distributed_then_partition_by_with_route():
    dag = DAG()
    a, b, c = (dag.new_vertex(n, noop_p()) for n in "abc")
    dag.edge(between(a, b).partitioned(str)).edge(between(b, c).partitioned(str).distributed())
    p = plan(dag, members=2)
    assert op_of(p, "a", "b").route is Route.PARTITIONED_LOCAL
    assert op_of(p, "b", "c").route is Route.PARTITIONED_ALL
    assert "partitionBy(4" in p.explain()


def test_plan_when_broadcast_local_on_two_members_then_member_broadcast():
    dag = DAG()
    a, b = dag.new_vertex("a", noop_p()), dag.new_vertex("b", noop_p())
    dag.edge(between(a, b).broadcast())
    ep = op_of(plan(dag, members=2), "a", "b")
    assert (ep.op, ep.route) == (EdgeOp.BROADCAST, Route.BROADCAST_MEMBER)
    assert op_of(plan(dag, members=1), "a", "b").route is Route.BROADCAST_ALL


def test_plan_when_fanout_then_local_is_unicast_and_distributed_copies_per_member():
    dag = DAG()
    a, b, c = (dag.new_vertex(n, noop_p()) for n in "abc")
    dag.edge(between(a, b).fanout()).edge(between(b, c).fanout().distributed())
    p = plan(dag, members=2)
    assert op_of(p, "a", "b").op is EdgeOp.FUSED
    assert op_of(p, "b", "c").route is Route.FANOUT


def test_plan_when_two_inputs_then_both_keyed_and_aligned_for_union():
    dag = DAG()
    a, b, c = (dag.new_vertex(n, noop_p()) for n in "abc")
    dag.edge(from_(a).to(c, 0)).edge(from_(b).to(c, 1).priority(-1))
    p = plan(dag)
    for src in "ab":
        ep = op_of(p, src, "c")
        assert ep.op is EdgeOp.PARTITION_BY and ep.aligned
    assert "union of 'b', 'a'" in p.explain()  # ascending priority


def test_plan_when_broadcast_side_input_then_main_input_still_fused():
    dag = DAG()
    a, b, c = (dag.new_vertex(n, noop_p()) for n in "abc")
    dag.edge(from_(a).to(c, 0)).edge(from_(b).to(c, 1).broadcast())
    p = plan(dag)
    assert op_of(p, "a", "c").op is EdgeOp.FUSED
    assert "broadcast input from 'b'" in p.explain()
    assert p.stage_of("b").id < p.stage_of("c").id  # stages renumbered: the broadcast source runs first


def test_plan_when_several_outbound_edges_then_output_persisted_once():
    dag = DAG()
    a, b, c = (dag.new_vertex(n, noop_p()) for n in "abc")
    dag.edge(from_(a, 0).to(b)).edge(from_(a, 1).to(c))
    p = plan(dag)
    assert p.vertices["a"].persisted
    assert {op_of(p, "a", x).op for x in "bc"} == {EdgeOp.NARROW}
    assert "persisted once" in p.explain()


def test_plan_when_leaf_then_stage_has_action():
    dag = DAG()
    s, k = dag.new_vertex("s", read_list_p("in")), dag.new_vertex("k", write_list_p("out"))
    dag.edge(between(s, k))
    p = plan(dag)
    assert p.stages[-1].action == "runJob(per group of partitions) into engine.get_list('out')"


def test_plan_when_runtime_source_has_input_then_rejected():
    dag = DAG()
    a, s = dag.new_vertex("a", noop_p()), dag.new_vertex("s", read_list_p("in"))
    dag.edge(between(a, s))
    with pytest.raises(DagValidationError, match="'s' is a driver_source source"):
        plan(dag)


def word_count_dag(edge_key=whole_item):
    dag = DAG()
    src = dag.new_vertex("source", read_list_p("lines"))
    tok = dag.new_vertex("tokenize", flat_map_p(str.split))
    acc = dag.new_vertex("accumulate", accumulate_by_key_p(whole_item, counting()))
    comb = dag.new_vertex("combine", combine_by_key_p(counting()))
    sink = dag.new_vertex("sink", write_list_p("counts"))
    dag.edge(between(src, tok)).edge(between(tok, acc).partitioned(edge_key))
    dag.edge(between(acc, comb).partitioned(entry_key).distributed()).edge(between(comb, sink))
    return dag


def test_plan_when_word_count_pattern_then_accumulate_fused_into_one_map_side_combining_shuffle():
    p = plan(word_count_dag())
    assert op_of(p, "tokenize", "accumulate").op is EdgeOp.ACCUMULATE_FUSED
    out = op_of(p, "accumulate", "combine")
    assert out.op is EdgeOp.PARTITION_BY and out.pre_aggregation.absorbed_vertex == "accumulate"
    assert p.vertices["accumulate"].absorbed_into == "tokenize"
    assert p.stage_of("accumulate").id == p.stage_of("tokenize").id
    assert "map-side combine" in p.explain()


def test_plan_when_pattern_fusion_off_then_pre_aggregated_edges_instead():
    p = plan(word_count_dag(), config=EngineConfig(fuse_accumulate=False))
    into = op_of(p, "tokenize", "accumulate")
    assert into.op is EdgeOp.PARTITION_BY and into.pre_aggregation.mode == "accumulate"
    assert p.vertices["accumulate"].combine_substitute is not None
    assert op_of(p, "accumulate", "combine").pre_aggregation is None  # already one entry per key
    p_off = plan(word_count_dag(), config=EngineConfig(fuse_accumulate=False, pre_aggregate=False))
    assert all(ep.pre_aggregation is None for ep in p_off.edges)


def test_plan_when_edge_key_differs_from_aggregator_key_then_not_pre_aggregated():
    p = plan(word_count_dag(edge_key=str.lower))
    assert op_of(p, "tokenize", "accumulate").op is EdgeOp.PARTITION_BY
    assert op_of(p, "tokenize", "accumulate").pre_aggregation is None


def test_plan_when_aggregate_by_key_without_combine_fn_then_not_pre_aggregated():
    from processors import AggregateOperation

    op = AggregateOperation(list, lambda acc, x: acc + [x])  # no combine_fn
    dag = DAG()
    a = dag.new_vertex("a", noop_p())
    b = dag.new_vertex("b", aggregate_by_key_p(whole_item, op))
    dag.edge(between(a, b).partitioned(whole_item))
    assert op_of(plan(dag), "a", "b").pre_aggregation is None


def test_plan_when_user_supplier_then_never_called_at_plan_time():
    calls = []
    dag = DAG()
    a = dag.new_vertex("a", lambda: calls.append(1) or map_p(str)())
    b = dag.new_vertex("b", noop_p())
    dag.edge(between(a, b).partitioned(whole_item))
    plan(dag)
    assert calls == []


def test_plan_dot_when_planned_then_stages_are_clusters_and_edges_labelled():
    dot = plan(word_count_dag()).to_dot()
    assert dot.startswith("digraph PhysicalPlan {") and "subgraph cluster_0" in dot
    assert 'label="partitionBy(2)\\npre-aggregated"' in dot


def test_plan_when_thousand_vertices_then_every_vertex_planned():
    dag = DAG()
    prev = dag.new_vertex("v0", noop_p())
    for i in range(1, 1000):
        v = dag.new_vertex(f"v{i}", noop_p(), local_parallelism=1 + i % 3)
        dag.edge(between(prev, v).partitioned(whole_item) if i % 5 == 0 else between(prev, v))
        prev = v
    p = plan(dag, members=2)  # planning time is measured in bench/bench_planning.py, not asserted here
    assert len(p.vertices) == 1000


def test_fusion_when_chain_longer_than_limit_then_cut_into_stages_shown_in_explain():
    from dag.planner.lowering import MAX_FUSED_CHAIN

    n = 2 * MAX_FUSED_CHAIN + 10
    p = plan(chain(*([2] * n)))
    assert [len(s.vertices) for s in p.stages] == [MAX_FUSED_CHAIN, MAX_FUSED_CHAIN, 10]
    cut = [ep for ep in p.edges if ep.op is not EdgeOp.FUSED]
    assert [(ep.source, ep.op, ep.route) for ep in cut] == [
        (f"v{MAX_FUSED_CHAIN - 1}", EdgeOp.PARTITION_BY, Route.SAME),
        (f"v{2 * MAX_FUSED_CHAIN - 1}", EdgeOp.PARTITION_BY, Route.SAME),
    ]
    assert p.explain().count("chain cut") == 2


def manual_like(lps=(1, 1, 2), sink_lp=1, routing=None):
    """source -> flat_map_p -> user processor -> driver sink, with the given local parallelisms."""
    from processors import AbstractProcessor

    class User(AbstractProcessor):
        pass

    dag = DAG()
    src = dag.new_vertex("src", noop_p(), local_parallelism=lps[0])
    lines = dag.new_vertex("lines", flat_map_p(str.split), local_parallelism=lps[1])
    user = dag.new_vertex("user", User, local_parallelism=lps[2])
    sink = dag.new_vertex("sink", write_list_p("out"), local_parallelism=sink_lp)
    edge = between(lines, user)
    dag.edge(between(src, lines)).edge(routing(edge) if routing else edge).edge(between(user, sink))
    return dag


def test_widening_when_stateless_builtin_between_unicast_edges_then_takes_consumer_parallelism():
    p = plan(manual_like())
    lines = p.vertices["lines"]
    assert (lines.local_parallelism, lines.widened_from) == (2, 1)
    assert op_of(p, "src", "lines").op is EdgeOp.REPARTITION   # the shuffle moved to the (smaller) input
    assert op_of(p, "lines", "user").op is EdgeOp.FUSED
    assert "lines: processors, parallelism 2 (local 2 x 1 member); widened from local parallelism 1" in p.explain()
    assert "widen_stateless=on" in p.explain()


def test_widening_when_driver_sink_behind_unicast_edge_then_reads_upstream_partitions():
    p = plan(manual_like())
    sink = p.vertices["sink"]
    assert (sink.total_parallelism, sink.widened_from) == (2, 1)
    assert op_of(p, "user", "sink").op is EdgeOp.FUSED


def test_widening_when_switched_off_then_parallelism_as_written():
    p = plan(manual_like(), config=EngineConfig(widen_stateless=False))
    assert [p.vertices[n].local_parallelism for n in ("src", "lines", "user", "sink")] == [1, 1, 2, 1]
    assert op_of(p, "lines", "user").op is EdgeOp.REPARTITION
    assert "widened" not in p.explain() and "widen_stateless=off" in p.explain()


def test_widening_when_outbound_edge_not_unicast_or_vertex_not_builtin_then_unchanged():
    p = plan(manual_like(routing=lambda e: e.partitioned(str)))
    assert p.vertices["lines"].widened_from is None
    p = plan(manual_like(routing=lambda e: e.broadcast()))
    assert p.vertices["lines"].widened_from is None
    assert plan(manual_like(lps=(1, 2, 1))).vertices["user"].widened_from is None  # user processors never


def test_widening_when_driver_source_feeds_unicast_edges_then_sliced_over_consumer_parallelism():
    dag = DAG()
    src = dag.new_vertex("src", read_list_p("lines"), local_parallelism=1)
    words = dag.new_vertex("words", flat_map_p(str.split))
    dag.edge(between(src, words))
    p = plan(dag)
    assert (p.vertices["src"].total_parallelism, p.vertices["src"].widened_from) == (2, 1)
    assert op_of(p, "src", "words").op is EdgeOp.FUSED
    assert "src: driver_source ('list', 'lines'), parallelism 2 (local 2 x 1 member); widened" in p.explain()
    dag.edge(from_(src, 1).to(dag.new_vertex("all", noop_p())).broadcast())
    assert plan(dag).vertices["src"].widened_from is None  # a broadcast edge: every item to every consumer


def test_widening_when_driver_source_also_broadcasts_into_one_processor_then_widened_and_read_per_edge():
    dag = DAG()
    src = dag.new_vertex("src", read_list_p("docs"), local_parallelism=1)
    words = dag.new_vertex("words", flat_map_p(str.split), local_parallelism=1)
    count = dag.new_vertex("count", noop_p(), local_parallelism=1)
    dag.edge(between(src, count).broadcast().distributed()).edge(from_(src, 1).to(words))
    dag.edge(from_(words).to(dag.new_vertex("user", noop_p())))
    p = plan(dag)
    assert (p.vertices["src"].total_parallelism, p.vertices["src"].widened_from) == (2, 1)
    assert p.vertices["src"].read_per_edge  # no stage of its own and no shuffle into 'words'
    assert op_of(p, "src", "words").op is EdgeOp.NARROW
    assert op_of(p, "src", "count").op is EdgeOp.COALESCE  # every entry reaches the one 'count' processor
    with_two = DAG()
    src = with_two.new_vertex("src", read_list_p("docs"), local_parallelism=1)
    count = with_two.new_vertex("count", noop_p(), local_parallelism=2)
    with_two.edge(between(src, count).broadcast()).edge(from_(src, 1).to(with_two.new_vertex("w", noop_p())))
    assert plan(with_two).vertices["src"].widened_from is None  # each of 2 processors must get every entry


def test_dealing_when_driver_source_feeds_only_unicast_edges_then_dealt_on_demand_and_shown():
    dag = DAG()
    src = dag.new_vertex("src", read_list_p("lines"))
    words = dag.new_vertex("words", flat_map_p(str.split))
    dag.edge(between(src, words))
    p = plan(dag)
    assert p.vertices["src"].dealt
    assert "parallelize(driver list 'lines' dealt on demand, 2)" in p.explain()
    assert "deal_driver_sources=on" in p.explain()
    off = plan(dag, config=EngineConfig(deal_driver_sources=False))
    assert not off.vertices["src"].dealt and "'lines' sliced, 2)" in off.explain()
    assert "deal_driver_sources=off" in off.explain()


def test_dealing_when_edge_not_unicast_or_one_processor_then_sliced():
    for routing in (lambda e: e.partitioned(str), lambda e: e.isolated(), lambda e: e.broadcast()):
        dag = DAG()
        src = dag.new_vertex("src", read_list_p("lines"))
        dag.edge(routing(between(src, dag.new_vertex("words", flat_map_p(str.split)))))
        assert not plan(dag).vertices["src"].dealt
    dag = DAG()
    src = dag.new_vertex("src", read_list_p("lines"), local_parallelism=1)
    dag.edge(between(src, dag.new_vertex("user", noop_p(), local_parallelism=1)))
    assert not plan(dag).vertices["src"].dealt  # a single processor takes everything anyway


def test_dealing_when_driver_source_also_broadcasts_into_one_processor_then_read_once_per_edge():
    dag = DAG()
    src = dag.new_vertex("src", read_list_p("lines"))
    dag.edge(between(src, dag.new_vertex("words", flat_map_p(str.split))))
    dag.edge(from_(src, 1).to(dag.new_vertex("count", noop_p(), local_parallelism=1)).broadcast().distributed())
    p = plan(dag)
    vp = p.vertices["src"]
    assert vp.dealt and vp.read_per_edge and not vp.persisted
    assert "Stage 0: no tasks of its own; per outbound edge, 2 partitions of parallelize(driver list 'lines' " \
           "dealt on demand, 2) run in the consumer's tasks" in p.explain()
    assert "read once for each of its 2 outbound edges" in p.explain()
    off = plan(dag, config=EngineConfig(deal_driver_sources=False)).vertices["src"]
    assert off.persisted and not off.read_per_edge  # sliced: one pass, tagged and persisted
    dag.edge(from_(src, 2).to(dag.new_vertex("all", noop_p())).broadcast())  # every item to each of 2
    assert not plan(dag).vertices["src"].dealt


def loop_dag(*middle):
    dag = DAG()
    vs = [dag.new_vertex("source", read_list_p("lines"))]
    vs += [dag.new_vertex(f"m{i}", supplier) for i, supplier in enumerate(middle)]
    acc = dag.new_vertex("accumulate", accumulate_by_key_p(whole_item, counting()))
    comb = dag.new_vertex("combine", combine_by_key_p(counting()))
    for a, b in zip(vs, vs[1:]):
        dag.edge(between(a, b))
    dag.edge(between(vs[-1], acc).partitioned(whole_item))
    dag.edge(between(acc, comb).partitioned(entry_key).distributed())
    dag.edge(between(comb, dag.new_vertex("sink", write_list_p("counts"))))
    return dag


def test_tight_loops_when_stateless_chain_feeds_accumulation_then_stage_runs_it_as_one_loop():
    from processors import AbstractProcessor, filter_p

    class User(AbstractProcessor):
        pass

    p = plan(loop_dag(map_p(str.lower), filter_p(bool), flat_map_p(str.split)))
    assert p.stage_of("m0").loop == ["m0", "m1", "m2"]
    assert "tight loop: 'm0' -> 'm1' -> 'm2' -> accumulate into 'accumulate'" in p.explain()
    assert p.stage_of("combine").loop == []  # its sink is no accumulation
    p = plan(loop_dag(map_p(str.lower), User, flat_map_p(str.split)))
    assert p.stage_of("m2").loop == ["m2"]  # the chain starts after the user's processor
    p = plan(loop_dag(map_p(str.lower)), config=EngineConfig(fuse_accumulate=False))
    assert p.stage_of("m0").loop == ["m0"]  # a pre-aggregated edge into the accumulator counts too
    p = plan(loop_dag(map_p(str.lower), flat_map_p(str.split)), config=EngineConfig(tight_loops=False))
    assert p.stage_of("m0").loop == [] and "tight loop" not in p.explain() and "tight_loops=off" in p.explain()
    p = plan(loop_dag(map_p(str.lower)), config=EngineConfig(fuse_accumulate=False, pre_aggregate=False))
    assert p.stage_of("m0").loop == []  # nothing accumulates on the sending side


def test_plan_when_broadcast_into_one_processor_then_unicast_into_it_without_broadcast_variable():
    dag = DAG()
    a = dag.new_vertex("a", noop_p())
    one = dag.new_vertex("one", noop_p(), local_parallelism=1)
    many = dag.new_vertex("many", noop_p())
    dag.edge(from_(a, 0).to(one).broadcast()).edge(from_(a, 1).to(many).broadcast())
    p = plan(dag)
    assert (op_of(p, "a", "one").op, op_of(p, "a", "one").route) == (EdgeOp.COALESCE, Route.UNICAST_ALL)
    assert op_of(p, "a", "many").op is EdgeOp.BROADCAST
    assert "broadcast into the only processor of 'one'" in p.explain()
    assert op_of(plan(dag, members=2), "a", "one").op is EdgeOp.BROADCAST  # one processor per member: two
