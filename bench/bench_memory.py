"""Load test: peak memory per process of a jetspark job at 1x, 3x and 10x the corpus.

Memory must be bounded by queue sizes and batch sizes, not by the input (issue 9). For each scale K the
corpus (``--books``, default the full corpus ``../shared/data/books`` plus the bundled sample
``examples/data/books``) is repeated K times (symbolic links, so K times as many documents with the same
vocabulary) and the job runs in a fresh child process (its own driver, JVM and Python workers). The parent
polls the child's process tree every 0.1 s and reports each process's peak resident set (``VmHWM`` from
``/proc``, the kernel's own high-water mark, so short peaks between polls are not missed while the process
lives):

- ``driver``: the Python process that builds and submits the DAG (it also holds the driver-side collections);
- ``jvm``: Spark's driver JVM;
- ``worker``: the largest Python worker (``pyspark.daemon`` and its forks).

Usage::

    .venv/bin/python bench/bench_memory.py                           # word count at 1x, 3x, 10x
    .venv/bin/python bench/bench_memory.py --scales 1,3 --jobs word_count,tf_idf --books examples/data/books

Linux only (``/proc``). Exit status 1 when a run fails or its result differs from the 1x result times K.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BOOKS = [REPO.parent / "shared" / "data" / "books", REPO / "examples" / "data" / "books"]
STOPWORDS = REPO / "examples" / "data" / "stopwords.txt"


def _corpus(sources: list[Path], scale: int, into: Path) -> Path:
    """``into`` filled with ``scale`` links to every file of ``sources`` (names made unique)."""
    into.mkdir(parents=True, exist_ok=True)
    for k in range(scale):
        for s, source in enumerate(sources):
            for f in sorted(source.iterdir()):
                if f.is_file():
                    (into / f"{k:02d}-{s}-{f.name}").symlink_to(f.resolve())
    return into


def _child(job: str, books: str, master: str) -> None:
    """Run one job and print a JSON summary (``--child``)."""
    sys.path[:0] = [str(REPO / "examples"), str(REPO)]
    from dag import Engine, EngineConfig

    conf = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    start = time.perf_counter()
    with Engine(EngineConfig(master=master, spark_conf=conf)) as engine:
        engine.spark.sparkContext.setLogLevel("ERROR")
        if job == "word_count":
            import word_count

            result = word_count.count_words(engine, books)
            summary = {"distinct": len(result), "total": sum(result.values())}
        else:
            import tf_idf

            result = tf_idf.build_index(engine, books, STOPWORDS)
            summary = {"distinct": len(result), "postings": sum(len(p) for p in result.values())}
    summary["seconds"] = time.perf_counter() - start
    print("RESULT " + json.dumps(summary), flush=True)


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _peak_and_role(pid: int, root: int) -> tuple[int, str] | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    hwm = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
    if pid == root:
        role = "driver"
    elif "java" in cmdline.split(" ", 1)[0]:
        role = "jvm"
    elif "python" in cmdline:
        role = "worker"
    else:
        role = "other"
    return hwm * 1024, role


def _measure(job: str, books: Path, master: str) -> tuple[dict, dict[str, int]]:
    proc = subprocess.Popen([sys.executable, __file__, "--child", job, "--books", str(books), "--master", master],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    peaks: dict[int, tuple[int, str]] = {}
    while proc.poll() is None:
        for pid in _tree(proc.pid):
            found = _peak_and_role(pid, proc.pid)
            if found is not None and found[0] >= peaks.get(pid, (0, ""))[0]:
                peaks[pid] = found
        time.sleep(0.1)
    out = proc.stdout.read() if proc.stdout else ""
    line = next((x for x in out.splitlines() if x.startswith("RESULT ")), None)
    if proc.returncode != 0 or line is None:
        raise RuntimeError(f"{job} on {books} failed (exit status {proc.returncode}): {out[-2000:]}")
    by_role: dict[str, int] = {}
    for peak, role in peaks.values():
        by_role[role] = max(by_role.get(role, 0), peak)
    return json.loads(line[len("RESULT "):]), by_role


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run each job at each scale, print the peaks; 1 if a result is wrong."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--books", action="append", help="corpus directory (repeatable; default: full + sample)")
    parser.add_argument("--scales", default="1,3,10", help="comma-separated corpus multiples (default 1,3,10)")
    parser.add_argument("--jobs", default="word_count", help="comma-separated: word_count, tf_idf")
    parser.add_argument("--master", default="local[2]", help="Spark master (default: local[2])")
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.books[0], args.master)
        return 0
    sources = [Path(b) for b in args.books] if args.books else [p for p in DEFAULT_BOOKS if p.is_dir()]
    scales = [int(s) for s in args.scales.split(",")]
    ok = True
    print(f"corpus: {', '.join(map(str, sources))}; master {args.master}; peak RSS per process (VmHWM)")
    print(f"{'job':<11}{'scale':>6}{'docs':>7}{'seconds':>9}{'driver MB':>11}{'jvm MB':>9}{'worker MB':>11}  result")
    for job in args.jobs.split(","):
        base: dict | None = None
        for scale in scales:
            with tempfile.TemporaryDirectory(prefix="jetspark-load-") as tmp:
                books = _corpus(sources, scale, Path(tmp) / "books")
                docs = sum(1 for _ in books.iterdir())
                result, peaks = _measure(job, books, args.master)
            seconds = result.pop("seconds")
            if base is None:
                base = {k: (v if k == "distinct" else v // scale) for k, v in result.items()}
            expected_total = {k: (v * scale if k != "distinct" else v) for k, v in base.items()}
            good = result == expected_total
            ok &= good
            mb = {role: peaks.get(role, 0) / 2**20 for role in ("driver", "jvm", "worker")}
            print(f"{job:<11}{scale:>5}x{docs:>7}{seconds:>9.1f}{mb['driver']:>11.0f}{mb['jvm']:>9.0f}"
                  f"{mb['worker']:>11.0f}  {result}{'' if good else '  WRONG (expected ' + str(expected_total) + ')'}",
                  flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
