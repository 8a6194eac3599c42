"""examples/word_count.py: the manual's DAG shape, its tokenizer, and its result on the bundled sample checked
against the independent reference computation (tests/support/reference.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "examples")]

import word_count  # noqa: E402

from edges import RoutingPolicy  # noqa: E402
from tests.support import reference  # noqa: E402


def test_word_count_dag_when_built_then_has_the_manuals_shape() -> None:
    dag = word_count.build_dag()
    assert [v.name for v in dag] == ["source", "doc-lines", "tokenize", "accumulate", "combine", "sink"]
    into_accumulate, = dag.get_inbound_edges("accumulate")
    assert into_accumulate.routing_policy is RoutingPolicy.PARTITIONED and into_accumulate.is_local
    into_combine, = dag.get_inbound_edges("combine")
    assert into_combine.routing_policy is RoutingPolicy.PARTITIONED and into_combine.is_distributed
    assert into_combine.key_fn(("word", 3)) == "word"


@pytest.mark.parametrize(
    "line",
    [
        "",
        "\ufeffThe Project Gutenberg EBook of A Tale of Two Cities, by Charles Dickens\r\n",
        "  --leading and trailing punctuation...  ",
        "under_scores, digits 1984 and x2, CamelCase and UPPER",
        "naïve café: non-ASCII letters split words, as Java's \\W does",
        "tabs\tand\x0bvertical\x0cfeeds\u2028and line separators",
    ],
)
def test_tokenize_when_lower_cased_line_then_same_words_as_reference(line: str) -> None:
    assert word_count.tokenize(line.lower()) == reference.tokens(line)


def test_doc_lines_and_tokenize_when_sample_corpus_then_same_words_as_reference() -> None:
    for path in word_count.document_paths(word_count.BOOKS).values():
        assert [w for line in word_count.doc_lines((0, path)) for w in word_count.tokenize(line)] == \
            reference.document_words(Path(path)), path


def test_document_paths_when_sample_then_ids_follow_sorted_names() -> None:
    paths = word_count.document_paths(word_count.BOOKS)
    assert {i: Path(p) for i, p in paths.items()} == {i: p.resolve() for i, p in reference.documents(word_count.BOOKS).items()}


def test_document_paths_when_directory_missing_then_error_names_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="--books .*missing: no such directory"):
        word_count.document_paths(tmp_path / "missing")


def test_top_words_when_ties_then_alphabetical() -> None:
    assert word_count.top_words({"b": 2, "a": 2, "c": 5}, 2) == [("c", 5), ("a", 2)]


@pytest.mark.spark
def test_word_count_when_sample_then_equals_reference(engine) -> None:
    counts = word_count.count_words(engine, word_count.BOOKS)
    assert counts == dict(reference.word_counts(word_count.BOOKS))


@pytest.mark.spark
def test_word_count_when_pipelined_then_same_result_as_reference(engine) -> None:
    from dag import ExecutionMode

    from tests.support.modes import ModeEngine

    counts = word_count.count_words(ModeEngine(engine, ExecutionMode.PIPELINED), word_count.BOOKS)
    assert counts == dict(reference.word_counts(word_count.BOOKS))


@pytest.mark.spark
def test_word_count_when_run_twice_then_same_result(engine, tmp_path: Path) -> None:
    books = tmp_path / "books"
    books.mkdir()
    (books / "b.txt").write_bytes("\ufeffTo be, or not to be:\r\nthat is the question.\r\n".encode())
    (books / "a.txt").write_text("Be quick!\nThe END")
    expected = dict(reference.word_counts(books))
    assert word_count.count_words(engine, books) == expected
    assert word_count.count_words(engine, books) == expected


def test_doc_lines_when_file_not_utf8_then_error_names_file_line_and_offset(tmp_path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes(b"fine\n" * 3000 + b"na\xefve\n")  # past the first read chunk: offsets are the file's
    with pytest.raises(ValueError) as info:
        word_count.doc_lines((1, str(path)))
    assert str(path) in str(info.value) and "line 3001 (byte offset 15002)" in str(info.value)
