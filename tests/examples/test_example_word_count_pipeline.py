"""examples/word_count_pipeline.py: the manual's 2.4 program gives the manual's counts, and the books pipeline
gives the counts of the Core DAG of word_count.py on 1 and 2 members."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "examples")]

import word_count  # noqa: E402
import word_count_pipeline  # noqa: E402

from edges import RoutingPolicy  # noqa: E402
from tests.support import reference  # noqa: E402


def test_books_pipeline_when_lowered_then_has_the_word_count_dags_shape() -> None:
    dag = word_count_pipeline.build_pipeline().to_dag()
    assert [v.name for v in dag] == ["mapSource(docs)", "flat-map", "flat-map-2", "group-and-aggregate-prepare",
                                     "group-and-aggregate", "mapSink(counts)"]
    into_prepare, = dag.get_inbound_edges("group-and-aggregate-prepare")
    assert into_prepare.routing_policy is RoutingPolicy.PARTITIONED and into_prepare.is_local
    into_combine, = dag.get_inbound_edges("group-and-aggregate")
    assert into_combine.routing_policy is RoutingPolicy.PARTITIONED and into_combine.is_distributed


def test_split_words_when_java_split_then_same_pieces() -> None:
    assert word_count_pipeline.split_words("Hello, World hello") == ["hello", "world", "hello"]
    assert word_count_pipeline.split_words("  lead") == ["", "lead"]


@pytest.mark.spark
def test_hello_world_pipeline_when_run_then_manuals_counts(engine) -> None:
    engine.get_list("text")[:] = ["hello world hello hello world", "world world hello world"]
    engine.get_map("counts").clear()
    engine.new_job(word_count_pipeline.hello_world_pipeline()).join(timeout=300)
    counts = engine.get_map("counts")
    assert (counts["hello"], counts["world"]) == (4, 5)
    assert set(counts) == {"hello", "world"}


@pytest.mark.spark
@pytest.mark.parametrize("members", [1, 2])
def test_books_pipeline_when_run_then_same_counts_as_the_dag(engine, members: int) -> None:
    from dag import Engine, EngineConfig

    borrowed = Engine(EngineConfig(members=members), spark=engine.spark)
    from_pipeline = word_count_pipeline.count_words(borrowed)
    from_dag = word_count.count_words(borrowed)
    assert from_pipeline == from_dag
    assert from_pipeline == reference.word_counts(word_count.BOOKS)


@pytest.mark.spark
def test_tf_idf_pipeline_when_run_then_same_index_as_the_dag(engine) -> None:
    import tf_idf
    import tf_idf_pipeline

    from_pipeline = tf_idf_pipeline.build_index(engine)
    from_dag = tf_idf.build_index(engine)
    assert from_pipeline.keys() == from_dag.keys()
    for word, postings in from_dag.items():
        got = sorted(from_pipeline[word])
        assert [d for d, _ in got] == [d for d, _ in sorted(postings)], word
        assert all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for (_, a), (_, b) in zip(got, sorted(postings))), word
