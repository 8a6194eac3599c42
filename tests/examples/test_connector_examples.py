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
    engine.new_job(cpu_log_sink.build_dag(tmp_path, 300)).join()
    assert sorted(os.listdir(tmp_path)) == ["data.0.csv", "data.1.csv"]
    rows = csv_lines(tmp_path / "data.0.csv") + csv_lines(tmp_path / "data.1.csv")
    assert len(rows) == 300
    assert all(csv_lines(tmp_path / name) for name in ("data.0.csv", "data.1.csv")), "a sink processor got no data"
    sequences = sorted(int(item.rsplit("sequence=", 1)[1].rstrip(")")) for _, _, item in rows)
    assert sequences == list(range(300))
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
    from processors.builders import SourceBuffer

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


@pytest.mark.spark
@pytest.mark.slow
def test_examples_run_as_scripts(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(EXAMPLES.parent), os.environ.get("PYTHONPATH")])))
    sink = subprocess.run([sys.executable, str(EXAMPLES / "cpu_log_sink.py"), str(tmp_path), "50"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert sink.returncode == 0, sink.stderr[-3000:]
    assert "data.0.csv: " in sink.stdout and "data.1.csv: " in sink.stdout
    source = subprocess.run([sys.executable, str(EXAMPLES / "file_source.py"), str(tmp_path / "data.0.csv")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert source.returncode == 0, source.stderr[-3000:]
    assert "SimpleEvent(timestamp=" in source.stderr + source.stdout
    dist = subprocess.run([sys.executable, str(EXAMPLES / "distributed_source.py"), "100"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert dist.returncode == 0, dist.stderr[-3000:]
    assert "100 numbers, every one exactly once: True" in dist.stdout
