"""bench/baselines.py: every hand-written baseline computes what the reference computes (on the sample), so
the benchmark compares equal work."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "bench")]

import baselines  # noqa: E402
from tests.support import reference  # noqa: E402

BOOKS = HERE.parents[1] / "examples" / "data" / "books"
STOPWORDS = baselines.read_stopwords(HERE.parents[1] / "examples" / "data" / "stopwords.txt")


def _assert_same_index(actual: dict, expected: dict) -> None:
    assert actual.keys() == expected.keys()
    for word, postings in expected.items():
        got = sorted(actual[word])
        assert [d for d, _ in got] == [d for d, _ in postings], word
        assert all(math.isclose(a, b, rel_tol=1e-12) for (_, a), (_, b) in zip(got, postings)), word


@pytest.fixture(scope="module")
def expected_counts() -> dict:
    return dict(reference.word_counts(BOOKS))


@pytest.fixture(scope="module")
def expected_index() -> dict:
    return reference.inverted_index(BOOKS, set(STOPWORDS))


@pytest.mark.parametrize("fn", [baselines.word_count_counter, baselines.word_count_loop])
def test_python_word_count_when_sample_then_equals_reference(fn, expected_counts: dict) -> None:
    assert fn(BOOKS) == expected_counts


def test_python_tf_idf_when_sample_then_equals_reference(expected_index: dict) -> None:
    _assert_same_index(baselines.tf_idf_python(BOOKS, STOPWORDS), expected_index)


def test_balanced_when_files_then_every_file_once_in_size_balanced_bins() -> None:
    docs = baselines.documents(BOOKS)
    bins = baselines._balanced(docs, 2)
    assert sorted(d for b in bins for d in b) == docs and all(bins)


@pytest.mark.spark
@pytest.mark.parametrize("fn", [baselines.word_count_pyspark_usual, baselines.word_count_pyspark_tuned])
def test_pyspark_word_count_when_sample_then_equals_reference(engine, fn, expected_counts: dict) -> None:
    assert fn(engine.spark.sparkContext, BOOKS) == expected_counts


@pytest.mark.spark
@pytest.mark.parametrize("fn", [baselines.tf_idf_pyspark_usual, baselines.tf_idf_pyspark_tuned])
def test_pyspark_tf_idf_when_sample_then_equals_reference(engine, fn, expected_index: dict) -> None:
    _assert_same_index(fn(engine.spark.sparkContext, BOOKS, STOPWORDS), expected_index)
