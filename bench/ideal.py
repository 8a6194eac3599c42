"""Ideal executors: the yardstick of engine overhead for a given DAG.

An ideal executor runs exactly the computation a DAG describes, with the DAG's own user code, but without any
engine: the user's functions and processor methods are called in plain loops (no inbox, outbox, traverser,
driver, metrics or lifecycle bookkeeping), with the same Spark shuffles the plan needs (one per partitioned
edge, each pre-aggregated on the sending side as jetspark does) and results collected to the driver. It is
the floor for that DAG on Spark: ``jetspark / ideal`` is what the engine costs, while ``ideal / hand-tuned``
is what the DAG as written costs (a tuple per word, a second shuffle ...).

Unicast edges between vertices of different local parallelism are in-memory queues in Jet, not shuffles,
so an ideal executor runs every vertex in the ``P = sc.defaultParallelism`` partitions of the documents.

- :func:`word_count`: documents -> ``doc_lines`` -> ``tokenize`` -> per-partition counts -> one shuffle by
  word (summing) -> driver dict. Used for the example's DAG and the manual's (each with its own functions).
- :func:`tf_idf`: the example's DAG: documents -> the ``tf`` processor's flat-mapping function (one
  ``(word, (doc_id, tf))`` entry per distinct word of a document) -> one shuffle by word -> the ``tf-idf``
  processor's ``try_process*`` and its index-entry function -> driver dict.
- :func:`tf_idf_manual`: the manual's DAG: documents -> ``doc_lines`` -> the ``TokenizeP`` processor's
  flat-mapping function -> per-partition ``(doc_id, word)`` counts -> shuffle by pair (tf) -> shuffle by word ->
  ``TfIdfP.try_process*`` and its index-entry function -> driver dict.
"""

from __future__ import annotations

from collections import _count_elements  # type: ignore[attr-defined]  # C helper behind Counter.update
from collections.abc import Callable, Iterable, Iterator
from operator import add
from typing import Any

from baselines import _balanced

__all__ = ["word_count", "tf_idf", "tf_idf_manual"]


def _slices(docs: dict[int, str], p: int) -> list[list[tuple[int, str]]]:
    """The documents in ``p`` slices balanced by file size, as the hand-tuned job does (``baselines._balanced``),
    since jetspark deals ``read_map_p`` entries on demand (``dag/runtime/staged/dealer.py``): contiguous equal-count
    slices here would count jetspark's balancing as engine overhead saved."""
    return _balanced(list(docs.items()), p)


def word_count(sc: Any, docs: dict[int, str], doc_lines: Callable, tokenize: Callable) -> dict[str, int]:
    """Word count with the DAG's ``doc_lines(doc) -> lines`` and ``tokenize(line) -> words``."""
    p = sc.defaultParallelism

    def count(slices: Iterable[list[tuple[int, str]]]) -> Iterator[tuple[str, int]]:
        counts: dict[str, int] = {}
        for slice_ in slices:
            for doc in slice_:
                for line in doc_lines(doc):
                    _count_elements(counts, tokenize(line))
        return iter(counts.items())

    return sc.parallelize(_slices(docs, p), p).mapPartitions(count).reduceByKey(add, p).collectAsMap()


def tf_idf(sc: Any, docs: dict[int, str], stopwords: frozenset[str], tf_class: type,
           tf_idf_class: type) -> dict[str, list]:
    """TF-IDF with the example DAG's ``tf`` and ``tf-idf`` processors.

    The ``tf`` processor gets the stopwords through ``try_process0`` and its flat-mapping function (the one its
    ``FlatMapper`` wraps, ``_term_frequencies``) is called per document; the ``tf-idf`` processor gets the
    document count through ``try_process0`` and every entry through ``try_process1``, and its index entries
    come from its own ``_to_index_entry``.
    """
    p = sc.defaultParallelism
    doc_count = len(docs)

    def term_frequencies(slices: Iterable[list[tuple[int, str]]]) -> Iterator[tuple[str, tuple[int, int]]]:
        processor = tf_class()
        processor.try_process0(stopwords)
        entries = processor._term_frequencies
        for slice_ in slices:
            for doc in slice_:
                yield from entries(doc)

    def index(entries: Iterable[tuple[str, tuple[int, int]]]) -> Iterator[tuple[str, list]]:
        processor = tf_idf_class()
        processor.try_process0(doc_count)
        accept = processor.try_process1
        for tf_entry in entries:
            accept(tf_entry)
        return map(processor._to_index_entry, processor._word_doc_tf.items())

    return (
        sc.parallelize(_slices(docs, p), p)
        .mapPartitions(term_frequencies)
        .partitionBy(p)                            # tf -> tf-idf: partitioned by word
        .mapPartitions(index)
        .collectAsMap()
    )


def tf_idf_manual(sc: Any, docs: dict[int, str], stopwords: frozenset[str], doc_lines: Callable,
                  tokenizer_class: type, tf_idf_class: type) -> dict[str, list]:
    """TF-IDF with the DAG's ``doc_lines(ctx, doc)``, tokenizer processor and TF-IDF processor.

    The tokenizer's flat-mapping function is the one its ``FlatMapper`` wraps (``_doc_words``); the TF-IDF
    processor gets the document count through ``try_process0`` and every TF entry through ``try_process1``,
    and its index entries come from its own ``_to_index_entry``.
    """
    p = sc.defaultParallelism
    doc_count = len(docs)

    def tf_counts(slices: Iterable[list[tuple[int, str]]]) -> Iterator[tuple[tuple[int, str], int]]:
        tokenizer = tokenizer_class()
        tokenizer.try_process0(stopwords)
        words = tokenizer._doc_words
        counts: dict[tuple[int, str], int] = {}
        for slice_ in slices:
            for doc in slice_:
                for item in doc_lines(None, doc):
                    _count_elements(counts, words(item))
        return iter(counts.items())

    def index(entries: Iterable[tuple[str, tuple[tuple[int, str], int]]]) -> Iterator[tuple[str, list]]:
        processor = tf_idf_class()
        processor.try_process0(doc_count)
        accept = processor.try_process1
        for _, tf_entry in entries:
            accept(tf_entry)
        return map(processor._to_index_entry, processor._word_doc_tf.items())

    return (
        sc.parallelize(_slices(docs, p), p)
        .mapPartitions(tf_counts)
        .reduceByKey(add, p)                       # tokenize -> tf: partitioned by (doc_id, word), pre-aggregated
        .map(lambda e: (e[0][1], e))
        .partitionBy(p)                            # tf -> tf-idf: partitioned by word
        .mapPartitions(index)
        .collectAsMap()
    )
