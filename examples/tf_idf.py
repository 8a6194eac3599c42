"""The TF-IDF inverted index of the Jet manual (section 8.2.3) and a search over it, written to run fast.

::

    stopword-source ─(broadcast, priority -1)─────────────────────────────────────► tf[0]
    doc-source[0] ══(distributed broadcast)══► doc-count ─(broadcast, priority -1)─► tf-idf[0]
    doc-source[1] ──► tf[1] ══(distributed partitioned by word)══► tf-idf[1]
    tf-idf ──► sink

- ``doc-source`` reads the driver-side map ``docs`` (document id -> file path) and emits every entry on both
  its outbound edges (a split). ``doc-count`` (one processor per member) sees every entry through the
  distributed broadcast edge and emits the number of documents D; the local broadcast edge into ``tf-idf``
  has priority -1, so ``tf-idf`` knows D before its first TF entry arrives.
- ``stopword-source`` (one processor) reads the stopword file and emits the set in ``complete()``; it reaches
  every ``tf`` processor before any document does (broadcast, priority -1).
- ``tf`` (non-cooperative: it does blocking file I/O) reads each document whole, lower-cases it, splits it
  with one regex call, counts the words and emits ``(word, (doc_id, tf))`` for every word that is not a
  stopword: one item per distinct word of a document, not one per occurrence.
- ``tf-idf`` (a join of D and the TF entries) gets every entry of a word, since the edge is partitioned by
  word, and replaces each TF with ``tf * (ln D - ln df)``, df being the number of documents that contain the
  word. The sink writes ``word -> [(doc_id, score), ...]`` to the driver-side map ``index``.

The manual splits ``tf`` into ``doc-lines -> tokenize -> tf``: a ``(doc_id, line)`` item per line, a
``(doc_id, word)`` item per word, counted after a shuffle by ``(doc_id, word)``, then shuffled again by word.
All of a document's words come from one processor, so counting them there is exact and saves that shuffle and
most of the items; ``bench/manual_dags.py`` keeps the manual's shape for comparison (``bench/README.md``).

Tokens are those of word count (lower-cased, split on ASCII ``\\W+``); files are read as UTF-8 without BOM.

:func:`search` answers a phrase as the manual describes: stopwords dropped, the documents that contain every
remaining word, each scored by the sum of the words' TF-IDF scores, best first.

Run it::

    python examples/tf_idf.py --search "the man in the black suit murdered the king"
    python examples/tf_idf.py --books ../shared/data/books --stopwords ../shared/data/stopwords.txt --interactive
    jetspark run examples/tf_idf.py --search "madame defarge"
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from corpus import BOOKS, STOPWORDS, document_paths, read_stopwords, undecodable
from dag import DAG
from edges import Partitioner, between, from_
from jetspark_cli.spec import JobSpec
from processors import (
    AbstractProcessor,
    aggregate_p,
    counting,
    entry,
    entry_key,
    lazy,
    read_map_p,
    traverse_iterable,
    write_map_p,
)

DOCS_MAP = "docs"
"""Driver-side map read by ``doc-source``: document id -> file path."""
INDEX_MAP = "index"
"""Driver-side map written by ``sink``: word -> [(doc_id, tf-idf score), ...]."""

_words = re.compile(r"\w+", re.ASCII).findall

Index = Mapping[str, list[tuple[int, float]]]


# ----------------------------------------------------------------------------------------------- processors


class StopwordsP(AbstractProcessor):
    """A source of one item, the stopword set read from ``path``, emitted in ``complete()``."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self._path = path
        self._stopwords: frozenset[str] | None = None

    def complete(self) -> bool:
        if self._stopwords is None:
            self._stopwords = read_stopwords(self._path)
        return self.try_emit(self._stopwords)


def read_document(path: str) -> str:
    """The text of the file at ``path`` (UTF-8, BOM stripped); a clear error naming the file when it is not UTF-8."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read()
    except UnicodeDecodeError as exc:
        raise ValueError(undecodable(path, exc)) from None


class TfP(AbstractProcessor):
    """Ordinal 0: the stopword set (arrives first). Ordinal 1: a document ``(doc_id, path)`` -> a
    ``(word, (doc_id, tf))`` entry for each distinct word of the document that is not a stopword."""

    def __init__(self) -> None:
        super().__init__()
        self._stopwords: frozenset[str] = frozenset()
        self._flat_mapper = self.flat_mapper(self._term_frequencies)

    def is_cooperative(self) -> bool:
        return False  # it reads files

    def _term_frequencies(self, doc: tuple[int, str]) -> list[tuple[str, tuple[int, int]]]:
        doc_id, path = doc
        stopwords = self._stopwords
        counts = Counter(_words(read_document(path).lower()))
        return [(word, (doc_id, tf)) for word, tf in counts.items() if word not in stopwords]

    def try_process0(self, item: frozenset[str]) -> bool:
        self._stopwords = item
        return True

    def try_process1(self, item: tuple[int, str]) -> bool:
        return self._flat_mapper.try_process(item)


class TfIdfP(AbstractProcessor):
    """Ordinal 0: the document count D (arrives first). Ordinal 1: ``(word, (doc_id, tf))`` entries.

    Groups the entries by word and, in ``complete()``, emits ``(word, [(doc_id, tf * (ln D - ln df)), ...])``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._log_doc_count = 0.0
        self._word_doc_tf: dict[str, list[tuple[int, int]]] = {}
        self._index = lazy(lambda: traverse_iterable(self._word_doc_tf.items()).map(self._to_index_entry))

    def try_process0(self, item: int) -> bool:
        self._log_doc_count = math.log(item)
        return True

    def try_process1(self, item: tuple[str, tuple[int, int]]) -> bool:
        word, posting = item
        postings = self._word_doc_tf.get(word)
        if postings is None:
            self._word_doc_tf[word] = [posting]
        else:
            postings.append(posting)
        return True

    def complete(self) -> bool:
        return self.emit_from_traverser(self._index)

    def _to_index_entry(self, word_postings: tuple[str, list[tuple[int, int]]]) -> tuple[str, list[tuple[int, float]]]:
        word, postings = word_postings
        idf = self._log_doc_count - math.log(len(postings))
        return entry(word, [(doc_id, tf * idf) for doc_id, tf in postings])


# ------------------------------------------------------------------------------------------------------ DAG


def build_dag(stopwords: str | Path = STOPWORDS) -> DAG:
    """The TF-IDF DAG: reads ``docs`` (doc id -> path) and the stopword file, writes ``index``."""
    stopwords_path = str(Path(stopwords).resolve())
    dag = DAG()
    stopword_source = dag.new_vertex("stopword-source", lambda: StopwordsP(stopwords_path), local_parallelism=1)
    doc_source = dag.new_vertex("doc-source", read_map_p(DOCS_MAP))
    doc_count = dag.new_vertex("doc-count", aggregate_p(counting()), local_parallelism=1)
    tf = dag.new_vertex("tf", TfP)
    tf_idf = dag.new_vertex("tf-idf", TfIdfP)
    sink = dag.new_vertex("sink", write_map_p(INDEX_MAP))
    return (
        dag.edge(between(stopword_source, tf).broadcast().priority(-1))
        .edge(between(doc_source, doc_count).distributed().broadcast())
        .edge(from_(doc_source, 1).to(tf, 1))
        .edge(between(doc_count, tf_idf).broadcast().priority(-1))
        .edge(from_(tf).to(tf_idf, 1).distributed().partitioned(entry_key, Partitioner.HASH_CODE))
        .edge(between(tf_idf, sink))
    )


def prepare(engine, books: str | Path | dict[int, str] = BOOKS) -> None:
    """Fill ``docs`` with the documents of ``books`` (a directory or a ``document_paths`` result); empty ``index``."""
    docs = engine.get_map(DOCS_MAP)
    docs.clear()
    docs.update(books if isinstance(books, dict) else document_paths(books))
    engine.get_map(INDEX_MAP).clear()


def build_index(engine, books: str | Path = BOOKS, stopwords: str | Path = STOPWORDS) -> dict[str, list]:
    """Run the TF-IDF job with ``engine`` and return the index ``{word: [(doc_id, score), ...]}``."""
    prepare(engine, books)
    engine.new_job(build_dag(stopwords)).join()
    return dict(engine.get_map(INDEX_MAP))


# --------------------------------------------------------------------------------------------------- search


def search(index: Index, stopwords: frozenset[str], phrase: str) -> list[tuple[int, float]]:
    """Documents that contain every word of ``phrase`` (stopwords dropped), as ``(doc_id, score)`` pairs,
    best first (ties: lower id). The score is the sum of the words' TF-IDF scores in the document.

    >>> idx = {"king": [(1, 2.0), (2, 0.5)], "suit": [(2, 1.0), (3, 4.0)]}
    >>> search(idx, frozenset({"the"}), "The king's suit")
    [(2, 1.5)]
    """
    terms = dict.fromkeys(word for word in _words(phrase.lower()) if word not in stopwords)
    scores: dict[int, float] | None = None
    for term in terms:
        postings = dict(index.get(term, ()))
        if scores is None:
            scores = postings
        else:
            scores = {doc_id: score + postings[doc_id] for doc_id, score in scores.items() if doc_id in postings}
        if not scores:
            return []
    return sorted((scores or {}).items(), key=lambda e: (-e[1], e[0]))


def print_results(results: list[tuple[int, float]], docs: Mapping[int, str], limit: int = 10, out=None) -> None:
    """Print the best ``limit`` results with their file names."""
    out = out or sys.stdout
    if not results:
        print("  no document contains all the words", file=out)
    for doc_id, score in results[:limit]:
        print(f"  {score:12.3f}  {Path(docs[doc_id]).name}", file=out)


def interact(index: Index, stopwords: frozenset[str], docs: Mapping[int, str]) -> None:
    """Read phrases from standard input until end of input or an empty line; print the best documents."""
    print("Enter a phrase to search (an empty line or end of input quits).")
    while True:
        try:
            line = input("search> ")
        except EOFError:
            break
        if not line.strip():
            break
        print_results(search(index, stopwords, line), docs)


def report(engine, stopwords: str | Path = STOPWORDS, phrase: str | None = None, interactive: bool = False) -> None:
    """Print the index summary, then the results for ``phrase`` and/or the interactive prompt."""
    index = engine.get_map(INDEX_MAP)
    docs = dict(engine.get_map(DOCS_MAP))
    stop = read_stopwords(stopwords)
    total = math.fsum(score for postings in index.values() for _, score in postings)
    print(f"Indexed {len(docs)} documents: {len(index):,} words, score sum {total:,.3f}.")
    if phrase:
        print(f"Search {phrase!r}:")
        print_results(search(index, stop, phrase), docs)
    if interactive:
        interact(index, stop, docs)


def job(
    books: str = str(BOOKS), stopwords: str = str(STOPWORDS), search: str = "", interactive: bool = False
) -> JobSpec:
    """The ``jetspark`` entry point:
    ``jetspark run examples/tf_idf.py [--books DIR] [--stopwords FILE] [--search PHRASE] [--interactive]``."""
    phrase = search
    docs = document_paths(books)  # these two fail here, before Spark starts, when a path is wrong
    read_stopwords(stopwords)
    return JobSpec(
        build_dag(stopwords),
        prepare=lambda engine: prepare(engine, docs),
        report=lambda engine, _job: report(engine, stopwords, phrase, interactive),
        name="tf-idf",
    )


def main(argv: list[str] | None = None) -> int:
    """``python examples/tf_idf.py [--books DIR] [--stopwords FILE] [--search PHRASE] [--interactive]``."""
    parser = argparse.ArgumentParser(description="Build the TF-IDF inverted index of a directory of books and search it.")
    parser.add_argument("--books", default=str(BOOKS), help="directory of UTF-8 text files (default: the sample)")
    parser.add_argument("--stopwords", default=str(STOPWORDS), help="stopword file, one word a line")
    parser.add_argument("--search", default="", metavar="PHRASE", help="print the best documents for PHRASE")
    parser.add_argument("--interactive", action="store_true", help="then read phrases from the terminal")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default: local[*])")
    parser.add_argument("--progress", action="store_true", help="show a progress line per Spark stage")
    args = parser.parse_args(argv)

    from dag import Engine, EngineConfig

    with Engine(EngineConfig(master=args.master, progress=args.progress)) as engine:
        build_index(engine, args.books, args.stopwords)
        report(engine, args.stopwords, args.search, args.interactive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
