"""README's code must run as shown: its word-count snippet is executed from the repository root."""

from __future__ import annotations

import re
from collections import Counter
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_readme_python_block(heading: str) -> str:
    """Run the python block under ``## heading`` of README.md from the repository root; returns its stdout."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"## {re.escape(heading)}\n.*?```python\n(.*?)```", text, re.S)
    assert match, f"README has no python block under '## {heading}'"
    done = subprocess.run([sys.executable, "-c", match.group(1)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.spark
@pytest.mark.slow
def test_readme_word_count_snippet_when_run_then_prints_top_words():
    stdout = run_readme_python_block("Word count, as in the manual")
    top = eval(stdout.strip().splitlines()[-1])  # the snippet prints a list of (word, count)
    expected = Counter()
    for name in ("faust.txt", "tom-sawyer.txt"):
        text = (ROOT / "examples" / "data" / "books" / name).read_text(encoding="utf-8-sig").lower()
        expected.update(word for word in re.split(r"\W+", text, flags=re.ASCII) if word)
    assert len(top) == 10
    assert all(expected[word] == count for word, count in top)
    assert [count for _, count in top] == sorted(expected.values(), reverse=True)[:10]


@pytest.mark.spark
@pytest.mark.slow
def test_readme_pipeline_snippet_when_run_then_prints_the_manuals_counts():
    stdout = run_readme_python_block("Pipeline API")
    assert stdout.strip().splitlines()[-2:] == ["Count of hello: 4", "Count of world: 5"]


def test_readme_streaming_figures_when_read_then_one_table_with_its_command():
    """Issue 22, defect 4: README gave two tables of bench_streaming figures that disagreed. It keeps one (the
    run with its command right above it); other runs live in bench/README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    tables = re.findall(r"(?:^\|.*\|\n)+", text, re.M)
    latency_tables = [t for t in tables if re.search(r"^\| latency\b.*p50", t, re.M)]
    assert len(latency_tables) == 1, f"README has {len(latency_tables)} tables of streaming latency figures: " \
        "keep one, move the others to bench/README.md"
    before = text[:text.index(latency_tables[0])]
    commands = re.findall(r"```bash\n(.*?)```", before, re.S)
    assert commands and "bench/bench_streaming.py" in commands[-1], \
        "the streaming figures' table must follow the bench_streaming.py command that produced it"
    assert "moved from the README" in (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
