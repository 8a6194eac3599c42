"""The examples' input: the bundled sample books, the stopword list, and document ids.

A document's id is the 1-based rank of its file name in sorted order (as the reference figures in
``../shared/data/README.md`` define it); the examples put ``doc_id -> path`` into a driver-side map that their
source vertex reads.

>>> sorted(document_paths(BOOKS))[:2]
[1, 2]
"""

from __future__ import annotations

from pathlib import Path

IS_EXAMPLE = False
"""A helper of the examples, not one: ``tests/examples/test_all_examples.py`` does not look for ``job()`` here."""

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
    try:
        with open(path, encoding="utf-8-sig") as f:
            return frozenset(f.read().splitlines())
    except UnicodeDecodeError as exc:
        raise ValueError(undecodable(path, exc)) from None


def undecodable(path: str | Path, exc: UnicodeDecodeError) -> str:
    """The message for a file that is not UTF-8: the file, the line and the byte offset of the first bad bytes.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "latin.txt"); _ = open(p, "wb").write(b"ok\\nna\\xefve\\n")
    >>> try:
    ...     open(p, encoding="utf-8").read()
    ... except UnicodeDecodeError as e:
    ...     print(undecodable(p, e).split(": ", 1)[1])
    line 2 (byte offset 5) is not valid UTF-8 (invalid continuation byte); convert the file to UTF-8
    """
    with open(path, "rb") as f:
        data = f.read()
    try:  # the codec's offsets are relative to the chunk it decoded: find the first bad byte in the whole file
        data.decode("utf-8")
        start, reason = exc.start, exc.reason
    except UnicodeDecodeError as whole:
        start, reason = whole.start, whole.reason
    line = data.count(b"\n", 0, start) + 1
    return (f"cannot read '{path}': line {line} (byte offset {start}) is not valid UTF-8 ({reason}); "
            "convert the file to UTF-8")
