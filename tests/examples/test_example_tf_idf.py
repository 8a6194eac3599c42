"""examples/tf_idf.py: the DAG (edges, priorities, parallelism), its custom processors, search(),
and the index built on the bundled sample checked against the independent reference computation."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "examples")]

import tf_idf  # noqa: E402

from edges import RoutingPolicy  # noqa: E402
from processors import SAME_ITEMS_ANY_ORDER, verify_processor  # noqa: E402
from tests.support import reference  # noqa: E402

STOPWORDS = tf_idf.read_stopwords(tf_idf.STOPWORDS)


def _edge(dag, source: str, dest: str):
    edge, = [e for e in dag.get_outbound_edges(source) if e.dest_name == dest]
    return edge


def test_tf_idf_dag_when_built_then_has_the_manuals_splits_joins_and_prioritised_broadcasts() -> None:
    dag = tf_idf.build_dag()
    assert {v.name for v in dag} == {"stopword-source", "doc-source", "doc-count", "tf", "tf-idf", "sink"}
    stop = _edge(dag, "stopword-source", "tf")
    assert (stop.routing_policy, stop.get_priority(), stop.dest_ordinal) == (RoutingPolicy.BROADCAST, -1, 0)
    count_in = _edge(dag, "doc-source", "doc-count")
    assert count_in.routing_policy is RoutingPolicy.BROADCAST and count_in.is_distributed
    count_out = _edge(dag, "doc-count", "tf-idf")
    assert (count_out.routing_policy, count_out.is_local, count_out.get_priority(), count_out.dest_ordinal) == (
        RoutingPolicy.BROADCAST, True, -1, 0)
    docs = _edge(dag, "doc-source", "tf")
    assert (docs.source_ordinal, docs.dest_ordinal, docs.routing_policy) == (1, 1, RoutingPolicy.UNICAST)
    tf_out = _edge(dag, "tf", "tf-idf")
    assert tf_out.routing_policy is RoutingPolicy.PARTITIONED and tf_out.is_distributed
    assert tf_out.dest_ordinal == 1 and tf_out.key_fn(("king", (3, 2))) == "king"
    assert dag.get_vertex("doc-count").local_parallelism == 1
    assert dag.get_vertex("stopword-source").local_parallelism == 1


def test_tf_processor_when_stopwords_then_document_then_one_entry_per_distinct_word(tmp_path) -> None:
    doc = tmp_path / "doc.txt"
    doc.write_bytes("\ufeffThe King's suit,\r\nthe KING and the queen\n".encode())
    verify_processor(tf_idf.TfP).disable_snapshots().output_checker(SAME_ITEMS_ANY_ORDER) \
        .inputs([[frozenset({"the", "and"})], [(7, str(doc))]], priorities=[-1, 0]) \
        .expect_output([("king", (7, 2)), ("s", (7, 1)), ("suit", (7, 1)), ("queen", (7, 1))])


def test_tf_processor_when_file_not_utf8_then_error_names_the_file(tmp_path) -> None:
    doc = tmp_path / "latin.txt"
    doc.write_bytes(b"ok\nna\xefve\n")
    with pytest.raises(ValueError, match=r"latin\.txt': line 2"):
        verify_processor(tf_idf.TfP).disable_snapshots().inputs([[frozenset()], [(1, str(doc))]], [-1, 0]) \
            .expect_output([])


def test_tf_idf_processor_when_count_then_entries_then_scores_by_word() -> None:
    entries = [("king", (1, 2)), ("suit", (1, 1)), ("king", (3, 1))]
    verify_processor(tf_idf.TfIdfP).disable_snapshots().output_checker(SAME_ITEMS_ANY_ORDER) \
        .inputs([[4], entries], priorities=[-1, 0]) \
        .expect_output([("king", [(1, 2 * math.log(2)), (3, math.log(2))]), ("suit", [(1, math.log(4))])])


def test_search_when_phrase_then_stopwords_dropped_and_all_terms_required() -> None:
    index = {"king": [(1, 2.0), (2, 0.5), (4, 1.0)], "suit": [(2, 1.0), (3, 4.0), (4, 0.25)]}
    assert tf_idf.search(index, frozenset({"the", "s"}), "The KING'S suit") == [(2, 1.5), (4, 1.25)]
    assert tf_idf.search(index, frozenset(), "king queen") == []
    assert tf_idf.search(index, frozenset({"the"}), "the the") == []
    assert tf_idf.search(index, frozenset(), "king king") == [(1, 2.0), (4, 1.0), (2, 0.5)]


def test_search_when_equal_scores_then_lower_doc_id_first() -> None:
    assert tf_idf.search({"w": [(7, 1.0), (3, 1.0)]}, frozenset(), "w") == [(3, 1.0), (7, 1.0)]


def test_read_stopwords_when_bundled_file_then_484_words() -> None:
    assert len(STOPWORDS) == 484 and "the" in STOPWORDS and "" not in STOPWORDS


@pytest.fixture(scope="module")
def sample_index(engine) -> dict:
    return tf_idf.build_index(engine, tf_idf.BOOKS, tf_idf.STOPWORDS)


@pytest.fixture(scope="module")
def reference_index() -> dict:
    return reference.inverted_index(tf_idf.BOOKS, set(STOPWORDS))


@pytest.mark.spark
def test_tf_idf_when_sample_then_index_equals_reference(sample_index: dict, reference_index: dict) -> None:
    assert sample_index.keys() == reference_index.keys()
    for word, postings in reference_index.items():
        got = sorted(sample_index[word])
        assert [doc for doc, _ in got] == [doc for doc, _ in postings], word
        assert all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) for (_, a), (_, b) in zip(got, postings)), word
    assert math.isclose(reference.score_sum(sample_index), reference.score_sum(reference_index), rel_tol=1e-12)


@pytest.mark.spark
def test_tf_idf_when_pipelined_then_index_equals_staged_index(sample_index: dict, engine) -> None:
    from dag import ExecutionMode

    from tests.support.modes import ModeEngine

    pipelined = tf_idf.build_index(ModeEngine(engine, ExecutionMode.PIPELINED), tf_idf.BOOKS, tf_idf.STOPWORDS)
    assert pipelined.keys() == sample_index.keys()
    for word, postings in sample_index.items():
        got, expected = sorted(pipelined[word]), sorted(postings)
        assert [doc for doc, _ in got] == [doc for doc, _ in expected], word
        assert all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) for (_, a), (_, b) in zip(got, expected)), word


@pytest.mark.spark
@pytest.mark.parametrize("phrase", ["the man in the black suit murdered the king", "Madame Defarge", "father",
                                    "old man", "zzz unknown", "the of and"])
def test_search_when_sample_index_then_equals_reference_search(
    sample_index: dict, reference_index: dict, phrase: str
) -> None:
    got = tf_idf.search(sample_index, STOPWORDS, phrase)
    expected = reference.search(reference_index, set(STOPWORDS), phrase)
    assert [doc for doc, _ in got] == [doc for doc, _ in expected]
    assert all(math.isclose(a, b, rel_tol=1e-12) for (_, a), (_, b) in zip(got, expected))


@pytest.mark.spark
def test_tf_idf_report_when_phrase_then_prints_best_documents(sample_index: dict, engine, capsys) -> None:
    tf_idf.report(engine, tf_idf.STOPWORDS, "father")
    out = capsys.readouterr().out
    assert f"{len(sample_index):,} words" in out and ".txt" in out
