from __future__ import annotations

import pydot
import pytest

from dag import DAG, DagValidationError
from edges import EdgeConfig, between, from_
from processors import ProcessorMetaSupplier
from tests.support.processors import Nop


def jet_dot_test_dag() -> DAG:
    """DotTest.when_dagToDotString's DAG."""
    dag = DAG()
    a = dag.new_vertex("a", Nop, local_parallelism=1)
    b = dag.new_vertex("b", Nop)
    c = dag.new_vertex("c", Nop, local_parallelism=1)
    dag.new_vertex("d", Nop, local_parallelism=1)
    dag.edge(from_(a, 0).to(c, 0).partitioned(lambda item: item).set_config(EdgeConfig(queue_size=128)))
    dag.edge(from_(a, 1).to(b, 0).broadcast().distributed())
    return dag


def pipeline_equivalent_dag() -> DAG:
    """The Core-API equivalent of DotTest.assertedTest's pipeline."""
    dag = DAG()
    key = lambda item: item  # noqa: E731
    src = dag.new_vertex('mapSource(source1")', ProcessorMetaSupplier.prefer_local_parallelism_one(Nop))
    prepare = dag.new_vertex("aggregateToCount-prepare", Nop)
    aggregate = dag.new_vertex("aggregateToCount", Nop)
    sink = dag.new_vertex("loggerSink", ProcessorMetaSupplier.of(Nop, preferred_local_parallelism=1))
    dag.edge(between(src, prepare).partitioned(key))
    dag.edge(between(prepare, aggregate).partitioned(key).distributed())
    dag.edge(between(aggregate, sink))
    return dag


def test_to_dot_when_jet_dot_test_dag_then_jet_lines():
    actual = jet_dot_test_dag().to_dot()
    assert actual.startswith("digraph DAG {")
    for line in (
        '"a" [localParallelism=1];',
        '"b" [localParallelism=default];',
        '"c" [localParallelism=1];',
        '"d" [localParallelism=1];',
        '"a" -> "c" [label="partitioned", taillabel=0, queueSize=128];',
        '"a" -> "b" [label="distributed-broadcast", taillabel=1, queueSize=1024]',
    ):
        assert line in actual
    assert actual.endswith("\n}")


def test_to_dot_when_non_default_settings_then_defaults_applied_but_explicit_config_wins():
    actual = jet_dot_test_dag().to_dot(16, 16384)
    for line in (
        '"a" [localParallelism=1];',
        '"b" [localParallelism=16];',
        '"c" [localParallelism=1];',
        '"d" [localParallelism=1];',
        '"a" -> "c" [label="partitioned", taillabel=0, queueSize=128];',
        '"a" -> "b" [label="distributed-broadcast", taillabel=1, queueSize=16384]',
    ):
        assert line in actual


def test_to_dot_when_pipeline_equivalent_then_jet_string_exactly():
    expected = (
        "digraph DAG {\n"
        + '\t"mapSource(source1\\")" [localParallelism=1];\n'
        + '\t"aggregateToCount-prepare" [localParallelism=default];\n'
        + '\t"aggregateToCount" [localParallelism=default];\n'
        + '\t"loggerSink" [localParallelism=1];\n'
        + '\t"mapSource(source1\\")" -> "aggregateToCount-prepare" [label="partitioned", queueSize=1024];\n'
        + "\tsubgraph cluster_0 {\n"
        + '\t\t"aggregateToCount-prepare" -> "aggregateToCount" [label="distributed-partitioned", queueSize=1024];\n'
        + "\t}\n"
        + '\t"aggregateToCount" -> "loggerSink" [queueSize=1024];\n'
        + "}"
    )
    assert pipeline_equivalent_dag().to_dot() == expected


def test_to_dot_when_pipeline_equivalent_with_defaults_then_preferred_capped_and_queue_sizes_set():
    actual = pipeline_equivalent_dag().to_dot(16, 16384)
    assert [line for line in actual.splitlines() if "localParallelism" in line] == [
        '\t"mapSource(source1\\")" [localParallelism=1];',
        '\t"aggregateToCount-prepare" [localParallelism=16];',
        '\t"aggregateToCount" [localParallelism=16];',
        '\t"loggerSink" [localParallelism=1];',
    ]
    assert actual.count("queueSize=16384") == 3 and "queueSize=1024" not in actual


def test_to_dot_when_distribute_to_member_then_label_names_member():
    dag = DAG()
    a, b = dag.new_vertex("a", Nop), dag.new_vertex("b", Nop)
    dag.edge(between(a, b).partitioned(len).distribute_to(2))
    assert '\t"a" -> "b" [label="distributed to member 2-partitioned", queueSize=1024];\n' in dag.to_dot()


def test_to_dot_when_all_to_one_isolated_fanout_then_labels():
    dag = DAG()
    a, b, c, d = (dag.new_vertex(n, Nop) for n in "abcd")
    dag.edge(between(a, b).all_to_one()).edge(between(b, c).isolated()).edge(between(c, d).fanout().priority(-1))
    lines = dag.to_dot().splitlines()
    assert lines[5:] == [
        '\t"a" -> "b" [label="partitioned", queueSize=1024];',
        '\t"b" -> "c" [label="isolated", queueSize=1024];',
        '\t"c" -> "d" [label="fanout", queueSize=1024];',
        "}",
    ]


def test_to_dot_when_vertex_has_several_inbound_edges_then_headlabels():
    dag = DAG()
    a, b, c = (dag.new_vertex(n, Nop) for n in "abc")
    dag.edge(between(a, c)).edge(from_(b).to(c, 1))
    assert dag.to_dot().splitlines()[4:6] == [
        '\t"a" -> "c" [headlabel=0, queueSize=1024];',
        '\t"b" -> "c" [headlabel=1, queueSize=1024];',
    ]


def test_to_dot_when_several_prepare_pairs_then_clusters_numbered_in_order():
    dag = DAG()
    names = ["x-prepare", "x", "y-prepare", "y"]
    v = {n: dag.new_vertex(n, Nop) for n in names}
    dag.edge(between(v["x-prepare"], v["x"])).edge(between(v["y-prepare"], v["y"]))
    actual = dag.to_dot()
    assert "\tsubgraph cluster_0 {\n\t\t\"x-prepare\" -> \"x\" [queueSize=1024];\n\t}\n" in actual
    assert "\tsubgraph cluster_1 {\n\t\t\"y-prepare\" -> \"y\" [queueSize=1024];\n\t}\n" in actual


def test_to_dot_when_invalid_dag_then_validation_error():
    with pytest.raises(DagValidationError, match="at least one vertex"):
        DAG().to_dot()


def test_to_dot_when_bad_default_queue_size_then_rejected():
    dag = DAG()
    dag.new_vertex("a", Nop)
    with pytest.raises(DagValidationError, match="default_queue_size must be a positive int"):
        dag.to_dot(default_queue_size=0)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydot's parser uses deprecated pyparsing names
def test_to_dot_when_parsed_by_pydot_then_vertices_and_edges_present():
    (graph,) = pydot.graph_from_dot_data(pipeline_equivalent_dag().to_dot())
    nodes = {n.get_name() for n in graph.get_nodes()}
    assert '"mapSource(source1\\")"' in nodes and '"loggerSink"' in nodes
    edges = [(e.get_source(), e.get_destination()) for e in graph.get_edges()]
    edges += [(e.get_source(), e.get_destination()) for s in graph.get_subgraphs() for e in s.get_edges()]
    assert ('"aggregateToCount-prepare"', '"aggregateToCount"') in edges and len(edges) == 3


def test_to_dot_when_corner_cases_then_byte_exact():
    """Only ``"`` is escaped; the -prepare rule needs src == dst + "-prepare"; head/tail labels count all edges and
    come after the label, before queueSize; a vertex without edges still gets its line."""
    dag = DAG()
    prepare = dag.new_vertex("x-prepare", Nop, local_parallelism=2)
    x, y = dag.new_vertex("x", Nop), dag.new_vertex("y", Nop)
    quoted, slashed = dag.new_vertex('q"x', Nop), dag.new_vertex("back\\slash", Nop)
    dag.new_vertex("lone", Nop)
    y_prepare = dag.new_vertex("y-prepare", Nop)
    dag.edge(from_(prepare, 0).to(x, 0).partitioned(str).distributed())
    dag.edge(from_(prepare, 1).to(y).broadcast().priority(3))
    dag.edge(from_(quoted).to(x, 1).set_config(EdgeConfig(queue_size=7)))
    dag.edge(between(x, slashed)).edge(between(y, y_prepare))
    assert dag.to_dot() == (
        "digraph DAG {\n"
        '\t"x-prepare" [localParallelism=2];\n'
        '\t"y" [localParallelism=default];\n'
        '\t"q\\"x" [localParallelism=default];\n'
        '\t"x" [localParallelism=default];\n'
        '\t"back\\slash" [localParallelism=default];\n'
        '\t"lone" [localParallelism=default];\n'
        '\t"y-prepare" [localParallelism=default];\n'
        "\tsubgraph cluster_0 {\n"
        '\t\t"x-prepare" -> "x" [label="distributed-partitioned", headlabel=0, taillabel=0, queueSize=1024];\n'
        "\t}\n"
        '\t"x-prepare" -> "y" [label="broadcast", taillabel=1, queueSize=1024];\n'
        '\t"y" -> "y-prepare" [queueSize=1024];\n'
        '\t"q\\"x" -> "x" [headlabel=1, queueSize=7];\n'
        '\t"x" -> "back\\slash" [queueSize=1024];\n'
        "}"
    )


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4"])
def test_to_dot_and_describe_when_bad_default_local_parallelism_then_rejected_naming_the_argument(bad):
    dag = DAG()
    dag.new_vertex("a", Nop)
    with pytest.raises(DagValidationError, match=r"^to_dot\(\): default_local_parallelism must be None"):
        dag.to_dot(bad)
    with pytest.raises(DagValidationError, match=r"^describe\(\): default_local_parallelism must be None"):
        dag.describe(bad)
