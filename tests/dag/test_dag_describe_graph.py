from __future__ import annotations

import shutil

import networkx
import pytest

import dag.graph
from dag import DAG, DagDescription, DagValidationError
from dag.errors import DagError
from dag.graph import GraphvizNotFoundError
from edges import EdgeConfig, RoutingPolicy, between, from_
from processors import ProcessorMetaSupplier
from tests.support.processors import Nop


def sample_dag() -> DAG:
    dag = DAG()
    src = dag.new_vertex("src", ProcessorMetaSupplier.of(Nop, preferred_local_parallelism=1))
    a = dag.new_vertex("a", Nop, local_parallelism=2)
    b = dag.new_vertex("b", Nop)
    dag.edge(between(src, a).partitioned(len).distribute_to(1).priority(-1))
    dag.edge(from_(src, 1).to(b).all_to_one("k").distributed().set_config(EdgeConfig(queue_size=64)))
    dag.edge(from_(a).to(b, 1).broadcast())
    return dag


def test_describe_when_dag_then_vertices_and_edges_described():
    d = sample_dag().describe(default_local_parallelism=4)
    assert [(v.name, v.local_parallelism, v.preferred_local_parallelism, v.parallelism) for v in d.vertices] == [
        ("src", None, 1, 1),
        ("a", 2, None, 2),
        ("b", None, None, 4),
    ]
    first, second, third = d.edges
    assert (first.source, first.source_ordinal, first.destination, first.dest_ordinal) == ("src", 0, "a", 0)
    assert first.routing is RoutingPolicy.PARTITIONED and not first.all_to_one
    assert (first.distributed, first.distributed_to, first.priority, first.queue_size) == (False, 1, -1, None)
    assert second.all_to_one and second.distributed and second.distributed_to is None and second.queue_size == 64
    assert (third.source_ordinal, third.dest_ordinal, third.routing) == (0, 1, RoutingPolicy.BROADCAST)
    assert not third.distributed and third.distributed_to is None


def test_describe_when_default_unknown_then_parallelism_none():
    assert [v.parallelism for v in sample_dag().describe().vertices] == [1, 2, None]


def test_describe_when_dumped_to_json_then_round_trips():
    d = sample_dag().describe()
    assert DagDescription.model_validate_json(d.model_dump_json()) == d
    assert '"routing":"partitioned"' in d.model_dump_json()


def test_describe_when_invalid_dag_then_validation_error():
    with pytest.raises(DagValidationError):
        DAG().describe()


def test_to_networkx_when_dag_then_multidigraph_with_settings():
    graph = sample_dag().to_networkx()
    assert isinstance(graph, networkx.MultiDiGraph)
    assert list(graph.nodes) == ["src", "a", "b"]
    assert graph.nodes["a"]["local_parallelism"] == 2 and graph.nodes["src"]["preferred_local_parallelism"] == 1
    assert graph.nodes["a"]["vertex"].name == "a"
    assert set(graph.edges(keys=True)) == {("src", "a", (0, 0)), ("src", "b", (1, 0)), ("a", "b", (0, 1))}
    settings = graph.edges["src", "b", (1, 0)]
    assert settings["routing"] == "partitioned" and settings["all_to_one"] and settings["queue_size"] == 64
    assert str(settings["edge"]) == 'from_("src", 1).to("b").all_to_one().distributed()'
    assert graph.edges["src", "a", (0, 0)]["priority"] == -1
    assert list(networkx.topological_sort(graph))[0] == "src"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed on this machine")
def test_render_when_svg_then_file_written_and_path_returned(tmp_path):
    target = tmp_path / "dag.svg"
    assert sample_dag().render(target) == target
    text = target.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "src" in text


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed on this machine")
def test_render_when_png_then_png_bytes(tmp_path):
    written = sample_dag().render(str(tmp_path / "dag.png"), format="png")
    assert written.read_bytes().startswith(b"\x89PNG")


def test_render_when_unknown_format_then_rejected(tmp_path):
    with pytest.raises(DagValidationError, match="unknown format 'svgz2'"):
        sample_dag().render(tmp_path / "x", format="svgz2")


def test_render_when_dot_missing_then_error_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` here
    with pytest.raises(GraphvizNotFoundError) as err:
        sample_dag().render(tmp_path / "dag.svg")
    assert isinstance(err.value, DagError)
    assert "apt-get install graphviz" in str(err.value) and "brew install graphviz" in str(err.value)
    assert "conda" in str(err.value)
    assert not (tmp_path / "dag.svg").exists()
    assert dag.graph.INSTALL_HINT in str(err.value)
