"""Connectors on local Spark: SourceBuilder, SinkBuilder, write_buffered_p, file and Spark text I/O."""

from __future__ import annotations

import os
import uuid

import pytest

from dag import DAG, DagValidationError, JobFailedError
from dag.runtime.staged import native_io
from edges import between
from processors import (
    SinkBuilder,
    SourceBuilder,
    map_p,
    read_files_p,
    read_list_p,
    read_text_p,
    write_buffered_p,
    write_file_p,
    write_list_p,
    write_text_p,
)

pytestmark = pytest.mark.spark


def run(engine, dag):
    engine.new_job(dag).join()


def pipeline(source, sink, source_name="source", sink_name="sink", **source_kw) -> DAG:
    dag = DAG()
    dag.edge(between(dag.new_vertex(source_name, source, **source_kw), dag.new_vertex(sink_name, sink)))
    return dag


def result(engine, name):
    return list(engine.get_list(name))


class Range:
    def __init__(self, ctx, count):
        self.index = ctx.global_processor_index
        self.total = ctx.total_parallelism
        self.numbers = iter(range(self.index, count, self.total))


def fill_range(state, buf):
    for _ in range(50):
        n = next(state.numbers, None)
        if n is None:
            buf.close()
            return
        buf.add((state.index, state.total, n))


# ---------------------------------------------------------------------------------------------- SourceBuilder


def test_batch_source_runs_as_one_processor_in_the_whole_job(engine):
    src = SourceBuilder.batch("numbers", lambda ctx: Range(ctx, 500)).fill_buffer_fn(fill_range).build()
    run(engine, pipeline(src, write_list_p("one_proc"), source_name=src.name))
    items = result(engine, "one_proc")
    assert sorted(n for _, _, n in items) == list(range(500))
    assert {(index, total) for index, total, _ in items} == {(0, 1)}


def test_distributed_source_create_fn_sees_each_global_index_once(engine):
    src = SourceBuilder.batch("numbers", lambda ctx: Range(ctx, 1000)).fill_buffer_fn(fill_range).distributed(2).build()
    run(engine, pipeline(src, write_list_p("distributed"), source_name=src.name))
    items = result(engine, "distributed")
    assert sorted(n for _, _, n in items) == list(range(1000))
    assert {(index, total) for index, total, _ in items} == {(0, 2), (1, 2)}
    assert all(n % 2 == index for index, _, n in items)


def test_distributed_source_preference_is_capped_by_default_parallelism_unless_vertex_sets_it(engine):
    src = SourceBuilder.batch("numbers", lambda ctx: Range(ctx, 90)).fill_buffer_fn(fill_range).distributed(3).build()
    capped, three = f"capped-{uuid.uuid4().hex}", f"three-{uuid.uuid4().hex}"  # the engine is shared: own lists
    run(engine, pipeline(src, write_list_p(capped), source_name=src.name))  # Jet: min(preferred 3, default 2)
    assert {(index, total) for index, total, _ in result(engine, capped)} == {(0, 2), (1, 2)}
    run(engine, pipeline(src, write_list_p(three), source_name=src.name, local_parallelism=3))
    items = result(engine, three)
    assert {(index, total) for index, total, _ in items} == {(0, 3), (1, 3), (2, 3)}
    assert sorted(n for _, _, n in items) == list(range(90))


def test_source_when_fill_fails_then_job_fails_naming_vertex_and_destroy_fn_runs(engine, tmp_path):
    marker = tmp_path / "destroyed"

    def fill(state, buf):
        raise OSError("source went away")

    src = (SourceBuilder.batch("flaky", lambda ctx: str(marker)).fill_buffer_fn(fill)
           .destroy_fn(lambda path: open(path, "w").close()).build())
    with pytest.raises(JobFailedError) as info:
        run(engine, pipeline(src, write_list_p("never"), source_name=src.name))
    assert info.value.vertex == "flaky"
    assert info.value.exc_type == "OSError" and "source went away" in info.value.exc_message
    assert marker.exists(), "destroy_fn did not run after the failure"


# ---------------------------------------------------------------------------------------------- SinkBuilder


class FileLog:
    def __init__(self, directory, ctx):
        self.path = os.path.join(directory, f"out.{ctx.global_processor_index}")
        self.lines = []
        self.flushes = 0

    def receive(self, item):
        self.lines.append(f"{item}\n")

    def flush(self):
        self.flushes += 1
        with open(self.path, "a") as f:
            f.writelines(self.lines)
        self.lines = []

    def destroy(self):
        with open(self.path + ".destroyed", "w") as f:
            f.write(str(self.flushes))


def test_sink_builder_writes_every_item_through_flush_with_two_processors(engine, tmp_path):
    d = str(tmp_path)
    sink = (SinkBuilder.sink_builder("file-sink", lambda ctx: FileLog(d, ctx))
            .receive_fn(FileLog.receive).flush_fn(FileLog.flush).destroy_fn(FileLog.destroy)
            .preferred_local_parallelism(2).build())
    engine.get_list("sink_in").extend(range(300))
    run(engine, pipeline(read_list_p("sink_in"), sink, sink_name=sink.name))
    names = set(os.listdir(tmp_path))
    # both processors are destroyed; the source deals its items on demand, so one processor may get all of them
    # (and then the other never flushes and writes no file)
    assert {"out.0.destroyed", "out.1.destroyed"} <= names and names <= {"out.0", "out.1", "out.0.destroyed",
                                                                           "out.1.destroyed"}
    logs = [name for name in ("out.0", "out.1") if name in names]
    written = [int(line) for name in logs for line in (tmp_path / name).read_text().split()]
    assert sorted(written) == list(range(300))
    assert all(int((tmp_path / f"{name}.destroyed").read_text()) >= 1 for name in logs)


def test_sink_when_receive_fn_raises_then_job_fails_clearly_and_destroy_fn_runs(engine, tmp_path):
    marker = str(tmp_path / "destroyed")

    def receive(state, item):
        if item == 7:
            raise ValueError(f"cannot store item {item}")

    sink = (SinkBuilder.sink_builder("picky", lambda ctx: marker).receive_fn(receive)
            .destroy_fn(lambda path: open(path, "w").close()).build())
    engine.get_list("picky_in").extend(range(20))
    with pytest.raises(JobFailedError) as info:
        run(engine, pipeline(read_list_p("picky_in"), sink, sink_name=sink.name))
    err = info.value
    assert err.vertex == "picky" and err.exc_type == "ValueError"
    assert "cannot store item 7" in str(err) and "receive" in err.user_traceback
    assert os.path.exists(marker), "destroy_fn did not run after the failure"


def test_write_buffered_p_collects_every_item(engine, tmp_path):
    d = str(tmp_path)
    sink = write_buffered_p(lambda ctx: FileLog(d, ctx), FileLog.receive, FileLog.flush, FileLog.destroy)
    engine.get_list("buffered_in").extend(range(100))
    run(engine, pipeline(read_list_p("buffered_in"), sink))
    outputs = [p for p in tmp_path.glob("out.*") if not p.name.endswith("destroyed")]
    written = [int(x) for p in outputs for x in p.read_text().split()]
    assert sorted(written) == list(range(100))


# ---------------------------------------------------------------------------------------------- files


def test_read_files_then_write_file_round_trip(engine, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    expected = []
    for i in range(5):
        lines = [f"file{i} line{j}" for j in range(40)]
        (src / f"f{i}.txt").write_text("\n".join(lines) + "\n")
        expected += lines
    (src / "skip.csv").write_text("not me\n")
    out = tmp_path / "out"
    dag = DAG()
    read = dag.new_vertex("read", read_files_p(src, glob="*.txt"), local_parallelism=2)
    upper = dag.new_vertex("upper", map_p(str.upper), local_parallelism=2)
    write = dag.new_vertex("write", write_file_p(out), local_parallelism=2)
    dag.edge(between(read, upper)).edge(between(upper, write))
    run(engine, dag)
    assert sorted(os.listdir(out)) == ["0", "1"]
    written = [line for name in ("0", "1") for line in (out / name).read_text().splitlines()]
    assert sorted(written) == sorted(line.upper() for line in expected)


def test_read_files_map_output_fn_and_shared_fs(engine, tmp_path):
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text(f"{name}1\n{name}2\n")
    src = read_files_p(tmp_path, shared_fs=True, map_output_fn=lambda name, line: f"{name}:{line}")
    dag = DAG()
    dag.edge(between(dag.new_vertex("read", src, local_parallelism=2), dag.new_vertex("sink", write_list_p("shared"))))
    run(engine, dag)
    assert sorted(result(engine, "shared")) == ["a:a1", "a:a2", "b:b1", "b:b2", "c:c1", "c:c2"]


def test_read_files_when_directory_missing_then_job_fails_naming_it(engine, tmp_path):
    missing = tmp_path / "no-such-dir"
    with pytest.raises(JobFailedError) as info:
        run(engine, pipeline(read_files_p(missing), write_list_p("never2")))
    assert info.value.vertex == "source"
    assert str(missing) in str(info.value) and "does not exist" in str(info.value)


def test_read_files_when_file_undecodable_then_job_fails_naming_file_and_line(engine, tmp_path):
    (tmp_path / "latin.txt").write_bytes(b"fine\nstill fine\nna\xefve caf\xe9\n")
    with pytest.raises(JobFailedError) as info:
        run(engine, pipeline(read_files_p(tmp_path), write_list_p("never3")))
    message = str(info.value)
    assert "latin.txt" in message and "line 3" in message and "errors='replace'" in message


def test_write_file_when_job_fails_then_no_file_under_a_final_name(engine, tmp_path):
    def fill(state, buf):
        if state["calls"]:
            raise RuntimeError("upstream broke after the first chunk")
        state["calls"] += 1
        for i in range(100):
            buf.add(i)

    src = SourceBuilder.batch("half", lambda ctx: {"calls": 0}).fill_buffer_fn(fill).build()
    out = tmp_path / "out"
    dag = DAG()
    half = dag.new_vertex("half", src)
    write = dag.new_vertex("write", write_file_p(out), local_parallelism=1)  # same task as the source: sees the items
    dag.edge(between(half, write))
    with pytest.raises(JobFailedError, match="upstream broke"):
        run(engine, dag)
    assert out.is_dir(), "the sink never started, so this test proves nothing"
    assert os.listdir(out) == [], "a final or temporary file was left behind by the failed job"


# ---------------------------------------------------------------------------------------------- Spark text


def test_read_text_then_write_text_round_trip(engine, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("".join(f"line {i}\n" for i in range(1000)))
    out = tmp_path / "out"
    dag = DAG()
    read = dag.new_vertex("read", read_text_p(src), local_parallelism=3)
    length = dag.new_vertex("len", map_p(len), local_parallelism=3)
    write = dag.new_vertex("write", write_text_p(out, to_string_fn=lambda n: f"len={n}"), local_parallelism=3)
    dag.edge(between(read, length)).edge(between(length, write))
    run(engine, dag)
    assert (out / "_SUCCESS").exists()
    lines = [line for p in sorted(out.glob("part-*")) for line in p.read_text().splitlines()]
    assert sorted(lines) == sorted(f"len={len(f'line {i}')}" for i in range(1000))


def test_read_text_when_path_missing_then_error_names_it(engine, tmp_path):
    missing = tmp_path / "nothing-here"
    with pytest.raises((DagValidationError, JobFailedError), match="nothing-here.*does not exist"):
        run(engine, pipeline(read_text_p(missing), write_list_p("never4")))


def test_write_text_when_output_exists_then_error_names_it(engine, tmp_path):
    engine.get_list("text_in").extend(["a"])
    with pytest.raises((DagValidationError, JobFailedError), match="already exists"):
        run(engine, pipeline(read_list_p("text_in"), write_text_p(tmp_path)))


@pytest.mark.parametrize("parallelism", [1, 3, 7])
def test_native_source_rdd_has_exactly_the_requested_partitions_and_every_line(engine, tmp_path, parallelism):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"{i}\n" for i in range(50)))
    rdd = native_io.source_rdd(engine.spark.sparkContext, read_text_p(path), parallelism)
    assert rdd.getNumPartitions() == parallelism
    assert sorted(int(x) for x in rdd.collect()) == list(range(50))


def test_native_run_sink_writes_strings_of_items(engine, tmp_path):
    sc = engine.spark.sparkContext
    out = tmp_path / "out"
    native_io.run_sink(sc.parallelize([1, 2, 3], 2), write_text_p(out, to_string_fn=lambda n: f"#{n}"))
    assert sorted(sc.textFile(str(out)).collect()) == ["#1", "#2", "#3"]
