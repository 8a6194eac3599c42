"""Several engines in one process: a second Engine shares the running SparkContext when master and Spark
settings agree, is refused with the differing settings otherwise; the context stops with its last engine."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from dag import Engine, EngineConfig
from dag.errors import DagValidationError
from dag.runtime.common.sharing import check_alive

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "examples")]

import word_count  # noqa: E402
from tests.support import reference  # noqa: E402


@pytest.mark.spark
def test_second_engine_with_two_members_shares_context_and_counts_words_beside_first(engine):
    expected = reference.word_counts(word_count.BOOKS)
    with Engine(EngineConfig(master="local[2]", members=2)) as second:
        assert second.spark.sparkContext is engine.spark.sparkContext
        assert (second.members, engine.members) == (2, 1)
        assert word_count.count_words(second) == expected
        assert word_count.count_words(engine) == expected
    # closing the second engine left the shared context running for the first
    assert word_count.count_words(engine) == expected


@pytest.mark.spark
def test_second_engine_when_spark_settings_conflict_then_refused_listing_them(engine):
    with pytest.raises(DagValidationError, match=r"master: running 'local\[2\]', this engine wants 'local\[3\]'"):
        Engine(EngineConfig(master="local[3]"))
    with pytest.raises(DagValidationError, match=r"spark.sql.shuffle.partitions: running '4', this engine wants '8'"):
        Engine(EngineConfig(master="local[2]", spark_conf={"spark.sql.shuffle.partitions": "8"}))
    assert engine.spark.sparkContext._jsc is not None  # the refused engines did not touch the running context


def test_check_alive_when_session_stopped_then_clear_error():
    stopped = SimpleNamespace(sparkContext=SimpleNamespace(_jsc=None))
    with pytest.raises(DagValidationError, match="The Spark session this engine used was stopped by"):
        check_alive(stopped)
