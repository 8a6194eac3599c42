"""read_files_p on one very long line: the time must grow linearly with the line's length (issue 9).

Each size writes a file holding a single line of that many characters (plus a short second line), reads it with
one ``read_files_p`` processor driven in-process (1024-item outbox) and prints the CPU seconds
(``time.process_time``, steadier than wall time on a shared machine). Before the fix the unfinished line was
re-concatenated with every 256 Ki-character chunk: 93 s for 200 MB against 8 s for 50 MB.

Usage::

    .venv/bin/python bench/bench_long_line.py [--sizes-mb 25,50,100,200]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from processors import read_files_p  # noqa: E402
from processors.api.context import Context  # noqa: E402
from processors.api.outbox import Outbox  # noqa: E402


def read_seconds(directory: Path) -> tuple[float, list[int]]:
    """Seconds to read every line of ``directory`` with one processor, and the lines' lengths."""
    meta = read_files_p(directory)
    meta.init(Context())
    processor = meta.get([0])(0).get(1)[0]
    outbox = Outbox([1024])
    processor.init(outbox, Context())
    lengths: list[int] = []
    start = time.process_time()
    try:
        while True:
            outbox.reset()
            done = processor.complete()
            lengths += map(len, outbox.drain(0))
            if done:
                return time.process_time() - start, lengths
    finally:
        processor.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes-mb", default="25,50,100,200", help="comma-separated line lengths in MB")
    args = parser.parse_args(argv)
    print(f"{'line MB':>8}{'seconds':>9}{'s per 100 MB':>14}")
    for size in (int(s) for s in args.sizes_mb.split(",")):
        with tempfile.TemporaryDirectory(prefix="jetspark-long-line-") as tmp:
            chars = size * 1_000_000
            (Path(tmp) / "line.txt").write_text("ab " * (chars // 3) + "\nshort\n")
            seconds, lengths = read_seconds(Path(tmp))
        if lengths != [chars // 3 * 3, 5]:
            print(f"wrong lines: {lengths}")
            return 1
        print(f"{size:>8}{seconds:>9.2f}{seconds / size * 100:>14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
