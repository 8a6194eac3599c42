"""Widening (EngineConfig.widen_stateless) on Spark: the same results and item counts with it on and off."""

from __future__ import annotations

import uuid

import pytest

from dag import DAG, Engine, EngineConfig
from edges import between
from processors import flat_map_p, read_list_p, write_list_p
from tests.support.processors import Tag

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
