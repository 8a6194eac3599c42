"""read_files_p and write_file_p without Spark, and the Spark text markers' engine-free side."""

from __future__ import annotations

import os

import pytest

from dag.errors import DagError, DagValidationError
from processors import (
    Context,
    Inbox,
    Outbox,
    ProcessorMetaSupplier,
    read_files_p,
    read_text_p,
    verify_processor,
    write_file_p,
    write_text_p,
)
from processors.api.suppliers import RuntimeBound


def read_all(pms, local_parallelism=1, member_count=1, capacity=7):
    """Run every processor of a read_files_p meta-supplier; returns the items per global processor index."""
    total = local_parallelism * member_count
    pms.init(Context(vertex_name="read", local_parallelism=local_parallelism, total_parallelism=total))
    get = pms.get(list(range(member_count)))
    outputs = []
    for member in range(member_count):
        for local, proc in enumerate(get(member).get(local_parallelism)):
            ctx = Context(vertex_name="read", local_parallelism=local_parallelism, total_parallelism=total,
                          member_index=member, local_processor_index=local,
                          global_processor_index=member * local_parallelism + local)
            outbox = Outbox([capacity])
            out = []
            try:
                proc.init(outbox, ctx)
                while True:
                    outbox.reset()
                    done = proc.complete()
                    out += outbox.drain(0)
                    if done:
                        break
            finally:
                proc.close()
            outputs.append(out)
    return outputs


@pytest.fixture
def books(tmp_path):
    d = tmp_path / "books"
    d.mkdir()
    (d / "a.txt").write_text("a1\na2\n")
    (d / "b.txt").write_text("b1\nb2\nb3")  # no final newline
    (d / "c.log").write_text("c1\n")
    (d / "d.txt").write_text("")
    (d / "sub.txt").mkdir()  # a directory matching the glob is skipped
    return d


def test_read_files_when_one_processor_then_all_matching_files_in_sorted_order(books):
    [out] = read_all(read_files_p(books, glob="*.txt"))
    assert out == ["a1", "a2", "b1", "b2", "b3"]


def test_read_files_default_glob_reads_every_regular_file(books):
    [out] = read_all(read_files_p(str(books)))
    assert out == ["a1", "a2", "b1", "b2", "b3", "c1"]


def test_read_files_passes_verify_processor(books):
    verify_processor(read_files_p(books, glob="*.txt")).disable_snapshots().expect_output(
        ["a1", "a2", "b1", "b2", "b3"]
    )


def test_read_files_map_output_fn_gets_file_name_and_line_and_none_drops(books):
    [out] = read_all(read_files_p(books, glob="[ab].txt",
                                  map_output_fn=lambda name, line: None if line.endswith("2") else (name, line)))
    assert out == [("a.txt", "a1"), ("b.txt", "b1"), ("b.txt", "b3")]


def test_read_files_when_not_shared_fs_then_each_member_reads_all_files_split_among_local_processors(books):
    outputs = read_all(read_files_p(books, glob="*.txt"), local_parallelism=2, member_count=2)
    # files a, b, d sorted: local processor 0 reads a and d, local processor 1 reads b, on every member
    assert outputs == [["a1", "a2"], ["b1", "b2", "b3"], ["a1", "a2"], ["b1", "b2", "b3"]]


def test_read_files_when_shared_fs_then_files_split_among_all_processors(books):
    outputs = read_all(read_files_p(books, shared_fs=True), local_parallelism=2, member_count=2)
    # files a.txt, b.txt, c.log, d.txt -> global processors 0, 1, 2, 3
    assert outputs == [["a1", "a2"], ["b1", "b2", "b3"], ["c1"], []]


def test_read_files_strips_line_terminators_and_utf8_bom(tmp_path):
    (tmp_path / "x.txt").write_bytes(b"\xef\xbb\xbfcaf\xc3\xa9\r\nline2\rline3\n\nlast")
    [out] = read_all(read_files_p(tmp_path))
    assert out == ["café", "line2", "line3", "", "last"]


def test_read_files_other_encoding(tmp_path):
    (tmp_path / "x.txt").write_bytes("straße\n".encode("latin-1"))
    [out] = read_all(read_files_p(tmp_path, encoding="latin-1"))
    assert out == ["straße"]


def test_read_files_many_lines_through_small_outbox(tmp_path):
    lines = [f"line {i}" for i in range(20_000)]
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    [out] = read_all(read_files_p(tmp_path), capacity=100)
    assert out == lines


def test_read_files_when_directory_missing_then_error_names_it(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(DagValidationError, match=f"vertex 'read'.*directory '{missing}' does not exist"):
        read_all(read_files_p(missing))


def test_read_files_when_path_is_a_file_then_error_says_not_a_directory(books):
    with pytest.raises(DagValidationError, match="is not a directory"):
        read_all(read_files_p(books / "a.txt"))


def test_read_files_when_bytes_undecodable_then_error_names_file_and_line(tmp_path):
    good = "".join(f"line {i}\n" for i in range(5000))  # far beyond the reader's first decoding chunk
    (tmp_path / "bad.txt").write_bytes(good.encode() + b"ok\nbad \xff\xfe byte\nmore\n")
    with pytest.raises(DagError, match=r"line 5002 of file '.*bad\.txt' as utf-8.*errors='replace'"):
        read_all(read_files_p(tmp_path))


def test_read_files_when_errors_replace_then_undecodable_bytes_replaced(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"ok\nbad \xff byte\n")
    [out] = read_all(read_files_p(tmp_path, errors="replace"))
    assert out == ["ok", "bad \ufffd byte"]


def test_read_files_when_encoding_or_errors_unknown_then_clear_error(tmp_path):
    with pytest.raises(DagValidationError, match="unknown encoding 'klingon'"):
        read_files_p(tmp_path, encoding="klingon")
    with pytest.raises(DagValidationError, match="unknown errors handler 'lenient'"):
        read_files_p(tmp_path, errors="lenient")
    with pytest.raises(DagValidationError, match="map_output_fn must be a function"):
        read_files_p(tmp_path, map_output_fn="upper")


def test_read_files_is_a_meta_supplier_without_preferred_parallelism(tmp_path):
    pms = read_files_p(tmp_path)
    assert isinstance(pms, ProcessorMetaSupplier)
    assert pms.preferred_local_parallelism() is None


def test_read_files_when_no_file_matches_then_driver_warns_or_fails_by_flag(tmp_path, caplog):
    with caplog.at_level("WARNING", logger="jetspark.read_files_p"):
        assert read_all(read_files_p(tmp_path, glob="*.txt")) == [[]]
    assert f"no file in '{tmp_path}' matches '*.txt'" in caplog.text and "fail_if_empty=True" in caplog.text
    with pytest.raises(DagValidationError, match="vertex 'read'.*no file in .* matches"):
        read_files_p(tmp_path, fail_if_empty=True).init(Context(vertex_name="read"))


def test_read_files_when_a_listed_file_is_deleted_before_it_is_read_then_logged_and_skipped(tmp_path, caplog):
    for name in ("a", "b"):
        (tmp_path / name).write_text(f"{name}1\n")
    [proc] = read_files_p(tmp_path).get([0])(0).get(1)
    outbox = Outbox([10])
    proc.init(outbox, Context(vertex_name="read"))
    (tmp_path / "a").unlink()  # listed in init(), gone before it is opened
    with caplog.at_level("WARNING", logger="jetspark.read_files_p"):
        while not proc.complete():
            pass
    assert outbox.drain(0) == ["b1"]
    assert f"file '{tmp_path / 'a'}' was deleted" in caplog.text


# ---------------------------------------------------------------------------------------------- write_file_p


def writer(directory, index=0, **kw):
    """A write_file_p processor driven on its own (no job: it publishes its own file in complete())."""
    pms = write_file_p(directory, **kw)
    [proc] = pms.get([0])(0).get(1)
    proc.init(Outbox([]), Context(vertex_name="write", global_processor_index=index, total_parallelism=index + 1,
                                  local_parallelism=index + 1, local_processor_index=index))
    return proc


def visible_files(directory):
    return sorted(os.listdir(directory))


def test_write_file_writes_one_line_per_item_to_file_named_after_global_index(tmp_path):
    out = tmp_path / "out"
    p = writer(out, index=3)
    p.process(0, Inbox(["a", 1]))
    p.process(0, Inbox([(2, "b")]))
    assert p.complete() is True
    p.close()
    assert visible_files(out) == ["3"]
    assert (out / "3").read_text() == "a\n1\n(2, 'b')\n"


def test_write_file_before_complete_only_a_hidden_temporary_file_exists(tmp_path):
    p = writer(tmp_path)
    p.process(0, Inbox(["a"]))
    [name] = visible_files(tmp_path)
    assert name.startswith(".0.") and name.endswith(".tmp")
    assert p.complete()
    p.close()
    assert visible_files(tmp_path) == ["0"]


def test_write_file_when_job_fails_before_complete_then_close_removes_temp_and_leaves_no_final_file(tmp_path):
    p = writer(tmp_path)
    p.process(0, Inbox(["half"]))
    p.close()  # the job failed: complete() was never called
    assert visible_files(tmp_path) == []


def test_write_file_when_job_fails_then_older_final_file_is_left_untouched(tmp_path):
    (tmp_path / "0").write_text("previous run\n")
    p = writer(tmp_path)
    p.process(0, Inbox(["new"]))
    p.close()
    assert (tmp_path / "0").read_text() == "previous run\n"
    assert visible_files(tmp_path) == ["0"]


def test_write_file_to_string_fn_and_encoding(tmp_path):
    p = writer(tmp_path, to_string_fn=lambda kv: f"{kv[0]}={kv[1]}", encoding="latin-1")
    p.process(0, Inbox([("ß", 1)]))
    p.complete()
    p.close()
    assert (tmp_path / "0").read_bytes() == "ß=1\n".encode("latin-1")


def test_write_file_when_to_string_fn_returns_non_str_then_clear_error(tmp_path):
    p = writer(tmp_path, to_string_fn=lambda x: x)
    expected = r"vertex 'write'.*to_string_fn returned 5 \(int\) for item 5; it must return a str"
    with pytest.raises(DagError, match=expected):
        p.process(0, Inbox(["a", 5]))
    p.close()
    assert visible_files(tmp_path) == []


def test_write_file_with_no_items_writes_an_empty_file(tmp_path):
    p = writer(tmp_path / "new" / "dir")
    assert p.complete()
    p.close()
    assert (tmp_path / "new" / "dir" / "0").read_text() == ""


def run_job_writers(directory, batches, *args, error=None, **kw):
    """The job lifecycle of write_file_p: meta init on the driver, one processor per batch, meta close."""
    def numbered():
        return {n: (directory / n).read_text() for n in visible_files(directory) if n.isdigit()}

    before = numbered()
    pms = write_file_p(directory, *args, **kw)
    pms.init(Context(vertex_name="write", total_parallelism=len(batches), local_parallelism=len(batches)))
    supplier = pms.get([0])(0)
    procs = supplier.get(len(batches))
    for i, (proc, items) in enumerate(zip(procs, batches)):
        proc.init(Outbox([]), Context(vertex_name="write", global_processor_index=i, local_processor_index=i,
                                      total_parallelism=len(batches), local_parallelism=len(batches)))
        proc.process(0, Inbox(items))
        if error is None or i == 0:  # on failure, only the first processor got to complete()
            assert proc.complete()
        proc.close()
    assert numbered() == before  # nothing published before the job ends
    pms.close(error)
    assert not [n for n in visible_files(directory) if n.startswith(".")]  # nothing staged remains


def test_write_file_in_a_job_when_it_succeeds_then_all_files_published_together_and_stale_ones_removed(tmp_path):
    for name in ("0", "1", "2", "3", "notes.txt"):
        (tmp_path / name).write_text("old\n")
    run_job_writers(tmp_path, [["a"], ["b", "c"]])
    assert visible_files(tmp_path) == ["0", "1", "notes.txt"]  # 2 and 3 were stale: replaced by this run's set
    assert (tmp_path / "0").read_text() == "a\n" and (tmp_path / "1").read_text() == "b\nc\n"


def test_write_file_in_a_job_when_it_fails_then_nothing_published_and_nothing_staged(tmp_path):
    (tmp_path / "0").write_text("old\n")
    run_job_writers(tmp_path, [["a"], ["b"]], error=RuntimeError("failed"))
    assert visible_files(tmp_path) == ["0"] and (tmp_path / "0").read_text() == "old\n"


def test_write_file_when_manual_form_with_append_then_lines_appended_and_nothing_removed(tmp_path):
    (tmp_path / "0").write_text("old\n")
    (tmp_path / "5").write_text("old\n")
    run_job_writers(tmp_path, [["a"], ["b"]], str, "utf-8", True)  # writeFileP(dir, toStringFn, charset, append)
    assert visible_files(tmp_path) == ["0", "1", "5"]
    assert (tmp_path / "0").read_text() == "old\na\n" and (tmp_path / "1").read_text() == "b\n"
    p = writer(tmp_path, append=True)  # on its own too
    p.process(0, Inbox(["c"]))
    p.complete()
    p.close()
    assert (tmp_path / "0").read_text() == "old\na\nc\n"


def test_write_file_when_path_is_a_file_then_is_not_a_directory(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(DagValidationError, match="'.*file' is not a directory"):
        write_file_p(path).init(Context(vertex_name="write"))
    with pytest.raises(DagValidationError, match="is not a directory"):
        writer(path)


def test_write_file_when_item_text_has_newline_then_written_as_is_over_two_lines(tmp_path):
    p = writer(tmp_path)
    p.process(0, Inbox(["one\ntwo"]))
    p.complete()
    p.close()
    assert (tmp_path / "0").read_text().splitlines() == ["one", "two"]  # documented: escape in to_string_fn


def test_write_file_when_arguments_invalid_then_clear_error(tmp_path):
    with pytest.raises(DagValidationError, match="to_string_fn must be a function"):
        write_file_p(tmp_path, to_string_fn=None)
    with pytest.raises(DagValidationError, match="unknown encoding"):
        write_file_p(tmp_path, encoding="nope")


# ---------------------------------------------------------------------------------------------- Spark text markers


def test_read_text_p_is_runtime_bound_spark_text_source_with_path(tmp_path):
    src = read_text_p(tmp_path / "in")
    assert isinstance(src, RuntimeBound) and isinstance(src, ProcessorMetaSupplier)
    assert src.runtime_kind == "spark_text_source"
    assert src.path == str(tmp_path / "in")


def test_write_text_p_is_runtime_bound_spark_text_sink_with_path_and_to_string_fn():
    fn = lambda x: f"<{x}>"  # noqa: E731
    sink = write_text_p("hdfs:///out", to_string_fn=fn)
    assert isinstance(sink, RuntimeBound)
    assert sink.runtime_kind == "spark_text_sink"
    assert sink.path == "hdfs:///out" and sink.to_string_fn is fn
    assert write_text_p("x").to_string_fn is str


def test_spark_text_suppliers_when_asked_for_processors_then_explain_they_need_an_engine():
    with pytest.raises(DagValidationError, match="only runs inside an Engine"):
        read_text_p("x").get([0])
    with pytest.raises(DagValidationError, match="only runs inside an Engine"):
        write_text_p("x").get([0])


def test_spark_text_when_path_or_fn_invalid_then_clear_error():
    with pytest.raises(DagValidationError, match="read_text_p: path must be a non-empty str"):
        read_text_p("")
    with pytest.raises(DagValidationError, match="write_text_p: to_string_fn must be a function"):
        write_text_p("out", to_string_fn=3)


def test_read_files_when_lines_span_many_chunks_then_each_emitted_whole(tmp_path, monkeypatch):
    """Long lines used to be re-concatenated once per chunk (quadratic); they must come out whole and exact."""
    from processors.io import files

    monkeypatch.setattr(files, "_READ_CHUNK_CHARS", 16)
    long_line = "".join(chr(ord("a") + i % 26) for i in range(100_000))
    lines = ["", "short", long_line, "x" * 16, "y" * 17, long_line[:33], ""]
    (tmp_path / "long.txt").write_text("\n".join(lines) + "tail-without-newline")
    [out] = read_all(read_files_p(tmp_path), capacity=3)
    assert out == lines[:-1] + ["tail-without-newline"]


def live_job_writers(directory, count, *args, job_id=1, guarantee=None, pms=None, **kw):
    """The driver and processor side of write_file_p in an unbounded (pipelined stream) job, initialised
    (``pms``: the meta supplier of an execution before, as a restart inits it again)."""
    common = dict(vertex_name="write", job_id=job_id, total_parallelism=count, local_parallelism=count,
                  unbounded=True, processing_guarantee=guarantee)
    pms = pms or write_file_p(directory, *args, **kw)
    pms.init(Context(**common))
    procs = pms.get([0])(0).get(count)
    for i, proc in enumerate(procs):
        proc.init(Outbox([]), Context(global_processor_index=i, local_processor_index=i, **common))
    return pms, procs


def test_write_file_when_unbounded_then_lines_reach_the_final_file_when_the_inbox_drains(tmp_path):
    (tmp_path / "0").write_text("old\n")
    (tmp_path / "7").write_text("stale\n")
    pms, [p] = live_job_writers(tmp_path, 1)
    assert visible_files(tmp_path) == ["0"]  # the earlier run's numbered files are replaced at the start
    p.process(0, Inbox(["a", "b"]))
    assert p.try_process() is True  # the inbox drained: flushed
    assert (tmp_path / "0").read_text() == "a\nb\n"
    p.process(0, Inbox(["c"]))
    p.close()
    pms.close(RuntimeError("cancelled"))  # a stream job ends failed: what was written stays
    assert visible_files(tmp_path) == ["0"] and (tmp_path / "0").read_text() == "a\nb\nc\n"


def test_write_file_when_unbounded_and_items_keep_coming_then_flushed_within_the_interval(tmp_path, monkeypatch):
    import processors.io.file_writer as files

    clock = [100.0]
    monkeypatch.setattr(files.time, "monotonic", lambda: clock[0])
    _, [p] = live_job_writers(tmp_path, 1)
    p.process(0, Inbox(["a"]))
    clock[0] += files.LIVE_FLUSH_SECONDS / 2
    p.process(0, Inbox(["b"]))
    assert (tmp_path / "0").read_text() == ""  # buffered: the inbox never drained
    clock[0] += files.LIVE_FLUSH_SECONDS
    p.process(0, Inbox(["c"]))
    assert (tmp_path / "0").read_text() == "a\nb\nc\n"
    p.close()


def test_write_file_when_unbounded_job_restarts_then_earlier_lines_kept_and_new_ones_appended(tmp_path):
    pms, [p] = live_job_writers(tmp_path, 1)
    p.process(0, Inbox(["a"]))
    p.close()
    pms, [p] = live_job_writers(tmp_path, 1, pms=pms)  # the restart inits the meta supplier again: no replace
    p.process(0, Inbox(["b"]))
    p.close()
    assert (tmp_path / "0").read_text() == "a\nb\n"
    live_job_writers(tmp_path, 1, job_id=2, pms=pms)[1][0].close()  # the next job with this DAG replaces
    assert (tmp_path / "0").read_text() == ""


def test_write_file_when_unbounded_and_append_then_existing_files_kept(tmp_path):
    (tmp_path / "0").write_text("old\n")
    (tmp_path / "3").write_text("other\n")
    _, [p] = live_job_writers(tmp_path, 1, append=True)
    p.process(0, Inbox(["new"]))
    p.try_process()
    p.close()
    assert visible_files(tmp_path) == ["0", "3"] and (tmp_path / "0").read_text() == "old\nnew\n"


def test_write_file_exactly_once_when_unbounded_without_exactly_once_guarantee_then_live_too(tmp_path):
    from dag.config import ProcessingGuarantee

    _, [p] = live_job_writers(tmp_path, 1, exactly_once=True, guarantee=ProcessingGuarantee.AT_LEAST_ONCE)
    p.process(0, Inbox(["a"]))
    p.try_process()
    assert visible_files(tmp_path) == ["0"] and (tmp_path / "0").read_text() == "a\n"
    p.close()
