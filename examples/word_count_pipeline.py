"""Word count with the Pipeline API: the manual's 2.4 "Verify Your Setup" program, and the same count over the
bundled books with the shape of the Core DAG in ``word_count.py``.

The manual's program (:func:`hello_world_pipeline`), line for line::

    Pipeline p = Pipeline.create();
    p.drawFrom(Sources.<String>list("text"))
     .flatMap(line -> traverseArray(line.toLowerCase().split("\\\\W+")))
     .filter(word -> !word.isEmpty())
     .groupingKey(wholeItem())
     .aggregate(counting())
     .drainTo(Sinks.map("counts"));

:func:`build_pipeline` counts the words of the books (the driver-side map ``docs``: document id -> path, filled
by ``word_count.prepare``) and lowers to the DAG of ``word_count.py`` with Jet's planner names::

    mapSource(docs) -> flat-map -> flat-map -> group-and-aggregate-prepare => group-and-aggregate -> mapSink(counts)

Run it::

    python examples/word_count_pipeline.py [--books DIR] [--top N]
    jetspark run examples/word_count_pipeline.py --top 20
    jetspark render examples/word_count_pipeline.py -o docs/img/word_count_pipeline.svg
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from corpus import BOOKS, document_paths
from jetspark_cli.spec import JobSpec
from pipeline import Pipeline, Sinks, Sources
from processors import counting, whole_item
from word_count import COUNTS_MAP, DOCS_MAP, doc_lines, prepare, print_report, tokenize

TEXT_LIST = "text"
"""The driver-side list of lines the manual's program reads."""

_NON_WORD = re.compile(r"\W+", re.ASCII)


def split_words(line: str) -> list[str]:
    """Java's ``line.toLowerCase().split("\\\\W+")``: the pieces between runs of non-word characters."""
    return _NON_WORD.split(line.lower())


def hello_world_pipeline() -> Pipeline:
    """The manual's 2.4 program: counts the words of the list ``text`` into the map ``counts``."""
    p = Pipeline.create()
    (p.draw_from(Sources.list(TEXT_LIST))
     .flat_map(split_words)
     .filter(lambda word: word != "")
     .grouping_key(whole_item)
     .aggregate(counting())
     .drain_to(Sinks.map(COUNTS_MAP)))
    return p


def build_pipeline() -> Pipeline:
    """Word count over the documents of the map ``docs`` (id -> path) into the map ``counts``."""
    p = Pipeline.create()
    (p.read_from(Sources.map(DOCS_MAP))
     .flat_map(doc_lines)
     .flat_map(tokenize)
     .grouping_key(whole_item)
     .aggregate(counting())
     .write_to(Sinks.map(COUNTS_MAP)))
    return p


def count_words(engine, books: str | Path = BOOKS) -> dict[str, int]:
    """Run :func:`build_pipeline` on ``books`` with ``engine``; returns ``{word: count}``."""
    prepare(engine, books)
    engine.new_job(build_pipeline()).join()
    return dict(engine.get_map(COUNTS_MAP))


def job(books: str = str(BOOKS), top: int = 10) -> JobSpec:
    """The ``jetspark`` entry point: ``jetspark run examples/word_count_pipeline.py [--books DIR] [--top N]``."""
    docs = document_paths(books)
    return JobSpec(
        build_pipeline().to_dag(),
        prepare=lambda engine: prepare(engine, docs),
        report=lambda engine, _job: print_report(dict(engine.get_map(COUNTS_MAP)), top),
        name="word-count-pipeline",
    )


def main(argv: list[str] | None = None) -> int:
    """``python examples/word_count_pipeline.py [--books DIR] [--top N] [--master URL]``."""
    parser = argparse.ArgumentParser(description="Count the words of a directory of books with a Jet pipeline.")
    parser.add_argument("--books", default=str(BOOKS), help="directory of UTF-8 text files (default: the sample)")
    parser.add_argument("--top", type=int, default=10, help="how many of the most frequent words to print")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default: local[*])")
    args = parser.parse_args(argv)

    from dag import Engine, EngineConfig

    with Engine(EngineConfig(master=args.master)) as engine:
        counts = count_words(engine, args.books)
    print_report(counts, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
