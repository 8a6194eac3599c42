"""Independent reference computations for the examples: plain, single-threaded Python.

The rules (the same as ``../shared/data/README.md``):

- a file is read as UTF-8 with its byte-order mark stripped (``utf-8-sig``);
- a token is a piece of a lower-cased line split on ASCII ``\\W+`` (as Java's regex), empty pieces dropped;
- a document's id is the 1-based rank of its file name in sorted order;
- TF-IDF: stopwords removed, ``tf`` = occurrences of the word in the document, ``idf = ln(D) - ln(df)``,
  score ``tf * idf``; the index maps a word to its ``(doc_id, score)`` pairs.

This module deliberately shares no code with ``examples/`` or ``bench/``: it is what they are checked against.

>>> tokens("Hello, WORLD -- it's 2 o'clock!")
['hello', 'world', 'it', 's', '2', 'o', 'clock']
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

_NON_WORD = re.compile(r"\W+", re.ASCII)


def tokens(line: str) -> list[str]:
    """The words of one line: lower-cased, split on ASCII non-word runs, empty pieces dropped."""
    return [word for word in _NON_WORD.split(line.lower()) if word]


def documents(books_dir: str | Path) -> dict[int, Path]:
    """``doc_id -> path`` for every file of ``books_dir``, ids 1.. in sorted file-name order."""
    paths = sorted((p for p in Path(books_dir).iterdir() if p.is_file()), key=lambda p: p.name)
    return {doc_id: path for doc_id, path in enumerate(paths, start=1)}


def document_words(path: Path) -> list[str]:
    """All tokens of one file, in order."""
    with open(path, encoding="utf-8-sig") as f:
        return [word for line in f for word in tokens(line)]


def word_counts(books_dir: str | Path) -> Counter[str]:
    """Occurrences of every word over all files of ``books_dir``."""
    counts: Counter[str] = Counter()
    for path in documents(books_dir).values():
        counts.update(document_words(path))
    return counts


def read_stopwords(path: str | Path) -> set[str]:
    """The stopword set: one word a line."""
    with open(path, encoding="utf-8-sig") as f:
        return {line.rstrip("\r\n") for line in f}


def inverted_index(books_dir: str | Path, stopwords: set[str]) -> dict[str, list[tuple[int, float]]]:
    """``word -> [(doc_id, tf_idf_score), ...]`` (sorted by doc id) as Jet's TF-IDF sample computes it."""
    docs = documents(books_dir)
    log_doc_count = math.log(len(docs))
    tf: dict[str, dict[int, int]] = {}
    for doc_id, path in docs.items():
        for word, count in Counter(document_words(path)).items():
            if word not in stopwords:
                tf.setdefault(word, {})[doc_id] = count
    index: dict[str, list[tuple[int, float]]] = {}
    for word, per_doc in tf.items():
        idf = log_doc_count - math.log(len(per_doc))
        index[word] = [(doc_id, count * idf) for doc_id, count in sorted(per_doc.items())]
    return index


def score_sum(index: dict[str, list[tuple[int, float]]]) -> float:
    """The sum of every score in the index (the reference figure), summed in a fixed order."""
    return math.fsum(score for word in sorted(index) for _, score in index[word])


def search(index: dict[str, list[tuple[int, float]]], stopwords: set[str], phrase: str) -> list[tuple[int, float]]:
    """Documents containing every distinct non-stopword term of ``phrase``, scores summed, best first (ties: lower id)."""
    terms = list(dict.fromkeys(t for t in tokens(phrase) if t not in stopwords))
    if not terms:
        return []
    per_term = [dict(index.get(term, [])) for term in terms]
    common = set(per_term[0]).intersection(*per_term[1:])
    scored = [(doc_id, sum(scores[doc_id] for scores in per_term)) for doc_id in common]
    return sorted(scored, key=lambda e: (-e[1], e[0]))


if __name__ == "__main__":  # python tests/support/reference.py BOOKS_DIR STOPWORDS
    import sys

    counts = word_counts(sys.argv[1])
    index = inverted_index(sys.argv[1], read_stopwords(sys.argv[2]))
    print(f"distinct words {len(counts):,}; 'the' {counts['the']:,}; index words {len(index):,}; "
          f"score sum {score_sum(index):,.3f}")
