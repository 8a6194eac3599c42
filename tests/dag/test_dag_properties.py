"""Property-based tests: random DAGs (and random DAGs with one back edge) built through the public API."""

from __future__ import annotations

import pydot
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dag import DAG, CycleError, DagDescription
from edges import EdgeConfig, from_
from processors import ProcessorMetaSupplier
from tests.support.processors import Nop


ROUTINGS = ["unicast", "isolated", "broadcast", "fanout", "partitioned", "all_to_one"]


@st.composite
def random_dags(draw, back_edge: bool = False):
    """A valid DAG: vertices added in a random order, edges only from lower to higher rank."""
    n = draw(st.integers(1 if not back_edge else 2, 8))
    rank_of_insertion = draw(st.permutations(range(n)))
    name = st.text(alphabet='ab"-prepare ', min_size=1, max_size=6)
    names = draw(st.lists(name, min_size=n, max_size=n, unique=True))
    dag = DAG()
    by_rank = {}
    for rank in rank_of_insertion:
        lp = draw(st.none() | st.integers(1, 4))
        preferred = draw(st.none() | st.integers(1, 3))
        supplier = Nop if preferred is None else ProcessorMetaSupplier.of(Nop, preferred_local_parallelism=preferred)
        by_rank[rank] = dag.new_vertex(names[rank], supplier, local_parallelism=lp)
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=14))
    outs = {r: 0 for r in range(n)}
    ins = {r: 0 for r in range(n)}
    for x, y in pairs:
        if x == y:
            continue
        lo, hi = min(x, y), max(x, y)
        edge = from_(by_rank[lo], outs[lo]).to(by_rank[hi], ins[hi])
        outs[lo] += 1
        ins[hi] += 1
        routing = draw(st.sampled_from(ROUTINGS))
        if routing == "partitioned":
            edge.partitioned(str)
        else:
            getattr(edge, routing)()
        if routing in ("partitioned", "all_to_one"):
            locality = draw(st.sampled_from(["local", "distributed", "distribute_to"]))
        else:
            locality = draw(st.sampled_from(["local"] if routing == "isolated" else ["local", "distributed"]))
        if locality == "distribute_to":
            edge.distribute_to(draw(st.integers(0, 3)))
        else:
            getattr(edge, locality)()
        edge.priority(draw(st.integers(-3, 3)))
        if draw(st.booleans()):
            edge.set_config(EdgeConfig(queue_size=draw(st.integers(1, 4096))))
        dag.edge(edge)
    if back_edge:
        lo, hi = sorted(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True)))
        # an edge lo -> hi and a back edge hi -> lo close a cycle (ordinals stay 0..n-1)
        dag.edge(from_(by_rank[lo], outs[lo]).to(by_rank[hi], ins[hi]))
        dag.edge(from_(by_rank[hi], outs[hi]).to(by_rank[lo], ins[lo]))
    return dag


common = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
slow_parser = settings(common, max_examples=20)  # pydot's parser takes ~0.1 s per DAG


@common
@given(random_dags())
def test_iter_when_random_dag_then_every_edge_goes_forward(dag):
    position = {v.name: i for i, v in enumerate(dag)}
    assert sorted(position) == sorted(v.name for v in dag.vertices)
    for edge in dag.edges:
        assert position[edge.source_name] < position[edge.dest_name]


@slow_parser
@given(random_dags())
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydot's parser uses deprecated pyparsing names
def test_to_dot_when_random_dag_then_pydot_parses_all_vertices_and_edges(dag):
    text = dag.to_dot(4, 2048)
    (graph,) = pydot.graph_from_dot_data(text)
    node_lines = [n for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
    assert len(node_lines) == len(dag.vertices)
    edge_count = len(graph.get_edges()) + sum(len(s.get_edges()) for s in graph.get_subgraphs())
    assert edge_count == len(dag.edges)
    assert not text.endswith("\n") and text.count("queueSize=") == len(dag.edges)


@common
@given(random_dags())
def test_describe_when_random_dag_then_round_trips_through_json(dag):
    d = dag.describe(default_local_parallelism=3)
    assert DagDescription.model_validate_json(d.model_dump_json()) == d
    assert len(d.edges) == len(dag.edges) and len(d.vertices) == len(dag.vertices)
    assert len(dag.to_networkx().edges) == len(dag.edges)


@common
@given(random_dags(back_edge=True))
def test_validate_when_back_edge_then_cycle_error_lists_a_real_cycle(dag):
    with pytest.raises(CycleError) as err:
        dag.validate()
    cycle = err.value.cycle
    assert cycle[0] == cycle[-1] and len(set(cycle[:-1])) == len(cycle) - 1 >= 2
    linked = {(e.source_name, e.dest_name) for e in dag.edges}
    assert all((x, y) in linked for x, y in zip(cycle, cycle[1:]))
    assert str(err.value) == "DAG contains a cycle: " + " -> ".join(cycle)
