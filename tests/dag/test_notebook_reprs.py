"""In a notebook a DAG, a physical plan and a pipeline draw themselves (IPython's ``_repr_svg_``): the same
pictures ``jetspark render`` draws; something that cannot be drawn answers None, so IPython shows its text."""

from __future__ import annotations

import sys
from pathlib import Path

import graphviz

from dag import DAG, EngineConfig
from dag.planner import plan_dag
from edges import between
from processors import noop_p

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "examples")]

import word_count  # noqa: E402
import word_count_pipeline  # noqa: E402


def _svg(dot: str) -> str:
    return graphviz.pipe("dot", "svg", dot.encode()).decode()


def test_dag_repr_svg_when_valid_then_the_rendered_picture(tmp_path: Path) -> None:
    dag = word_count.build_dag()
    svg = dag._repr_svg_()
    assert svg == _svg(dag.to_dot()) == dag.render(tmp_path / "wc.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and ">tokenize</text>" in svg


def test_dag_repr_svg_when_invalid_then_none() -> None:
    dag = DAG()
    a, b = dag.new_vertex("a", noop_p()), dag.new_vertex("b", noop_p())
    dag.edge(between(a, b)).edge(between(b, a))
    assert dag._repr_svg_() is None and DAG()._repr_svg_() is None


def test_plan_repr_svg_then_the_plan_picture() -> None:
    plan = plan_dag(word_count.build_dag(), EngineConfig(), members=1, default_parallelism=2)
    svg = plan._repr_svg_()
    assert svg == _svg(plan.to_dot()) and ">Stage 0 (2 tasks)</text>" in svg


def test_pipeline_repr_svg_then_its_dag_picture_and_none_while_incomplete() -> None:
    import pipeline

    p = word_count_pipeline.build_pipeline()
    assert p._repr_svg_() == _svg(p.to_dag().to_dot())
    incomplete = pipeline.Pipeline.create()
    incomplete.read_from(pipeline.Sources.list("text")).map(str.upper)  # no sink
    assert incomplete._repr_svg_() is None
