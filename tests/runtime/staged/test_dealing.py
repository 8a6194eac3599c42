"""Dealt driver sources (EngineConfig.deal_driver_sources) on Spark: the same items either way, each once."""

from __future__ import annotations

import uuid

import pytest

from dag import DAG, Engine, EngineConfig
from edges import between, from_
from processors import read_map_p, write_list_p
from tests.support.processors import Count, Tag

pytestmark = pytest.mark.spark


def _run(engine, deal, wire, note):
    """Run ``src`` (a driver map of 3000 entries) into ``sink`` (a driver list), the vertices between them added
    by ``wire(dag, src, sink)``; ``note`` must show in ``explain()`` exactly when dealing is on."""
    source, sink = f"in-{uuid.uuid4().hex}", f"out-{uuid.uuid4().hex}"
    with Engine(EngineConfig(deal_driver_sources=deal), spark=engine.spark) as runner:
        runner.get_map(source).update({k: f"v{k}" for k in range(3000)})
        dag = DAG()
        src = dag.new_vertex("src", read_map_p(source))
        out = dag.new_vertex("sink", write_list_p(sink), local_parallelism=1)
        wire(dag, src, out)
        assert (note in runner.plan(dag).explain()) is deal
        job = runner.new_job(dag)
        job.join()
        return list(runner.get_list(sink)), job.metrics()


def _tagged(dag, src, out):
    tag = dag.new_vertex("tag", Tag)
    dag.edge(between(src, tag)).edge(between(tag, out))


def test_dealing_when_on_or_off_then_every_entry_once_and_each_processor_in_map_order(engine):
    dealt, m_on = _run(engine, True, _tagged, "dealt on demand")
    sliced, m_off = _run(engine, False, _tagged, "dealt on demand")
    expected = [(k, f"v{k}") for k in range(3000)]
    assert sorted(e for e, _ in dealt) == expected == sorted(e for e, _ in sliced)
    for g in (0, 1):
        mine = [e[0] for e, i in dealt if i == g]
        assert mine == sorted(mine)  # a processor's chunks come in map order
    assert m_on.total("src", "emittedCount") == 3000 == m_off.total("src", "emittedCount")
    assert m_on.total("tag", "receivedCount") == 3000


def _tagged_and_counted(dag, src, out):
    tag = dag.new_vertex("tag", Tag)
    count = dag.new_vertex("count", Count, local_parallelism=1)
    dag.edge(between(src, count).broadcast().distributed()).edge(from_(src, 1).to(tag))
    dag.edge(between(tag, out)).edge(from_(count).to(out, 1))


@pytest.mark.parametrize("deal", [True, False])
def test_dealing_when_source_also_broadcasts_into_one_processor_then_each_edge_gets_every_entry_once(engine, deal):
    got, metrics = _run(engine, deal, _tagged_and_counted, "read once for each of its 2 outbound edges")
    assert ("count", 3000) in got
    tagged = [e for e, _ in (x for x in got if x[0] != "count")]
    assert sorted(tagged) == [(k, f"v{k}") for k in range(3000)]
    assert metrics.total("src", "emittedCount") == 6000  # 3000 on each ordinal
    assert metrics.total("count", "receivedCount") == 3000 == metrics.total("tag", "receivedCount")
