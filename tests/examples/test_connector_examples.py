"""The connector examples (examples/cpu_log_sink.py, file_source.py, distributed_source.py) on local Spark,
through their DAG functions and as scripts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dag import DAG
from processors import write_list_p

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import cpu_log_sink  # noqa: E402
import distributed_source  # noqa: E402
import file_source  # noqa: E402


def csv_lines(path: Path) -> list[list[str]]:
    return [line.split(",", 2) for line in path.read_text().splitlines()]


def test_cpu_log_dag_shape():
    dag = cpu_log_sink.build_dag("somewhere", 10)
    assert isinstance(dag, DAG)
    assert [v.name for v in dag] == ["item-source", "cpu-sink"]
    assert dag.get_vertex("cpu-sink").meta_supplier.preferred_local_parallelism() == 2


def test_cpu_monitor_reports_a_fraction():
    monitor = cpu_log_sink.CpuMonitor()
    sum(i * i for i in range(200_000))
    assert 0.0 <= monitor.cpu_usage() <= 1.0


@pytest.mark.spark
def test_cpu_log_sink_writes_timestamp_cpu_item_lines_into_two_files(engine, tmp_path):
    engine.new_job(cpu_log_sink.build_dag(tmp_path, 3000)).join()
    assert sorted(os.listdir(tmp_path)) == ["data.0.csv", "data.1.csv"]
    rows = csv_lines(tmp_path / "data.0.csv") + csv_lines(tmp_path / "data.1.csv")
    assert len(rows) == 3000
    assert all(csv_lines(tmp_path / name) for name in ("data.0.csv", "data.1.csv")), "a sink processor got no data"
    sequences = sorted(int(item.rsplit("sequence=", 1)[1].rstrip(")")) for _, _, item in rows)
    assert sequences == list(range(3000))
    for timestamp, cpu, item in rows:
        assert int(timestamp) > 1_500_000_000_000
        assert 0.0 <= float(cpu) <= 1.0
        assert item.startswith("SimpleEvent(timestamp=")


@pytest.mark.spark
def test_file_source_reads_the_cpu_log_back_in_chunks(engine, tmp_path):
    path = tmp_path / "data.0.csv"
    lines = [f"{1_600_000_000_000 + i},0.5,SimpleEvent(sequence={i})" for i in range(300)]  # 3 chunks of <= 128
    path.write_text("\n".join(lines) + "\n")
    engine.new_job(file_source.build_dag(path, sink=write_list_p("cpu_lines"))).join()
    assert list(engine.get_list("cpu_lines")) == lines


def test_file_source_fill_reads_at_most_128_lines_per_call(tmp_path):
    from processors.io.connector_builders import SourceBuffer

    path = tmp_path / "in.csv"
    path.write_text("".join(f"{i}\r\n" for i in range(200)))
    buf = SourceBuffer("cpu-source")
    with open(path, encoding="utf-8") as reader:
        file_source._read_chunk(reader, buf)
        assert buf._take() == [str(i) for i in range(128)] and not buf.is_closed()
        file_source._read_chunk(reader, buf)
        assert buf._take() == [str(i) for i in range(128, 200)] and buf.is_closed()


@pytest.mark.spark
def test_distributed_source_slices_by_global_processor_index(engine):
    engine.new_job(distributed_source.build_dag(1000, sink=write_list_p("slices"))).join()
    pairs = list(engine.get_list("slices"))
    assert sorted(n for _, n in pairs) == list(range(1000))
    assert {index for index, _ in pairs} == {0, 1}
    assert all(n % 2 == index for index, n in pairs)


_RUN_AS_SCRIPTS = """
import runpy, sys
for argv in sys.argv[1:]:
    script, *args = argv.split("|")
    sys.argv = [script, *args]
    print(f"=== {script}", flush=True)
    runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.spark
@pytest.mark.slow
def test_examples_run_as_scripts(tmp_path):
    """Each example's ``__main__`` on its own bundled Engine, one after the other in one fresh process (as
    ``python examples/x.py`` runs it: the functions are pickled from ``__main__``)."""
    known = tmp_path / "known.csv"
    known.write_text("".join(f"1600000000000,0.25,SimpleEvent(sequence={i})\n" for i in range(200)))
    runs = [f"{EXAMPLES / 'cpu_log_sink.py'}|{tmp_path}|50", f"{EXAMPLES / 'file_source.py'}|{known}",
            f"{EXAMPLES / 'distributed_source.py'}|100"]
    done = subprocess.run([sys.executable, "-c", _RUN_AS_SCRIPTS, *runs], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    counts = [(tmp_path / f"data.{i}.csv").read_text().count("\n") for i in (0, 1)]
    assert sum(counts) == 50
    assert f"data.0.csv: {counts[0]} lines" in out and f"data.1.csv: {counts[1]} lines" in out
    assert f"read 200 lines from {known}" in out and "1600000000000,0.25,SimpleEvent(sequence=0)" in out
    assert "100 numbers, every one exactly once: True" in out
