from __future__ import annotations

import pytest

from dag import DAG, CycleError, DagValidationError, Vertex
from edges import between, from_
from tests.support.processors import Nop


def dag_of(*names: str) -> tuple[DAG, list[Vertex]]:
    dag = DAG()
    return dag, [dag.new_vertex(n, Nop) for n in names]


# ---- vertices ---------------------------------------------------------------------------------------------------


def test_new_vertex_when_name_taken_then_rejected_and_dag_unchanged():
    dag, (a,) = dag_of("a")
    with pytest.raises(DagValidationError, match=r"^Vertex a is already defined"):
        dag.new_vertex("a", Nop)
    with pytest.raises(DagValidationError, match="Vertex a is already defined"):
        dag.vertex(Vertex("a", Nop))
    assert dag.vertices == [a]


def test_vertex_when_added_then_returns_dag_and_found_by_name():
    dag = DAG()
    v = Vertex("v", Nop)
    assert dag.vertex(v) is dag and dag.get_vertex("v") is v and dag.get_vertex("w") is None


def test_vertex_when_not_a_vertex_then_rejected():
    with pytest.raises(DagValidationError, match=r"dag\.vertex\(\) expects a Vertex"):
        DAG().vertex("v")


def test_new_unique_vertex_when_prefix_taken_then_first_free_suffix():
    dag, _ = dag_of("map", "map-3")
    assert [dag.new_unique_vertex("map", Nop).name for _ in range(3)] == ["map-2", "map-4", "map-5"]
    assert dag.new_unique_vertex("sink", Nop, local_parallelism=1).name == "sink"


def test_get_edges_when_unknown_vertex_then_rejected():
    dag, _ = dag_of("a")
    with pytest.raises(DagValidationError, match="No vertex with name 'x' found in this DAG"):
        dag.get_inbound_edges("x")
    with pytest.raises(DagValidationError, match="No vertex with name 'x' found in this DAG"):
        dag.get_outbound_edges("x")


def test_get_edges_when_several_then_insertion_order_and_copies():
    dag, (a, b, c) = dag_of("a", "b", "c")
    e1, e2, e3 = from_(a, 1).to(c), from_(a).to(b), from_(b).to(c, 1)
    dag.edge(e1).edge(e2).edge(e3)
    assert dag.get_outbound_edges("a") == [e1, e2]
    assert dag.get_inbound_edges("c") == [e1, e3]
    assert dag.edges == [e1, e2, e3] and dag.vertices == [a, b, c]
    dag.edges.clear()
    dag.get_inbound_edges("c").clear()
    assert dag.edges == [e1, e2, e3] and len(dag.get_inbound_edges("c")) == 2


# ---- eager edge checks (Jet's order) ----------------------------------------------------------------------------


def test_edge_when_not_an_edge_then_rejected():
    dag, _ = dag_of("a")
    with pytest.raises(DagValidationError, match=r"dag\.edge\(\) expects an Edge"):
        dag.edge("a->b")


def test_edge_when_no_destination_then_rejected():
    dag, (a,) = dag_of("a")
    with pytest.raises(DagValidationError, match=r'Edge from_\("a", 1\) has no destination; finish it with \.to'):
        dag.edge(from_(a, 1))


def test_edge_when_source_is_other_vertex_with_same_name_then_rejected():
    dag, (a, b) = dag_of("a", "b")
    with pytest.raises(
        DagValidationError,
        match="This DAG has a vertex called 'a', but the supplied edge's source is a different vertex with the same",
    ):
        dag.edge(between(Vertex("a", Nop), b))


def test_edge_when_source_not_in_dag_then_rejected():
    dag, (b,) = dag_of("b")
    with pytest.raises(DagValidationError, match="Source vertex 'x' is not in this DAG"):
        dag.edge(between(Vertex("x", Nop), b))


def test_edge_when_destination_is_other_vertex_with_same_name_then_rejected():
    dag, (a, b) = dag_of("a", "b")
    with pytest.raises(DagValidationError, match="edge's destination is a different vertex with the same name"):
        dag.edge(between(a, Vertex("b", Nop)))


def test_edge_when_destination_not_in_dag_then_rejected():
    dag, (a,) = dag_of("a")
    with pytest.raises(DagValidationError, match="Destination vertex 'y' is not in this DAG"):
        dag.edge(between(a, Vertex("y", Nop)))


def test_edge_when_source_and_destination_both_foreign_then_source_reported_first():
    dag, _ = dag_of("a")
    with pytest.raises(DagValidationError, match="Source vertex 'x'"):
        dag.edge(between(Vertex("x", Nop), Vertex("y", Nop)))


def test_edge_when_second_inbound_at_ordinal_zero_then_rejected_with_suffix():
    dag, (a, b, c) = dag_of("a", "b", "c")
    dag.edge(between(a, c))
    with pytest.raises(DagValidationError) as err:
        dag.edge(between(b, c))
    assert str(err.value) == (
        "Vertex 'c' already has an inbound edge at ordinal 0, use from_(b).to(c, 1) to specify another ordinal"
    )


def test_edge_when_second_inbound_at_other_ordinal_then_no_suffix():
    dag, (a, b, c) = dag_of("a", "b", "c")
    dag.edge(from_(a).to(c, 1))
    with pytest.raises(DagValidationError) as err:
        dag.edge(from_(b, 2).to(c, 1))
    assert str(err.value) == "Vertex 'c' already has an inbound edge at ordinal 1"


def test_edge_when_second_outbound_at_ordinal_then_rejected():
    dag, (a, b, c) = dag_of("a", "b", "c")
    dag.edge(between(a, b))
    with pytest.raises(DagValidationError) as err:
        dag.edge(between(a, c))
    assert str(err.value) == (
        "Vertex 'a' already has an outbound edge at ordinal 0, use from_(a, 1).to(c) to specify another ordinal"
    )
    dag.edge(from_(a, 1).to(c))
    with pytest.raises(DagValidationError, match=r"^Vertex 'a' already has an outbound edge at ordinal 1$"):
        dag.edge(from_(a, 1).to(c, 1))


def test_edge_when_inbound_and_outbound_both_taken_then_inbound_reported_first():
    dag, (a, b) = dag_of("a", "b")
    dag.edge(between(a, b))
    with pytest.raises(DagValidationError, match="Vertex 'b' already has an inbound edge"):
        dag.edge(between(a, b))


def test_edge_when_self_loop_then_rejected():
    dag, (a,) = dag_of("a")
    with pytest.raises(DagValidationError, match="^Attempted to add an edge from a to itself"):
        dag.edge(between(a, a))


def test_edge_when_self_loop_on_taken_ordinal_then_ordinal_check_fires_first():
    dag, (a, b) = dag_of("a", "b")
    dag.edge(between(b, a))
    with pytest.raises(DagValidationError, match="Vertex 'a' already has an inbound edge at ordinal 0"):
        dag.edge(between(a, a))


def test_edge_when_rejected_then_dag_unchanged():
    dag, (a, b, c) = dag_of("a", "b", "c")
    dag.edge(between(a, b))
    for bad in (between(c, b), between(a, c), between(c, c), from_(c), between(c, Vertex("z", Nop))):
        with pytest.raises(DagValidationError):
            dag.edge(bad)
    assert [str(e) for e in dag.edges] == ['between("a", "b")']
    assert dag.get_inbound_edges("c") == [] and dag.get_outbound_edges("c") == []


def test_edge_when_multigraph_with_distinct_ordinals_then_valid():
    dag, (a, b) = dag_of("a", "b")
    dag.edge(between(a, b)).edge(from_(a, 1).to(b, 1))
    assert [v.name for v in dag] == ["a", "b"] and len(dag.edges) == 2


# ---- validate ---------------------------------------------------------------------------------------------------


def test_validate_when_empty_then_rejected():
    with pytest.raises(DagValidationError, match="^DAG must contain at least one vertex"):
        DAG().validate()
    with pytest.raises(DagValidationError, match="at least one vertex"):
        list(DAG())


def test_validate_when_input_ordinal_gap_then_jet_message():
    dag, (a, b, c) = dag_of("a", "b", "c")
    dag.edge(between(a, c)).edge(from_(b).to(c, 2))
    with pytest.raises(DagValidationError) as err:
        dag.validate()
    assert str(err.value) == "Input ordinals for vertex c are not properly numbered. Actual: [0, 2] Expected: [0, 1]"


def test_validate_when_output_ordinal_gap_then_jet_message():
    dag, (a, b, c) = dag_of("a", "b", "c")
    dag.edge(between(a, b)).edge(from_(a, 2).to(c))
    with pytest.raises(DagValidationError) as err:
        dag.validate()
    assert str(err.value) == "Output ordinals for vertex a are not ordered. Actual: [0, 2] Expected: [0, 1]"


def test_validate_when_input_and_output_gaps_then_input_reported_first():
    dag, (a, b) = dag_of("a", "b")
    dag.edge(from_(a, 1).to(b, 1))
    with pytest.raises(DagValidationError, match="^Input ordinals for vertex b"):
        dag.validate()


def test_validate_when_cycle_then_cycle_error_shows_path():
    dag, (a, b, c, d) = dag_of("a", "b", "c", "d")
    dag.edge(between(d, a)).edge(between(a, b)).edge(between(b, c)).edge(from_(c).to(a, 1))
    with pytest.raises(CycleError) as err:
        dag.validate()
    assert str(err.value) == "DAG contains a cycle: a -> b -> c -> a"
    assert err.value.cycle == ["a", "b", "c", "a"]
    assert isinstance(err.value, DagValidationError) and isinstance(err.value, ValueError)


def test_validate_when_cycle_downstream_of_tail_then_cycle_found():
    dag, (x, a, b, t) = dag_of("x", "a", "b", "t")
    dag.edge(from_(b).to(a, 1)).edge(between(a, b)).edge(from_(b, 1).to(t)).edge(between(x, a))
    with pytest.raises(CycleError, match=r"^DAG contains a cycle: a -> b -> a$"):
        list(dag)


def test_validate_when_two_vertex_cycle_via_parallel_edges_then_rejected():
    dag, (a, b) = dag_of("a", "b")
    dag.edge(between(a, b)).edge(between(b, a))
    with pytest.raises(CycleError, match="a -> b -> a"):
        dag.validate()


def test_validate_when_isolated_edge_distributed_then_rejected():
    dag, (a, b) = dag_of("a", "b")
    dag.edge(between(a, b).isolated().distributed())
    with pytest.raises(DagValidationError) as err:
        dag.validate()
    assert str(err.value) == (
        'Isolated edges must be local: between("a", "b").isolated().distributed(); '
        "remove .distributed()/.distribute_to()"
    )


@pytest.mark.parametrize("routing", ["unicast", "broadcast", "fanout", "isolated"])
def test_validate_when_distribute_to_not_partitioned_then_rejected(routing):
    dag, (a, b) = dag_of("a", "b")
    edge = getattr(between(a, b), routing)().distribute_to(1)
    dag.edge(edge)
    with pytest.raises(DagValidationError, match="must be partitioned|Isolated edges must be local") as err:
        dag.validate()
    if routing != "isolated":
        assert str(err.value) == (
            f"An edge distributing to a specific member must be partitioned: {edge}; "
            "add .partitioned(key_fn) or .all_to_one()"
        )


def test_validate_when_distribute_to_partitioned_or_all_to_one_then_valid():
    dag, (a, b, c) = dag_of("a", "b", "c")
    dag.edge(between(a, b).partitioned(len).distribute_to(0)).edge(between(b, c).all_to_one().distribute_to(3))
    dag.validate()


def test_iter_when_valid_then_topological_with_insertion_order_ties():
    dag, (d, c, b, a) = dag_of("d", "c", "b", "a")
    dag.edge(between(a, b)).edge(between(b, c))
    assert [v.name for v in dag] == ["d", "a", "b", "c"]


def test_repr_when_invalid_dag_then_does_not_validate():
    dag, (a, b) = dag_of("a", "b")
    dag.edge(between(a, b)).edge(between(b, a))
    assert repr(dag) == "DAG(vertices=['a', 'b'], edges=['between(\"a\", \"b\")', 'between(\"b\", \"a\")'])"


def test_edge_when_ordinal_zero_taken_then_suggests_first_free_ordinal():
    dag, (a, b, c, d) = dag_of("a", "b", "c", "d")
    dag.edge(between(a, d)).edge(from_(b).to(d, 1))
    with pytest.raises(DagValidationError, match=r"use from_\(c\)\.to\(d, 2\) to specify another ordinal$"):
        dag.edge(between(c, d))
    dag.edge(from_(c).to(d, 2))
    with pytest.raises(DagValidationError, match=r"use from_\(a, 1\)\.to\(b\) to specify another ordinal$"):
        dag.edge(between(a, b))


def test_edge_when_large_fan_out_then_each_check_reads_no_earlier_edges(monkeypatch):
    """Building a 5,000-vertex fan-out was quadratic: every dag.edge() scanned all edges of the source."""
    from edges import edge as edge_module

    reads = {"n": 0}
    original = edge_module.Edge.source_ordinal

    def counting(self):
        reads["n"] += 1
        return original.fget(self)

    dag = DAG()
    src = dag.new_vertex("src", Nop)
    for i in range(5000):
        dag.edge(from_(src, i).to(dag.new_vertex(f"v{i}", Nop)))
    monkeypatch.setattr(edge_module.Edge, "source_ordinal", property(counting))
    dag.edge(from_(src, 5000).to(dag.new_vertex("last", Nop)))
    assert reads["n"] < 10  # independent of the 5,000 edges already there
    with pytest.raises(DagValidationError, match="already has an outbound edge at ordinal 17"):
        dag.edge(from_(src, 17).to(dag.new_vertex("dup", Nop)))
    assert len(dag.get_outbound_edges("src")) == 5001
    assert len(list(dag)) == 5003
