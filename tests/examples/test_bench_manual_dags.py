"""bench/manual_dags.py: the manual's TF-IDF DAG in every writing the benchmark times computes the reference
index on the sample (so ``bench_jobs.py`` compares equal work across writings)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "bench"), str(HERE.parents[1] / "examples")]

import manual_dags  # noqa: E402
import tf_idf  # noqa: E402
from tests.support import reference  # noqa: E402


@pytest.fixture(scope="module")
def reference_index() -> dict:
    return reference.inverted_index(tf_idf.BOOKS, set(tf_idf.read_stopwords(tf_idf.STOPWORDS)))


def test_tf_idf_dag_when_unknown_writing_then_error_lists_the_writings() -> None:
    with pytest.raises(ValueError, match="unknown TF-IDF writing 'loops'; choose from context, flat-map"):
        manual_dags.tf_idf_dag(tf_idf.STOPWORDS, "loops")


def _assert_equals_reference(index: dict, reference_index: dict) -> None:
    assert index.keys() == reference_index.keys()
    for word, postings in reference_index.items():
        got = sorted(index[word])
        assert [d for d, _ in got] == [d for d, _ in postings], word
        assert all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) for (_, a), (_, b) in zip(got, postings)), word


@pytest.mark.spark
def test_manual_tf_idf_when_pipelined_then_index_equals_reference(engine, reference_index: dict) -> None:
    """The widened ``doc-source`` (broadcast into the one ``doc-count`` and unicast into ``doc-lines``) also runs
    in PIPELINED mode, where driver sources are sliced, not dealt."""
    from dag import ExecutionMode

    from tests.support.modes import ModeEngine

    mode_engine = ModeEngine(engine, ExecutionMode.PIPELINED)
    explained = mode_engine.plan(manual_dags.tf_idf_dag(tf_idf.STOPWORDS)).explain()
    assert "doc-source#1" in explained  # widened to 2 processors
    _assert_equals_reference(manual_dags.build_index(mode_engine, tf_idf.BOOKS, tf_idf.STOPWORDS), reference_index)


@pytest.mark.spark
@pytest.mark.parametrize("writing", manual_dags.TF_IDF_WRITINGS)
def test_manual_tf_idf_when_each_writing_then_index_equals_reference(engine, writing: str,
                                                                     reference_index: dict) -> None:
    _assert_equals_reference(manual_dags.build_index(engine, tf_idf.BOOKS, tf_idf.STOPWORDS, writing), reference_index)
