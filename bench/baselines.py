"""Hand-written baselines for the benchmark: word count and the TF-IDF inverted index without jetspark.

Three kinds, each for both jobs (the yardsticks of ``../shared/docs/design.md``):

- single-threaded Python: ``collections.Counter`` and a tight dict loop;
- Dask bag (word count only, optional): ``read_text``/``map``/``flatten``/``frequencies`` on processes;
- PySpark RDD *as usually written*: word count with ``textFile``/``flatMap``/``map``/``reduceByKey``;
  TF-IDF with ``wholeTextFiles``, ``reduceByKey`` for TF and ``groupByKey`` by word for the scores;
- PySpark RDD *hand-tuned*: files read whole inside the tasks (size-balanced over the tasks), tokenising and
  counting fused in one pass per file, exactly one shuffle (by word).

Every function returns its result on the driver, as jetspark's ``write_map_p`` sink does:
word count a ``{word: count}`` dict, TF-IDF a ``{word: [(doc_id, score), ...]}`` dict. Tokens are
lower-cased lines split on ASCII ``\\W+`` with empty pieces dropped, which is what ``\\w+`` finds
(``findall`` is the fastest way to say it); ids are the 1-based rank of the file name in sorted order;
``idf = ln(D) - ln(df)``.

>>> sorted(word_count_counter("examples/data/books").items())[:1]  # doctest: +SKIP
[('0', 1)]
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from operator import add
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

if TYPE_CHECKING:  # pragma: no cover
    from pyspark import SparkContext

WordCounts = dict[str, int]
Index = dict[str, list[tuple[int, float]]]

_WORDS = re.compile(r"\w+", re.ASCII).findall


def documents(books: str | Path) -> list[tuple[int, str]]:
    """``[(doc_id, path), ...]`` for the files of ``books``, ids 1.. in sorted file-name order."""
    names = sorted(p.name for p in Path(books).iterdir() if p.is_file())
    return [(doc_id, str(Path(books) / name)) for doc_id, name in enumerate(names, start=1)]


def read_stopwords(path: str | Path) -> frozenset[str]:
    """One word a line."""
    with open(path, encoding="utf-8-sig") as f:
        return frozenset(f.read().splitlines())


def _balanced(docs: list[tuple[int, str]], slices: int) -> list[list[tuple[int, str]]]:
    """Longest-processing-time-first assignment of files to ``slices`` bins by file size."""
    bins: list[tuple[int, int, list[tuple[int, str]]]] = [(0, i, []) for i in range(slices)]
    for doc in sorted(docs, key=lambda d: -Path(d[1]).stat().st_size):
        size, i, members = heapq.heappop(bins)
        members.append(doc)
        heapq.heappush(bins, (size + Path(doc[1]).stat().st_size, i, members))
    return [members for _, _, members in sorted(bins, key=lambda b: b[1])]


# --------------------------------------------------------------------------------------------- word count


def word_count_counter(books: str | Path) -> WordCounts:
    """Single-threaded: one ``Counter`` fed line by line."""
    counts: Counter[str] = Counter()
    for _, path in documents(books):
        with open(path, encoding="utf-8-sig") as f:
            for line in f:
                counts.update(_WORDS(line.lower()))
    return dict(counts)


def word_count_loop(books: str | Path) -> WordCounts:
    """Single-threaded: a tight ``dict.get`` loop."""
    counts: WordCounts = {}
    get = counts.get
    for _, path in documents(books):
        with open(path, encoding="utf-8-sig") as f:
            for line in f:
                for word in _WORDS(line.lower()):
                    counts[word] = get(word, 0) + 1
    return counts


def word_count_dask(books: str | Path, workers: int = 2) -> WordCounts:
    """Dask bag as usually written: ``read_text`` (a partition per file), lower-case, tokenise, ``flatten``,
    ``frequencies``, on the multiprocessing scheduler with ``workers`` processes (as ``local[workers]``).
    Needs ``dask[bag]`` (the ``bench`` extra)."""
    import dask.bag as db

    paths = [path for _, path in documents(books)]
    words = db.read_text(paths, encoding="utf-8-sig").map(str.lower).map(_WORDS).flatten()
    return dict(words.frequencies().compute(scheduler="processes", num_workers=workers))


def word_count_pyspark_usual(sc: SparkContext, books: str | Path) -> WordCounts:
    """PySpark as usually written: ``textFile``, ``flatMap``, ``map``, ``reduceByKey``."""
    return (
        sc.textFile(str(books))
        .flatMap(lambda line: re.split(r"\W+", line.lower(), flags=re.ASCII))
        .filter(lambda word: word != "")
        .map(lambda word: (word, 1))
        .reduceByKey(add)
        .collectAsMap()
    )


def _count_partition(docs: Iterable[list[tuple[int, str]]]) -> Iterator[tuple[str, int]]:
    counts: Counter[str] = Counter()
    for bin_ in docs:
        for _, path in bin_:
            with open(path, encoding="utf-8-sig") as f:
                counts.update(_WORDS(f.read().lower()))
    return iter(counts.items())


def word_count_pyspark_tuned(sc: SparkContext, books: str | Path) -> WordCounts:
    """Hand-tuned PySpark: files read in the tasks, tokenise and count fused, one shuffle."""
    slices = sc.defaultParallelism
    return (
        sc.parallelize(_balanced(documents(books), slices), slices)
        .mapPartitions(_count_partition)
        .reduceByKey(add, slices)
        .collectAsMap()
    )


# ------------------------------------------------------------------------------------------------- TF-IDF


def _scores(postings: list[tuple[int, int]], log_doc_count: float) -> list[tuple[int, float]]:
    idf = log_doc_count - math.log(len(postings))
    return [(doc_id, tf * idf) for doc_id, tf in postings]


def tf_idf_python(books: str | Path, stopwords: frozenset[str]) -> Index:
    """Single-threaded: a ``Counter`` per document, postings grouped by word, then scored."""
    docs = documents(books)
    postings: dict[str, list[tuple[int, int]]] = {}
    for doc_id, path in docs:
        with open(path, encoding="utf-8-sig") as f:
            counts = Counter(_WORDS(f.read().lower()))
        for word, tf in counts.items():
            if word not in stopwords:
                if word in postings:
                    postings[word].append((doc_id, tf))
                else:
                    postings[word] = [(doc_id, tf)]
    log_doc_count = math.log(len(docs))
    return {word: _scores(p, log_doc_count) for word, p in postings.items()}


def tf_idf_pyspark_usual(sc: SparkContext, books: str | Path, stopwords: frozenset[str]) -> Index:
    """PySpark as usually written: ``wholeTextFiles``, ``reduceByKey`` for TF, ``groupByKey`` by word."""
    doc_ids = {Path(path).name: doc_id for doc_id, path in documents(books)}
    stop = sc.broadcast(stopwords)
    files = sc.wholeTextFiles(str(books))
    log_doc_count = math.log(files.count())
    tf = (
        files.flatMap(
            lambda kv: (
                ((doc_ids[Path(kv[0]).name], word), 1)
                for word in re.split(r"\W+", kv[1].lower(), flags=re.ASCII)
                if word and word not in stop.value
            )
        )
        .reduceByKey(add)
    )
    return (
        tf.map(lambda kv: (kv[0][1], (kv[0][0], kv[1])))
        .groupByKey()
        .mapValues(lambda postings: _scores(list(postings), log_doc_count))
        .collectAsMap()
    )


def _postings_partition(docs: Iterable[list[tuple[int, str]]], stopwords: frozenset[str]):
    for bin_ in docs:
        for doc_id, path in bin_:
            with open(path, encoding="utf-8-sig") as f:
                counts = Counter(_WORDS(f.read().lower()))
            for word, tf in counts.items():
                if word not in stopwords:
                    yield word, (doc_id, tf)


def _index_partition(postings: Iterable[tuple[str, tuple[int, int]]], log_doc_count: float):
    grouped: dict[str, list[tuple[int, int]]] = {}
    for word, posting in postings:
        docs = grouped.get(word)
        if docs is None:
            grouped[word] = [posting]
        else:
            docs.append(posting)
    for word, docs in grouped.items():
        yield word, _scores(docs, log_doc_count)


def tf_idf_pyspark_tuned(sc: SparkContext, books: str | Path, stopwords: frozenset[str]) -> Index:
    """Hand-tuned PySpark: files read in the tasks, per-document counting fused, one shuffle by word
    (``partitionBy``), postings grouped and scored in one pass per partition."""
    docs = documents(books)
    slices = sc.defaultParallelism
    log_doc_count = math.log(len(docs))
    stop = sc.broadcast(stopwords)
    return (
        sc.parallelize(_balanced(docs, slices), slices)
        .mapPartitions(lambda part: _postings_partition(part, stop.value))
        .partitionBy(slices)
        .mapPartitions(lambda part: _index_partition(part, log_doc_count))
        .collectAsMap()
    )
