"""Engine-free CPU of the manual's TF-IDF vertices in each writing (issue 22, defect 5): where each writing spends.

``bench_jobs.py`` times the writings of ``bench/manual_dags.py`` on Spark, where a busy machine makes a few
percent invisible. This script runs, in one process and without Spark, the vertices that differ between the
writings, each processor driven by the staged runtime's own driver (``processors.execution.staged.drive``, the
tasklet) over the documents' lines in 1024-item batches, and next to them the user's own functions in plain
loops (the floor: what the engine adds is the difference):

=================  ==========================================================================================
``tokenize-fn``    ``TokenizeP._doc_words`` called per line in a loop (the user's code alone)
``tokenize``       ``TokenizeP`` (a ``FlatMapper``) driven; writings ``context``, ``flat-map``, ``two-stage-tf``
``tokenize-trav``  ``TraverserTokenizeP`` (``emit_from_traverser`` per line) driven; writing ``traverser``
``tf``             ``aggregate_by_key_p(whole_item, counting())`` over the ``(doc_id, word)`` pairs
``tf-two-stage``   ``accumulate_by_key_p`` then ``combine_by_key_p`` over the same pairs
``tf-idf``         ``TfIdfP`` over the ``tf`` entries (common to every writing)
=================  ==========================================================================================

(``doc-lines`` is left out: a ``flat_map_p`` and a ``flat_map_using_context_p`` are the same ``BatchTransform``
fast path, one call per batch.) The rows take turns ``--repeat`` times and the median CPU seconds
(``time.process_time``) are printed, with the per-line engine cost of each tokenizer (its row minus
``tokenize-fn``, divided by the number of lines). On Spark the shuffles, the combine of pre-aggregated
accumulators and serialisation come on top; they are the same in every writing (the planner's ``explain()``
of the four writings shows the same stages, see bench/README.md, issue 22).

Usage::

    .venv/bin/python bench/bench_tf_idf_writings.py --books ../shared/data/books \\
        --stopwords ../shared/data/stopwords.txt --docs 24 --repeat 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1] / "examples")]

import manual_dags  # noqa: E402
from processors import (  # noqa: E402
    accumulate_by_key_p,
    aggregate_by_key_p,
    combine_by_key_p,
    counting,
    entry,
    whole_item,
)
from processors.api.context import Context  # noqa: E402
from processors.execution.staged import drive  # noqa: E402

BATCH = 1024


def _batches(items: list) -> list[list]:
    return [items[i:i + BATCH] for i in range(0, len(items), BATCH)]


def _drive(processor: object, inbound: list[tuple[int, list]], priorities: dict[int, int]) -> list:
    """Everything ``processor`` emits when the staged driver feeds it ``inbound`` (outbound queue size 1024)."""
    out: list = []
    for _, items in drive(processor, Context(), inbound=inbound, inbound_priorities=priorities,
                          outbound_capacities=[BATCH], vertex_name="v"):
        out.extend(items)
    return out


def workloads(books: Path, stopwords: Path, docs: int) -> tuple[int, dict[str, Callable[[], object]]]:
    """The number of lines and the rows of the table (module docstring), each a function to time."""
    paths = sorted(p for p in books.iterdir() if p.is_file())[:docs]
    stop = frozenset(stopwords.read_text(encoding="utf-8").split())
    lines = [line for i, p in enumerate(paths) for line in manual_dags.doc_lines_plain((i, str(p)))]
    line_batches = _batches(lines)
    fn_owner = manual_dags.TokenizeP()
    fn_owner.try_process0(stop)
    words = fn_owner._doc_words
    pairs = [pair for line in lines for pair in words(line)]
    pair_batches = _batches(pairs)
    tf = _drive(aggregate_by_key_p([whole_item], counting(), entry)(), [(0, b) for b in pair_batches], {0: 0})

    def tokenize_fn() -> list:
        out: list = []
        for line in lines:
            out.extend(words(line))
        return out

    def tokenizer(cls: type) -> Callable[[], list]:
        return lambda: _drive(cls(), [(0, [stop])] + [(1, list(b)) for b in line_batches], {0: -1, 1: 0})

    def tf_two_stage() -> list:
        acc = _drive(accumulate_by_key_p([whole_item], counting())(), [(0, b) for b in pair_batches], {0: 0})
        return _drive(combine_by_key_p(counting(), entry)(), [(0, b) for b in _batches(acc)], {0: 0})

    rows = {
        "tokenize-fn": tokenize_fn,
        "tokenize": tokenizer(manual_dags.TokenizeP),
        "tokenize-trav": tokenizer(manual_dags.TraverserTokenizeP),
        "tf": lambda: _drive(aggregate_by_key_p([whole_item], counting(), entry)(),
                             [(0, b) for b in pair_batches], {0: 0}),
        "tf-two-stage": tf_two_stage,
        "tf-idf": lambda: _drive(manual_dags.TfIdfP(), [(0, [len(paths)])] + [(1, b) for b in _batches(tf)],
                                 {0: -1, 1: 0}),
    }
    return len(lines), rows


def main(argv: list[str] | None = None) -> None:
    """Time the rows alternately and print their medians (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--books", type=Path, default=Path("../shared/data/books"))
    parser.add_argument("--stopwords", type=Path, default=Path("../shared/data/stopwords.txt"))
    parser.add_argument("--docs", type=int, default=24, help="the first N books (sorted by name)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    n_lines, rows = workloads(args.books, args.stopwords, args.docs)
    cpu: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.repeat):
        for name, fn in rows.items():
            start = time.process_time()
            fn()
            cpu[name].append(time.process_time() - start)
    print(f"{args.docs} books, {n_lines:,} lines; median CPU s of {args.repeat} alternating runs")
    floor = statistics.median(cpu["tokenize-fn"])
    for name, runs in cpu.items():
        median = statistics.median(runs)
        extra = f"  engine {(median - floor) / n_lines * 1e9:6.0f} ns/line" if name in ("tokenize", "tokenize-trav") \
            else ""
        print(f"{name:14} {median:7.3f}{extra}   runs {' '.join(f'{r:.3f}' for r in runs)}")


if __name__ == "__main__":
    main()
