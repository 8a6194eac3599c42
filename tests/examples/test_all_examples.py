"""Every example of ``examples/`` (found by glob, so a new one is covered at once) draws with ``jetspark dot``
and ``jetspark render`` and explains with ``jetspark explain`` without naming a function, and without a Spark
session or a server (issue 22, defect 3); the bounded ones also run through ``jetspark run``'s path.

The rule an example follows (README, "Command line"): it defines ``job()``, callable without arguments, that
returns its DAG, pipeline or ``jetspark_cli.spec.JobSpec``. A helper module of the examples that is no example
says so with a top-level ``IS_EXAMPLE = False``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py")
                  if not re.search(r"^IS_EXAMPLE = False$", p.read_text(encoding="utf-8"), re.M))

# Runs the three commands in one fresh interpreter, then reports whether anything loaded pyspark or py4j (a
# Spark session cannot start without them).
_DRAW = """
import contextlib, io, json, sys
from jetspark_cli.main import main
example, svg = sys.argv[1], sys.argv[2]
out = {}
for name, argv in (("dot", ["dot", example]), ("explain", ["explain", example]),
                   ("render", ["render", example, "-o", svg])):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(argv)
    out[name] = [status, buffer.getvalue()]
out["pyspark"] = sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j"))
print(json.dumps(out))
"""


def test_examples_when_globbed_then_the_known_ones_are_found():
    names = {p.stem for p in EXAMPLES}
    assert {"word_count", "network_source", "page_visits", "trade_enrichment"} <= names
    assert "corpus" not in names and "generator_thread" not in names


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_when_drawn_and_explained_without_a_function_then_no_spark_needed(example, tmp_path):
    svg = tmp_path / f"{example.stem}.svg"
    done = subprocess.run([sys.executable, "-c", _DRAW, str(example), str(svg)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for command in ("dot", "explain", "render"):
        assert out[command][0] == 0, f"jetspark {command} {example.name} failed: {done.stderr[-2000:]}"
    assert out["dot"][1].lstrip().startswith("digraph")
    assert "stage" in out["explain"][1] or "task" in out["explain"][1], out["explain"][1][:500]
    assert svg.read_text(encoding="utf-8").lstrip().startswith(("<?xml", "<svg"))
    assert out["pyspark"] == [], f"drawing {example.name} loaded {out['pyspark'][:5]}"


def _bounded() -> list[Path]:
    """The examples whose ``job()`` ends by itself (no stream source)."""
    from jetspark_cli.streaming import is_stream_dag
    from jetspark_cli.target import resolve

    return [p for p in EXAMPLES if not is_stream_dag(resolve(str(p)).call([]).dag)]


@pytest.mark.spark
@pytest.mark.parametrize("example", _bounded(), ids=lambda p: p.stem)
def test_bounded_example_when_run_as_jetspark_run_does_then_completes_and_reports(example, engine, tmp_path,
                                                                                  monkeypatch, capsys):
    """What ``jetspark run FILE`` does (``prepare``, the job, ``report``), on the shared engine, in an empty
    working directory (relative paths are the run's, not the Spark workers' working directory)."""
    from dag import JobConfig, JobStatus
    from jetspark_cli.target import resolve

    before = set(ROOT.iterdir())
    monkeypatch.chdir(tmp_path)
    spec = resolve(str(example)).call([])
    if spec.prepare is not None:
        spec.prepare(engine)
    job = engine.new_job(spec.dag, JobConfig(name=spec.name or example.stem))
    job.join(timeout=300)
    assert job.status is JobStatus.COMPLETED
    if spec.report is not None:
        spec.report(engine, job)
        assert capsys.readouterr().out.strip(), f"{example.name}: report() printed nothing"
    assert set(ROOT.iterdir()) == before, "the job wrote into the Spark workers' working directory, not the run's"
