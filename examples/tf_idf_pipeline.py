"""The TF-IDF index with the Pipeline API (the shape of Jet's pipeline TF-IDF sample), for comparison with the
hand-written Core DAG of ``tf_idf.py``; same index, same ``search``.

::

    docs      = p.read_from(Sources.map("docs"))                        # doc id -> path
    doc_count = docs.aggregate(counting())                               # D
    stopwords = p.read_from(Sources.batch_from_processor("stopwords", ...))   # one item: the stopword set
    words     = (docs.flat_map(doc_lines)                                # (doc id, line)
                 .hash_join(stopwords, on_keys(const, const), ...)       # each line meets the stopword set
                 .flat_map(doc_words))                                   # (doc id, word), stopwords dropped
    tf        = words.grouping_key(whole_item).aggregate(counting())     # ((doc id, word), tf)
    index     = (tf.hash_join(doc_count, on_keys(const, const), ...)      # (((doc id, word), tf), D)
                 .grouping_key(word).aggregate(to_list())                # word -> [((doc, word), tf), D), ...]
                 .map(to_index_entry))                                   # word -> [(doc id, tf-idf), ...]
    index.write_to(Sinks.map("index"))

This is the manual's shape, a ``(doc id, word)`` item per word counted after a shuffle; the Core DAG of
``tf_idf.py`` counts each document's words where it reads them and gets the stopwords and D on prioritised
broadcast edges instead of through hash-joins; ``bench/bench_pipeline.py`` measures the difference.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from corpus import BOOKS
from pipeline import BatchSource, JoinClause, Pipeline, Sinks, Sources
from processors import ProcessorMetaSupplier, counting, to_list, whole_item
from tf_idf import DOCS_MAP, INDEX_MAP, STOPWORDS, StopwordsP, prepare, read_document

_words = re.compile(r"\w+", re.ASCII).findall


def _constant(_item: object) -> int:
    return 0


def _stopwords_source(path: str) -> BatchSource:
    return Sources.batch_from_processor(
        "stopwords", ProcessorMetaSupplier.force_total_parallelism_one(lambda: StopwordsP(path)))


def _doc_lines(doc: tuple[int, str]) -> list[tuple[int, str]]:
    doc_id, path = doc
    return [(doc_id, line) for line in read_document(path).splitlines()]


def doc_words(line_and_stopwords: tuple[tuple[int, str], frozenset[str]]) -> list[tuple[int, str]]:
    """``(doc_id, word)`` for the words of the line that are not stopwords."""
    (doc_id, line), stopwords = line_and_stopwords
    return [(doc_id, word) for word in _words(line.lower()) if word not in stopwords]


def to_index_entry(entry: tuple[str, list]) -> tuple[str, list[tuple[int, float]]]:
    """``(word, [(((doc_id, word), tf), D), ...])`` -> ``(word, [(doc_id, tf * (ln D - ln df)), ...])``."""
    word, postings = entry
    idf = math.log(postings[0][1]) - math.log(len(postings))
    return word, [(doc_id, tf * idf) for ((doc_id, _), tf), _ in postings]


def build_pipeline(stopwords: str | Path = STOPWORDS) -> Pipeline:
    """The TF-IDF pipeline: reads ``docs`` (doc id -> path) and the stopword file, writes ``index``."""
    p = Pipeline.create()
    docs = p.read_from(Sources.map(DOCS_MAP))
    doc_count = docs.aggregate(counting())
    stopword_set = p.read_from(_stopwords_source(str(Path(stopwords).resolve())))
    words = (docs.flat_map(_doc_lines)
             .hash_join(stopword_set, JoinClause.on_keys(_constant, _constant), lambda line, sw: (line, sw))
             .flat_map(doc_words))
    tf = words.grouping_key(whole_item).aggregate(counting())
    (tf.hash_join(doc_count, JoinClause.on_keys(_constant, _constant), lambda e, n: (e, n))
     .grouping_key(lambda t: t[0][0][1]).aggregate(to_list())
     .map(to_index_entry)
     .write_to(Sinks.map(INDEX_MAP)))
    return p


def build_index(engine, books: str | Path = BOOKS, stopwords: str | Path = STOPWORDS) -> dict[str, list]:
    """Run the pipeline with ``engine``; returns ``{word: [(doc_id, score), ...]}``."""
    prepare(engine, books)
    engine.new_job(build_pipeline(stopwords)).join()
    return dict(engine.get_map(INDEX_MAP))


def job(books: str = str(BOOKS), stopwords: str = str(STOPWORDS)):
    """``jetspark run examples/tf_idf_pipeline.py [--books DIR] [--stopwords FILE]``: the pipeline, with ``docs``
    filled from ``books`` in ``prepare``; prints how many words the index holds."""
    from jetspark_cli.spec import JobSpec

    return JobSpec(build_pipeline(stopwords), prepare=lambda engine: prepare(engine, books), name="tf-idf-pipeline",
                   report=lambda engine, _job: print(f"{len(engine.get_map(INDEX_MAP)):,} words indexed"))
