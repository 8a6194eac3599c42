"""Word count: the batch DAG of the Jet manual (section 8.2.1), reading the books from files.

::

    source ──► doc-lines ──► tokenize ──► accumulate ══► combine ──► sink
    read_map_p   flat_map_p   flat_map_p   local          distributed   write_map_p
    docId->path  file lines   words        partitioned    partitioned   "counts"
                                           (word)         (entry_key)

- ``source`` reads the driver-side map ``docs`` (document id -> file path); each processor gets a share.
- ``doc-lines`` opens the file named by each entry *inside the task* and emits its lines, lower-cased (the manual
  lower-cases in ``tokenize``; lower-casing the whole file at once gives the same words for less work).
- ``tokenize`` emits the words of a line: the pieces between runs of ASCII ``\\W`` (as Java's ``\\W+`` regex),
  empty pieces dropped. ``\\w+`` finds exactly those pieces, in one C call per line.
- ``accumulate`` counts the words each member saw (a *local* partitioned edge: no item leaves its member);
  ``combine`` adds up the members' counts (a *distributed* partitioned edge on the entry key: one combiner per
  word in the whole job). The sink writes ``word -> count`` entries to the driver-side map ``counts``.

Files are read as UTF-8 with the byte-order mark stripped. Line ends (``\\r\\n``, ``\\r``, ``\\n`` and the other
Unicode line breaks ``str.splitlines`` knows) are all ``\\W``, so they never change a word.

Run it::

    python examples/word_count.py                       # the bundled sample (examples/data/books)
    python examples/word_count.py --books ../shared/data/books --top 20
    jetspark run examples/word_count.py --top 20        # the same through the command line
    jetspark render examples/word_count.py -o out/word_count.svg
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from corpus import BOOKS, document_paths, undecodable
from dag import DAG
from edges import Partitioner, between
from jetspark_cli.spec import JobSpec
from processors import (
    accumulate_by_key_p,
    combine_by_key_p,
    counting,
    entry_key,
    flat_map_p,
    read_map_p,
    whole_item,
    write_map_p,
)

DOCS_MAP = "docs"
"""Driver-side map read by ``source``: document id -> file path."""
COUNTS_MAP = "counts"
"""Driver-side map written by ``sink``: word -> count."""


def doc_lines(doc: tuple[int, str]) -> list[str]:
    """The lines of the document ``(doc_id, path)``, lower-cased: the file read as UTF-8, BOM stripped.

    Lower-casing the whole text once gives the same words as lower-casing each line, for less work.
    """
    try:
        with open(doc[1], encoding="utf-8-sig") as f:
            return f.read().lower().splitlines()
    except UnicodeDecodeError as exc:  # name the file and line: the codec's message names neither
        raise ValueError(undecodable(doc[1], exc)) from None


tokenize = re.compile(r"\w+", re.ASCII).findall
"""``tokenize(line) -> words``: the runs of ASCII word characters of a lower-cased line, i.e. the pieces between
runs of ``\\W`` with empty pieces dropped. The compiled pattern's own ``findall``: no Python code runs per line."""


def build_dag() -> DAG:
    """The word-count DAG: reads ``docs`` (doc id -> path), writes ``counts`` (word -> count)."""
    dag = DAG()
    source = dag.new_vertex("source", read_map_p(DOCS_MAP))
    lines = dag.new_vertex("doc-lines", flat_map_p(doc_lines))
    words = dag.new_vertex("tokenize", flat_map_p(tokenize))
    accumulate = dag.new_vertex("accumulate", accumulate_by_key_p([whole_item], counting()))
    combine = dag.new_vertex("combine", combine_by_key_p(counting()))
    sink = dag.new_vertex("sink", write_map_p(COUNTS_MAP))
    return (
        dag.edge(between(source, lines))
        .edge(between(lines, words))
        .edge(between(words, accumulate).partitioned(whole_item, Partitioner.HASH_CODE))
        .edge(between(accumulate, combine).distributed().partitioned(entry_key))
        .edge(between(combine, sink))
    )


def prepare(engine, books: str | Path | dict[int, str] = BOOKS) -> None:
    """Fill ``docs`` with the documents of ``books`` (a directory or a ``document_paths`` result); empty ``counts``."""
    docs = engine.get_map(DOCS_MAP)
    docs.clear()
    docs.update(books if isinstance(books, dict) else document_paths(books))
    engine.get_map(COUNTS_MAP).clear()


def count_words(engine, books: str | Path = BOOKS) -> dict[str, int]:
    """Run word count on ``books`` with ``engine`` and return ``{word: count}``."""
    prepare(engine, books)
    engine.new_job(build_dag()).join()
    return dict(engine.get_map(COUNTS_MAP))


def top_words(counts: dict[str, int], n: int = 10) -> list[tuple[str, int]]:
    """The ``n`` most frequent words, most frequent first (ties: alphabetical)."""
    return sorted(counts.items(), key=lambda e: (-e[1], e[0]))[:n]


def print_report(counts: dict[str, int], top: int = 10, out=None) -> None:
    """Print the totals and the ``top`` words."""
    out = out or sys.stdout
    print(f"{len(counts):,} distinct words, {sum(counts.values()):,} in all. Top {top}:", file=out)
    for word, count in top_words(counts, top):
        print(f"{count:>12,}  {word}", file=out)


def job(books: str = str(BOOKS), top: int = 10) -> JobSpec:
    """The ``jetspark`` entry point: ``jetspark run examples/word_count.py [--books DIR] [--top N]``."""
    docs = document_paths(books)  # fails here, before Spark starts, when --books is wrong
    return JobSpec(
        build_dag(),
        prepare=lambda engine: prepare(engine, docs),
        report=lambda engine, _job: print_report(dict(engine.get_map(COUNTS_MAP)), top),
        name="word-count",
    )


def main(argv: list[str] | None = None) -> int:
    """``python examples/word_count.py [--books DIR] [--top N] [--master URL] [--progress]``."""
    parser = argparse.ArgumentParser(description="Count the words of a directory of books with a Jet-style DAG.")
    parser.add_argument("--books", default=str(BOOKS), help="directory of UTF-8 text files (default: the sample)")
    parser.add_argument("--top", type=int, default=10, help="how many of the most frequent words to print")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default: local[*])")
    parser.add_argument("--progress", action="store_true", help="show a progress line per Spark stage")
    args = parser.parse_args(argv)

    from dag import Engine, EngineConfig

    with Engine(EngineConfig(master=args.master, progress=args.progress)) as engine:
        counts = count_words(engine, args.books)
    print_report(counts, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
