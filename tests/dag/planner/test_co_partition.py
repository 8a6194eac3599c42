"""Co-partitioning (``EngineConfig.co_partition``, ``dag/planner/aggregation.py``): a by-key aggregator whose entries
are keyed next by a part of their key gets its input routed there already, and the shuffle after it disappears.
Planner only, no Spark; the same results with and without it are checked in ``tests/runtime/test_aggregation.py``."""

from __future__ import annotations

import pytest

from dag import DAG, EngineConfig
from dag.planner import EdgeOp, plan_dag
from edges import Partitioner, between
from processors import (
    accumulate_by_key_p,
    aggregate_by_key_p,
    combine_by_key_p,
    counting,
    entry,
    entry_key,
    flat_map_p,
    noop_p,
    read_list_p,
    whole_item,
    write_list_p,
)


def doc_word_dag(next_key=lambda e: e[0][1], output_fn=entry, consumer_parallelism=None, two_stage=False):
    """docs -> words -> tf (count per (doc, word)) -> by-word consumer -> sink, the manual's TF-IDF shape."""
    dag = DAG()
    src = dag.new_vertex("docs", read_list_p("docs"))
    words = dag.new_vertex("words", flat_map_p(lambda doc: [(doc[0], w) for w in doc[1].split()]))
    if two_stage:
        tf_in = dag.new_vertex("tf-accumulate", accumulate_by_key_p(whole_item, counting()))
        tf = dag.new_vertex("tf", combine_by_key_p(counting(), output_fn))
        dag.edge(between(tf_in, tf).partitioned(entry_key))
    else:
        tf_in = tf = dag.new_vertex("tf", aggregate_by_key_p(whole_item, counting(), output_fn))
    by_word = dag.new_vertex("by-word", noop_p(), local_parallelism=consumer_parallelism)
    sink = dag.new_vertex("sink", write_list_p("out"))
    dag.edge(between(src, words)).edge(between(words, tf_in).partitioned(whole_item, Partitioner.HASH_CODE))
    dag.edge(between(tf, by_word).partitioned(next_key).distributed()).edge(between(by_word, sink))
    return dag


def plan(dag, members=1, **options):
    return plan_dag(dag, EngineConfig(**options), members, 2)


def edge(p, source, dest):
    return next(ep for ep in p.edges if ep.source == source and ep.dest == dest)


def test_co_partition_when_next_edge_keys_by_part_of_the_key_then_aggregator_and_consumer_share_a_stage():
    p = plan(doc_word_dag())
    into, out = edge(p, "words", "tf"), edge(p, "tf", "by-word")
    assert out.op is EdgeOp.FUSED and "co-partitioned" in out.reason
    assert into.op is EdgeOp.PARTITION_BY and into.pre_aggregation.route_key_fn(("doc-1", "word")) == "word"
    assert into.pre_aggregation.route_partitioner == Partitioner.default()  # the next edge's partitioner
    assert p.stage_of("tf").id == p.stage_of("by-word").id == p.stage_of("sink").id
    assert sum(ep.op is EdgeOp.PARTITION_BY for ep in p.edges) == 1
    assert "routed by the key part of" in p.explain() and "co_partition=on" in p.explain()
    assert "partition = Partitioner.default() of 271" in p.explain()  # the next edge's, not HASH_CODE


def test_co_partition_when_two_stage_aggregation_then_the_map_side_combine_is_routed():
    p = plan(doc_word_dag(two_stage=True))
    assert edge(p, "tf", "by-word").op is EdgeOp.FUSED
    assert edge(p, "tf-accumulate", "tf").pre_aggregation.route_key_fn is not None


def test_co_partition_when_switched_off_then_two_shuffles():
    p = plan(doc_word_dag(), co_partition=False)
    assert edge(p, "tf", "by-word").op is EdgeOp.PARTITION_BY
    assert edge(p, "words", "tf").pre_aggregation.route_key_fn is None


@pytest.mark.parametrize("case, dag, members", [
    ("next key reads the value", doc_word_dag(next_key=lambda e: e[1]), 1),
    ("next key reads the whole entry", doc_word_dag(next_key=lambda e: e), 1),
    ("output is not an entry", doc_word_dag(output_fn=lambda k, n: (k, n)), 1),
    ("consumer has another parallelism", doc_word_dag(consumer_parallelism=1), 1),
    ("two members", doc_word_dag(), 2),
])
def test_co_partition_when_not_provably_the_same_routing_then_left_out(case, dag, members):
    p = plan(dag, members=members)
    assert edge(p, "tf", "by-word").op is EdgeOp.PARTITION_BY, case
