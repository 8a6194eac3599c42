"""The file source of Jet's "Custom Sources and Sinks" tutorial: read a CPU log back in chunks of 128 lines.

``build_cpu_log_source(path)`` is a batch source built with ``SourceBuilder``: its state is the open file,
``fill_buffer_fn`` adds up to 128 lines per call and closes the buffer at the end of the file, and
``destroy_fn`` closes the file (also when the job fails). Without ``distributed()`` it runs as one processor
in the whole job, so the file must be readable where that processor runs.

Run it on the bundled engine after ``examples/cpu_log_sink.py`` wrote ``data.0.csv``::

    python examples/file_source.py [PATH]      # prints how many lines it read, and the first ones

or build the DAG yourself with :func:`build_dag`.
"""

from __future__ import annotations

import os
import sys

from dag import DAG
from edges import between
from processors import SourceBuilder, write_list_p

CHUNK = 128
RESULT_LIST = "cpu-lines"


def _read_chunk(reader, buf) -> None:
    for _ in range(CHUNK):
        line = reader.readline()
        if not line:
            buf.close()
            return
        buf.add(line.rstrip("\r\n"))


def build_cpu_log_source(path: str | os.PathLike = "data.0.csv"):
    """A batch source of the lines of ``path``, read 128 lines per ``fill_buffer_fn`` call."""
    path = os.fspath(path)
    return (
        SourceBuilder.batch("cpu-source", lambda ctx: open(path, encoding="utf-8"))
        .fill_buffer_fn(_read_chunk)
        .destroy_fn(lambda reader: reader.close())
        .build()
    )


def build_dag(path: str | os.PathLike = "data.0.csv", sink=None) -> DAG:
    """``cpu-source -> sink``; the sink defaults to ``write_list_p("cpu-lines")`` (``engine.get_list``)."""
    dag = DAG()
    source = build_cpu_log_source(path)
    source_vertex = dag.new_vertex(source.name, source)
    sink_vertex = dag.new_vertex("sink", sink if sink is not None else write_list_p(RESULT_LIST))
    dag.edge(between(source_vertex, sink_vertex))
    return dag


def job(path: str = "data.0.csv"):
    """``jetspark run examples/file_source.py [--path FILE]``: the DAG; prints the first lines it read. When
    ``path`` does not exist yet, ``prepare`` writes a sample CPU log there first (:func:`write_sample_log`)."""
    from jetspark_cli.spec import JobSpec

    path = os.path.abspath(path)  # the source's processor may run in another working directory

    def prepare(_engine) -> None:
        if not os.path.exists(path):
            write_sample_log(path)
            print(f"{path} did not exist: wrote a sample CPU log there", file=sys.stderr)

    return JobSpec(build_dag(path), prepare=prepare, report=lambda engine, _job: report(engine, path),
                   name="file-source")


def write_sample_log(path: str | os.PathLike, lines: int = 300) -> None:
    """Write ``lines`` lines ``timestamp_ms,cpu_usage,item`` as ``examples/cpu_log_sink.py`` logs them."""
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{1_700_000_000_000 + 100 * i},{(i * 37 % 100) / 100:f},{i}\n" for i in range(lines))


def report(engine, path: str | os.PathLike) -> None:
    """Print how many lines the sink received and the first five."""
    lines = list(engine.get_list(RESULT_LIST))
    print(f"read {len(lines)} lines from {path}")
    for line in lines[:5]:
        print(f"  {line}")


def main(argv: list[str]) -> None:
    from dag import Engine

    path = argv[0] if argv else "data.0.csv"
    with Engine() as engine:
        engine.new_job(build_dag(path)).join()
        report(engine, path)


if __name__ == "__main__":
    main(sys.argv[1:])
