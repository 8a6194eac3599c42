"""Widening (EngineConfig.widen_stateless) on Spark: the same results and item counts with it on and off."""

from __future__ import annotations

import uuid

import pytest

from dag import DAG, Engine, EngineConfig
from edges import between, from_
from processors import flat_map_p, read_list_p, read_map_p, write_list_p
from tests.support.processors import Count, Tag

pytestmark = pytest.mark.spark


def _dag(source, sink):
    dag = DAG()
    src = dag.new_vertex("docs", read_list_p(source), local_parallelism=1)
    lines = dag.new_vertex("lines", flat_map_p(str.split), local_parallelism=1)
    tag = dag.new_vertex("tag", Tag)
    out = dag.new_vertex("sink", write_list_p(sink), local_parallelism=1)
    return dag.edge(between(src, lines)).edge(between(lines, tag)).edge(between(tag, out))


def _run(engine, widen):
    source, sink = f"in-{uuid.uuid4().hex}", f"out-{uuid.uuid4().hex}"
    # the source in equal-count slices (not dealt on demand): both tag processors then get lines either way
    with Engine(EngineConfig(widen_stateless=widen, deal_driver_sources=False), spark=engine.spark) as runner:
        runner.get_list(source).extend(" ".join(f"w{d}-{i}" for i in range(50)) for d in range(40))
        job = runner.new_job(_dag(source, sink))
        job.join()
        return list(runner.get_list(sink)), job.metrics()


def test_widening_when_on_or_off_then_same_items_and_counts(engine):
    widened, m_on = _run(engine, True)
    plain, m_off = _run(engine, False)
    assert sorted(w for w, _ in widened) == sorted(w for w, _ in plain)
    assert len(widened) == 2000
    assert {i for _, i in widened} == {0, 1} == {i for _, i in plain}  # both tag processors work either way
    for vertex, metric in [("lines", "receivedCount"), ("lines", "emittedCount"), ("tag", "emittedCount"),
                           ("sink", "receivedCount")]:
        assert m_on.total(vertex, metric) == m_off.total(vertex, metric), (vertex, metric)
    assert len(m_on["lines"]) == 2 and len(m_off["lines"]) == 1  # the widened vertex ran 2 processors


def _run_counted(engine, widen):
    """A driver source at local parallelism 1 broadcasting into one counting processor and feeding a
    tokenizer (the manual TF-IDF's ``doc-source``): the sink's items, the metrics and the plan's text."""
    source, sink = f"in-{uuid.uuid4().hex}", f"out-{uuid.uuid4().hex}"
    with Engine(EngineConfig(widen_stateless=widen), spark=engine.spark) as runner:
        runner.get_map(source).update({d: " ".join(f"w{d}-{i}" for i in range(30)) for d in range(40)})
        dag = DAG()
        src = dag.new_vertex("docs", read_map_p(source), local_parallelism=1)
        count = dag.new_vertex("count", Count, local_parallelism=1)
        words = dag.new_vertex("words", flat_map_p(lambda e: e[1].split()), local_parallelism=1)
        tag = dag.new_vertex("tag", Tag)
        out = dag.new_vertex("sink", write_list_p(sink), local_parallelism=1)
        dag.edge(between(src, count).broadcast().distributed()).edge(from_(src, 1).to(words))
        dag.edge(between(words, tag)).edge(between(tag, out)).edge(from_(count).to(out, 1))
        job = runner.new_job(dag)
        job.join()
        return list(runner.get_list(sink)), job.metrics(), runner.plan(dag).explain()


def test_widening_when_driver_source_also_broadcasts_into_one_processor_then_same_items_and_counts(engine):
    widened, m_on, explained_on = _run_counted(engine, True)
    plain, m_off, explained_off = _run_counted(engine, False)
    docs_line = next(line for line in explained_on.splitlines() if "docs: driver_source" in line)
    assert "parallelism 2 (local 2 x 1 member); widened from local parallelism 1" in docs_line
    assert "read once for each of its 2 outbound edges" in explained_on
    assert "widened" not in explained_off
    for got in (widened, plain):
        assert ("count", 40) in got
        assert sorted(w for w, _ in got if w != "count") == sorted(f"w{d}-{i}" for d in range(40) for i in range(30))
    assert len(m_on["docs"]) == 2 and len(m_off["docs"]) == 1  # the widened source ran 2 processors
    for vertex, metric in [("count", "receivedCount"), ("words", "receivedCount"), ("words", "emittedCount"),
                           ("tag", "emittedCount"), ("sink", "receivedCount")]:
        assert m_on.total(vertex, metric) == m_off.total(vertex, metric), (vertex, metric)
    assert m_on.total("count", "receivedCount") == 40
