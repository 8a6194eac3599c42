"""The examples' input: the bundled sample books, the stopword list, and document ids.

A document's id is the 1-based rank of its file name in sorted order (as the reference figures in
``../shared/data/README.md`` define it); the examples put ``doc_id -> path`` into a driver-side map that their
source vertex reads.

>>> sorted(document_paths(BOOKS))[:2]
[1, 2]
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["BOOKS", "STOPWORDS", "document_paths", "read_stopwords"]

HERE = Path(__file__).resolve().parent
BOOKS = HERE / "data" / "books"
"""The bundled sample corpus: the first few hundred lines of five Gutenberg books (BOMs and CRLF kept)."""
STOPWORDS = HERE / "data" / "stopwords.txt"
"""The stopword list of Jet's TF-IDF sample, one word a line."""


def document_paths(books: str | Path) -> dict[int, str]:
    """``{doc_id: absolute path}`` for the files of ``books``; ids are 1.. in sorted file-name order."""
    directory = Path(books)
    if not directory.is_dir():
        raise FileNotFoundError(f"--books {books}: no such directory; give a directory of UTF-8 text files")
    names = sorted(p.name for p in directory.iterdir() if p.is_file())
    if not names:
        raise FileNotFoundError(f"--books {books}: the directory holds no files; give a directory of text files")
    return {doc_id: str(directory.resolve() / name) for doc_id, name in enumerate(names, start=1)}


def read_stopwords(path: str | Path) -> frozenset[str]:
    """The stopword set: the lines of ``path`` (UTF-8, BOM stripped)."""
    with open(path, encoding="utf-8-sig") as f:
        return frozenset(f.read().splitlines())
