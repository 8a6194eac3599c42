"""The Jet manual's word count and TF-IDF DAGs as a user ports them (section 8.2 and Jet's code samples).

They differ from the project's examples (``examples/word_count.py``, ``examples/tf_idf.py``) where the manual
does, because users write them that way:

- word count: ``source`` (``read_map_p``) at local parallelism 1; ``doc-lines`` emits the raw lines and
  ``tokenize`` lower-cases each line before splitting it (Java: ``delimiter.split(line.toLowerCase())``);
- TF-IDF: the manual's ``doc-source -> doc-lines -> tokenize -> tf -> tf-idf`` (the example counts each
  document's words in one ``tf`` vertex instead), ``doc-source`` and ``doc-lines`` at local parallelism 1
  (besides ``stopword-source`` and ``doc-count``), ``doc-lines`` a non-cooperative
  ``flat_map_using_context_p``, ``tokenize`` an ``AbstractProcessor`` with a ``FlatMapper`` emitting
  ``(doc_id, word)`` tuples (:class:`TokenizeP`), ``tf`` counting the pairs after a shuffle by pair and
  ``tf-idf`` (:class:`TfIdfP`) grouping the ``((doc_id, word), tf)`` entries after a shuffle by word.

Both read the driver-side map ``docs`` and write ``counts`` / ``index`` exactly as the examples do, so the
benchmark checks them against the same reference results.

Other writings of the TF-IDF DAG users write (issue 22), ``tf_idf_dag(stopwords, writing)``, the same results:

- ``"context"`` (the default, above): ``doc-lines`` a ``flat_map_using_context_p``, ``tokenize`` with a
  ``FlatMapper``, ``tf`` one ``aggregate_by_key_p``;
- ``"flat-map"``: ``doc-lines`` a plain ``flat_map_p`` (cooperative, local parallelism 1);
- ``"traverser"``: ``flat_map_p`` doc-lines and a tokenizer that makes a traverser per line and emits it with
  ``emit_from_traverser`` (:class:`TraverserTokenizeP`);
- ``"two-stage-tf"``: the default with ``tf`` as ``accumulate_by_key_p`` -> ``combine_by_key_p`` (a local
  partitioned edge between them).
"""

from __future__ import annotations

import re
from pathlib import Path

import tf_idf
import word_count
from dag import DAG
from edges import Partitioner, between, from_
from processors import (
    AbstractProcessor,
    ContextFactory,
    accumulate_by_key_p,
    aggregate_by_key_p,
    aggregate_p,
    combine_by_key_p,
    counting,
    entry,
    entry_key,
    flat_map_p,
    flat_map_using_context_p,
    read_map_p,
    traverse_iterable,
    whole_item,
    write_map_p,
)

__all__ = ["word_count_dag", "tf_idf_dag", "count_words", "build_index", "doc_lines", "tokenize", "doc_lines_of",
           "doc_lines_plain", "TokenizeP", "TraverserTokenizeP", "TfIdfP", "TF_IDF_WRITINGS"]

_WORDS = re.compile(r"\w+", re.ASCII).findall


def doc_lines(doc: tuple[int, str]) -> list[str]:
    """The lines of the document ``(doc_id, path)`` as they are in the file (UTF-8, BOM stripped)."""
    with open(doc[1], encoding="utf-8-sig") as f:
        return f.read().splitlines()


def tokenize(line: str) -> list[str]:
    """The manual's tokenizer: the line lower-cased and split on ``\\W+``, empty pieces dropped."""
    return _WORDS(line.lower())


def doc_lines_of(_context: None, doc: tuple[int, str]) -> list[tuple[int, str]]:
    """TF-IDF's ``doc-lines``: ``(doc_id, line)`` for every line of the document ``(doc_id, path)``."""
    doc_id, path = doc
    return [(doc_id, line) for line in tf_idf.read_document(path).splitlines()]


class TokenizeP(AbstractProcessor):
    """Ordinal 0: the stopword set (arrives first). Ordinal 1: ``(doc_id, line)`` -> ``(doc_id, word)`` items."""

    def __init__(self) -> None:
        super().__init__()
        self._stopwords: frozenset[str] = frozenset()
        self._flat_mapper = self.flat_mapper(self._doc_words)

    def _doc_words(self, item: tuple[int, str]) -> list[tuple[int, str]]:
        doc_id, line = item
        stopwords = self._stopwords
        return [(doc_id, word) for word in _WORDS(line.lower()) if word not in stopwords]

    def try_process0(self, item: frozenset[str]) -> bool:
        self._stopwords = item
        return True

    def try_process1(self, item: tuple[int, str]) -> bool:
        return self._flat_mapper.try_process(item)


def doc_lines_plain(doc: tuple[int, str]) -> list[tuple[int, str]]:
    """``doc-lines`` for ``flat_map_p``: :func:`doc_lines_of` without the context argument."""
    return doc_lines_of(None, doc)


class TraverserTokenizeP(TokenizeP):
    """``TokenizeP`` as a user writes it without a ``FlatMapper``: a traverser over each line's words, emitted
    with ``emit_from_traverser`` (resumed on the next call when the outbox is full)."""

    def __init__(self) -> None:
        super().__init__()
        self._words = None

    def try_process1(self, item: tuple[int, str]) -> bool:
        if self._words is None:
            self._words = traverse_iterable(self._doc_words(item))
        if not self.emit_from_traverser(self._words):
            return False
        self._words = None
        return True


class TfIdfP(tf_idf.TfIdfP):
    """The example's ``TfIdfP`` (``examples/tf_idf.py``) on the manual's ``tf`` output: ordinal 1 takes
    ``((doc_id, word), tf)`` entries instead of ``(word, (doc_id, tf))``.

    Groups the entries by word and, in ``complete()``, emits ``(word, [(doc_id, tf * (ln D - ln df)), ...])``.
    """

    def try_process1(self, item: tuple[tuple[int, str], int]) -> bool:
        (doc_id, word), tf = item
        postings = self._word_doc_tf.get(word)
        if postings is None:
            self._word_doc_tf[word] = [(doc_id, tf)]
        else:
            postings.append((doc_id, tf))
        return True


def word_count_dag() -> DAG:
    """Word count as the manual writes it (source at local parallelism 1)."""
    dag = DAG()
    source = dag.new_vertex("source", read_map_p(word_count.DOCS_MAP), local_parallelism=1)
    lines = dag.new_vertex("doc-lines", flat_map_p(doc_lines))
    words = dag.new_vertex("tokenize", flat_map_p(tokenize))
    accumulate = dag.new_vertex("accumulate", accumulate_by_key_p([whole_item], counting()))
    combine = dag.new_vertex("combine", combine_by_key_p(counting()))
    sink = dag.new_vertex("sink", write_map_p(word_count.COUNTS_MAP))
    return (
        dag.edge(between(source, lines))
        .edge(between(lines, words))
        .edge(between(words, accumulate).partitioned(whole_item, Partitioner.HASH_CODE))
        .edge(between(accumulate, combine).distributed().partitioned(entry_key))
        .edge(between(combine, sink))
    )


TF_IDF_WRITINGS = ("context", "flat-map", "traverser", "two-stage-tf")


def tf_idf_dag(stopwords: str | Path, writing: str = "context") -> DAG:
    """TF-IDF as the manual writes it (doc-source, doc-lines, doc-count, stopword-source at parallelism 1), in
    one of :data:`TF_IDF_WRITINGS` (see the module docstring)."""
    if writing not in TF_IDF_WRITINGS:
        raise ValueError(f"unknown TF-IDF writing {writing!r}; choose from {', '.join(TF_IDF_WRITINGS)}")
    stopwords_path = str(Path(stopwords).resolve())
    dag = DAG()
    stopword_source = dag.new_vertex("stopword-source", lambda: tf_idf.StopwordsP(stopwords_path),
                                     local_parallelism=1)
    doc_source = dag.new_vertex("doc-source", read_map_p(tf_idf.DOCS_MAP), local_parallelism=1)
    doc_count = dag.new_vertex("doc-count", aggregate_p(counting()), local_parallelism=1)
    if writing in ("flat-map", "traverser"):
        lines = dag.new_vertex("doc-lines", flat_map_p(doc_lines_plain), local_parallelism=1)
    else:
        lines = dag.new_vertex(
            "doc-lines",
            flat_map_using_context_p(ContextFactory.with_create_fn(lambda: None).non_cooperative(), doc_lines_of),
            local_parallelism=1,
        )
    tokenizer = dag.new_vertex("tokenize", TraverserTokenizeP if writing == "traverser" else TokenizeP)
    if writing == "two-stage-tf":
        tf_in = dag.new_vertex("tf-accumulate", accumulate_by_key_p([whole_item], counting()))
        tf = dag.new_vertex("tf", combine_by_key_p(counting(), entry))
        dag.edge(between(tf_in, tf).partitioned(entry_key, Partitioner.HASH_CODE))
    else:
        tf_in = tf = dag.new_vertex("tf", aggregate_by_key_p([whole_item], counting(), entry))
    scores = dag.new_vertex("tf-idf", TfIdfP)
    sink = dag.new_vertex("sink", write_map_p(tf_idf.INDEX_MAP))
    return (
        dag.edge(between(stopword_source, tokenizer).broadcast().priority(-1))
        .edge(between(doc_source, doc_count).distributed().broadcast())
        .edge(from_(doc_source, 1).to(lines))
        .edge(from_(lines).to(tokenizer, 1))
        .edge(between(tokenizer, tf_in).partitioned(whole_item, Partitioner.HASH_CODE))
        .edge(between(doc_count, scores).broadcast().priority(-1))
        .edge(from_(tf).to(scores, 1).distributed().partitioned(lambda e: e[0][1], Partitioner.HASH_CODE))
        .edge(between(scores, sink))
    )


def count_words(engine, books: str | Path) -> dict[str, int]:
    """Run the manual's word count on ``books``; ``{word: count}``."""
    word_count.prepare(engine, books)
    engine.new_job(word_count_dag()).join()
    return dict(engine.get_map(word_count.COUNTS_MAP))


def build_index(engine, books: str | Path, stopwords: str | Path, writing: str = "context") -> dict[str, list]:
    """Run the manual's TF-IDF (in ``writing``) on ``books``; ``{word: [(doc_id, score), ...]}``."""
    tf_idf.prepare(engine, books)
    engine.new_job(tf_idf_dag(stopwords, writing)).join()
    return dict(engine.get_map(tf_idf.INDEX_MAP))
