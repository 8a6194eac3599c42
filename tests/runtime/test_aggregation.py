"""By-key aggregation on Spark with and without the planner's optimisations: the same results every way.

Word count as the Jet manual builds it (tokenize -> local partitioned -> accumulate_by_key -> distributed
partitioned -> combine_by_key) runs fused into one map-side-combining shuffle by default; switching each
optimisation off (EngineConfig) must not change a single count, on one member or two.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter

import pytest

from dag import DAG, Engine, EngineConfig
from dag.planner import EdgeOp
from edges import Partitioner, between
from processors import (
    accumulate_by_key_p,
    aggregate_by_key_p,
    averaging,
    combine_by_key_p,
    counting,
    entry_key,
    flat_map_p,
    read_list_p,
    summing,
    whole_item,
    write_list_p,
    write_map_p,
)

pytestmark = pytest.mark.spark

LINES = [f"the quick brown fox {i} jumps over the lazy dog {i % 7}" for i in range(300)] + ["", "The THE the"]
_words = re.compile(r"\w+").findall


def tokenize(line):
    return _words(line.lower())


EXPECTED = Counter(w for line in LINES for w in tokenize(line))


def word_count_dag(source, sink, partitioner=None):
    dag = DAG()
    src = dag.new_vertex("source", read_list_p(source))
    tok = dag.new_vertex("tokenize", flat_map_p(tokenize))
    acc = dag.new_vertex("accumulate", accumulate_by_key_p(whole_item, counting()))
    comb = dag.new_vertex("combine", combine_by_key_p(counting()))
    out = dag.new_vertex("sink", write_map_p(sink))
    dag.edge(between(src, tok)).edge(between(tok, acc).partitioned(whole_item, partitioner))
    dag.edge(between(acc, comb).partitioned(entry_key).distributed()).edge(between(comb, out))
    return dag


CONFIGS = {
    "default": {},
    "no-accumulate-fusion": {"fuse_accumulate": False},
    "no-optimisation": {"fuse_accumulate": False, "pre_aggregate": False, "fuse_narrow_edges": False},
    "two-members": {"members": 2},
    "two-members-no-optimisation": {"members": 2, "fuse_accumulate": False, "pre_aggregate": False},
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_word_count_when_optimisations_toggled_then_same_counts(engine, name):
    eng = Engine(EngineConfig(**CONFIGS[name]), spark=engine.spark)
    source, sink = f"lines-{uuid.uuid4().hex}", f"counts-{uuid.uuid4().hex}"
    eng.get_list(source).extend(LINES)
    dag = word_count_dag(source, sink, Partitioner.HASH_CODE)
    job = eng.new_job(dag)
    job.join()
    assert eng.get_map(sink) == dict(EXPECTED)
    metrics = job.metrics()
    assert metrics.total("tokenize", "emittedCount") == sum(EXPECTED.values())
    assert metrics.total("combine", "emittedCount") == len(EXPECTED)


def test_word_count_when_fused_then_plan_says_one_map_side_combining_shuffle(engine):
    plan = engine.plan(word_count_dag("x", "y"))
    fused = [ep for ep in plan.edges if ep.op is EdgeOp.ACCUMULATE_FUSED]
    assert [ep.dest for ep in fused] == ["accumulate"]
    assert sum(ep.op is EdgeOp.PARTITION_BY for ep in plan.edges) == 1


@pytest.mark.parametrize("pre_aggregate", [True, False])
def test_aggregate_by_key_when_pre_aggregated_then_finish_and_output_fn_applied_once(engine, pre_aggregate):
    eng = Engine(EngineConfig(pre_aggregate=pre_aggregate), spark=engine.spark)
    source, sink = f"nums-{uuid.uuid4().hex}", f"out-{uuid.uuid4().hex}"
    eng.get_list(source).extend(range(100))
    dag = DAG()
    src = dag.new_vertex("source", read_list_p(source))
    key = lambda n: n % 3  # noqa: E731
    agg = dag.new_vertex("avg", aggregate_by_key_p(key, averaging(), lambda k, r: f"{k}:{r}"))
    total = dag.new_vertex("sum", aggregate_by_key_p(key, summing(), lambda k, r: None if k == 0 else (k, r)))
    out_avg, out_sum = dag.new_vertex("out-avg", write_list_p(sink)), dag.new_vertex("out-sum", write_map_p(sink))
    dag.edge(between(src, agg).partitioned(key))
    dag.edge(between(agg, out_avg))
    plan_edge = eng.plan(dag).edges[0]
    assert (plan_edge.pre_aggregation is not None) is pre_aggregate
    src2 = dag.new_vertex("source2", read_list_p(source))
    dag.edge(between(src2, total).partitioned(key)).edge(between(total, out_sum))
    eng.new_job(dag).join()
    expected_avg = {f"{k}:{sum(range(k, 100, 3)) / len(range(k, 100, 3))}" for k in range(3)}
    assert set(eng.get_list(sink)) == expected_avg
    assert eng.get_map(sink) == {k: sum(range(k, 100, 3)) for k in (1, 2)}


DOCS = [(d, " ".join(f"w{(d * i) % 23}" for i in range(40))) for d in range(1, 30)]
DOCS_PER_WORD = Counter(w for _, text in DOCS for w in set(text.split()))


def docs_per_word_dag(source, sink, second_partitioner):
    """The manual's TF-IDF shape: count per (doc, word), then group the entries by word: a by-word aggregator
    that sees a word's entries on two processors emits the word twice."""
    dag = DAG()
    src = dag.new_vertex("docs", read_list_p(source))
    words = dag.new_vertex("words", flat_map_p(lambda doc: [(doc[0], w) for w in doc[1].split()]))
    tf = dag.new_vertex("tf", aggregate_by_key_p(whole_item, counting()))
    per_word = dag.new_vertex("docs-per-word", aggregate_by_key_p(lambda e: e[0][1], counting()))
    out = dag.new_vertex("sink", write_list_p(sink))
    dag.edge(between(src, words)).edge(between(words, tf).partitioned(whole_item))
    dag.edge(between(tf, per_word).partitioned(lambda e: e[0][1], second_partitioner).distributed())
    return dag.edge(between(per_word, out))


@pytest.mark.parametrize("co_partition", [True, False])
@pytest.mark.parametrize("second_partitioner", [None, Partitioner.HASH_CODE])
def test_docs_per_word_when_co_partitioned_or_not_then_each_word_once_with_its_count(engine, co_partition,
                                                                                    second_partitioner):
    eng = Engine(EngineConfig(co_partition=co_partition), spark=engine.spark)
    source, sink = f"docs-{uuid.uuid4().hex}", f"per-word-{uuid.uuid4().hex}"
    eng.get_list(source).extend(DOCS)
    dag = docs_per_word_dag(source, sink, second_partitioner)
    fused = eng.plan(dag).edges[2]
    assert (fused.op is EdgeOp.FUSED) is co_partition, eng.plan(dag).explain()
    eng.new_job(dag).join()
    out = list(eng.get_list(sink))
    assert sorted(out) == sorted(DOCS_PER_WORD.items())
