"""bench/bench_tf_idf_writings.py: the rows it times do the same work (so their CPU seconds compare)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "bench"), str(HERE.parents[1] / "examples")]

import bench_tf_idf_writings  # noqa: E402
import tf_idf  # noqa: E402


def test_bench_tf_idf_writings_when_run_then_tokenizers_and_tf_rows_give_the_same_results() -> None:
    n_lines, rows = bench_tf_idf_writings.workloads(Path(tf_idf.BOOKS), Path(tf_idf.STOPWORDS), docs=3)
    assert n_lines > 0
    pairs = rows["tokenize-fn"]()
    assert pairs and rows["tokenize"]() == pairs and rows["tokenize-trav"]() == pairs
    expected_tf = Counter(pairs)
    assert dict(rows["tf"]()) == expected_tf and dict(rows["tf-two-stage"]()) == expected_tf
    assert len(rows["tf-idf"]()) == len({word for _, word in pairs})
