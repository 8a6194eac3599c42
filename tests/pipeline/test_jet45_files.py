"""Jet 4.5's file connector on Spark (issue 27, part 4): FileSources with every FileFormat, Sources.json,
Sources.files_builder, Sinks.json, and the errors naming file and line (short CSV row, JSON that does not parse,
a class that cannot take the fields, no matching file with fail_if_empty)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from dag import JobFailedError
from dag.errors import DagValidationError
from pipeline import FileFormat, FileSources, Pipeline, Sinks, Sources, TestSources
from tests.support import running, unique, wait_for

pytestmark = pytest.mark.spark


class Person(NamedTuple):
    name: str
    age: str


def _write(directory: Path, files: dict) -> Path:
    directory.mkdir(exist_ok=True)
    for name, content in files.items():
        (directory / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    return directory


def test_file_formats_when_read_then_items_as_plain_python_reads_them(engine, tmp_path) -> None:
    text = _write(tmp_path / "text", {"a.txt": "one\ntwo\n", "b.txt": "three\n", "c.log": "skip\n"})
    people = _write(tmp_path / "csv", {"p.csv": "name,age\nAnn,30\nBo,5\n"})
    lines = _write(tmp_path / "json", {"p.jsonl": '{"name": "Cy", "age": "7"}\n\n{"name": "Di", "age": "9"}\n'})
    out = {kind: unique(kind) for kind in ("lines", "text", "bytes", "csv", "csv_cls", "json", "json_cls", "built")}
    p = Pipeline.create()
    sources = {
        "lines": FileSources.files(text).glob("*.txt").format(FileFormat.lines()).build(),
        "text": FileSources.files(text).glob("*.txt").format(FileFormat.text()).build(),
        "bytes": FileSources.files(text).glob("*.txt").format(FileFormat.bytes()).build(),
        "csv": FileSources.files(people).format(FileFormat.csv()).build(),
        "csv_cls": FileSources.files(people).format(FileFormat.csv(Person)).build(),
        "json": Sources.json(lines),
        "json_cls": FileSources.files(lines).format(FileFormat.json(Person)).build(),
        "built": Sources.files_builder(text).glob("b*").build(lambda name, line: f"{name}:{line}"),
    }
    for kind, source in sources.items():
        p.read_from(source).write_to(Sinks.list(out[kind]))
    engine.new_job(p).join(timeout=300)
    got = {kind: sorted(engine.get_list(name), key=repr) for kind, name in out.items()}
    for name in out.values():
        engine.get_list(name).clear()
    txt = sorted(text.glob("*.txt"))
    assert got["lines"] == sorted(line for f in txt for line in f.read_text().splitlines())
    assert got["text"] == sorted(f.read_text() for f in txt)
    assert got["bytes"] == sorted(f.read_bytes() for f in txt)
    assert got["csv"] == sorted([{"name": "Ann", "age": "30"}, {"name": "Bo", "age": "5"}], key=repr)
    assert got["csv_cls"] == sorted([Person("Ann", "30"), Person("Bo", "5")], key=repr)
    assert got["json"] == [{"name": "Cy", "age": "7"}, {"name": "Di", "age": "9"}]
    assert got["json_cls"] == [Person("Cy", "7"), Person("Di", "9")]
    assert got["built"] == ["b.txt:three"]


def test_json_sink_when_written_then_each_line_is_the_item_as_json(engine, tmp_path) -> None:
    items = [Person("Ann", "30"), Person("Bo", "5")]
    p = Pipeline.create()
    p.read_from(Sources.list(_filled(engine, items))).write_to(Sinks.json(tmp_path / "out"))
    engine.new_job(p).join(timeout=300)
    lines = [line for f in (tmp_path / "out").iterdir() for line in f.read_text().splitlines()]
    assert sorted(json.loads(line)["name"] for line in lines) == ["Ann", "Bo"]


def _filled(engine, items: list) -> str:
    name = unique("items")
    engine.get_list(name).extend(items)
    return name


@pytest.mark.parametrize("kind, content, fmt, text", [
    ("csv", "name,age\nAnn,30\nBo\n", FileFormat.csv(), "line 3 has 1 fields, expected 2 (name, age)"),
    ("json", '{"name": "Cy"}\n{"name": \n', FileFormat.json(), "line 2 is not JSON"),
    ("cls", '{"name": "Cy", "height": 3}\n', FileFormat.json(Person), "Person cannot take the fields"),
])
def test_bad_file_content_when_read_then_job_fails_naming_file_and_line(engine, tmp_path, kind, content, fmt,
                                                                       text) -> None:
    directory = _write(tmp_path / kind, {"in.txt": content})
    p = Pipeline.create()
    p.read_from(FileSources.files(directory).format(fmt).build()).write_to(Sinks.noop())
    with pytest.raises(JobFailedError) as info:
        engine.new_job(p).join(timeout=300)
    assert text in str(info.value) and str(directory / "in.txt") in str(info.value)


def test_fail_if_empty_when_no_file_matches_then_error_at_build(tmp_path) -> None:
    with pytest.raises(DagValidationError, match="no file matches '\\*.csv'"):
        FileSources.files(tmp_path).glob("*.csv").fail_if_empty(True).build()



def test_file_and_json_watchers_when_lines_appended_then_streamed(engine, tmp_path) -> None:
    watched = _write(tmp_path / "watched", {"old.log": "before the job\n"})
    events = _write(tmp_path / "events", {})
    lines_out, json_out = unique("watched"), unique("json-watched")
    p = Pipeline.create()
    p.read_from(Sources.file_watcher(watched)).without_timestamps().write_to(Sinks.list(lines_out))
    p.read_from(Sources.json_watcher(events, Person)).without_timestamps().write_to(Sinks.list(json_out))

    def appended() -> bool:  # keep appending until the job has started watching and streamed both
        with open(watched / "old.log", "a") as f:
            f.write("appended\n")
        with open(events / "new.jsonl", "a") as f:
            f.write('{"name": "Ed", "age": "1"}\n')
        return bool(engine.get_list(lines_out)) and bool(engine.get_list(json_out))

    with running(engine, p, join_timeout=120):
        wait_for(appended, 120, "lines streamed from both watched directories", interval=0.5)
    lines, people = list(engine.get_list(lines_out)), list(engine.get_list(json_out))
    engine.get_list(lines_out).clear()
    engine.get_list(json_out).clear()
    assert lines and set(lines) == {"appended"}  # the line there before the job started is not read
    assert people and set(people) == {Person("Ed", "1")}


def test_files_builder_sink_when_rolling_by_size_and_date_then_small_dated_files_in_order(engine, tmp_path) -> None:
    import time as _time

    items = [f"line-{i:03d}" for i in range(60)]  # 9 bytes a line with its newline
    out = tmp_path / "rolled"
    p = Pipeline.create()
    (p.read_from(TestSources.items(items))
     .write_to(Sinks.files_builder(out).to_string_fn(str.upper).roll_by_date("YYYY-MM-dd")
               .roll_by_file_size(40).build())
     .set_local_parallelism(1))  # one writer: its files hold the items in order
    before = _time.strftime("%Y-%m-%d")
    engine.new_job(p).join(timeout=300)
    after = _time.strftime("%Y-%m-%d")
    files = sorted(out.iterdir(), key=lambda f: int(f.name.rsplit("-", 1)[1]))
    assert all(f.name.startswith((before, after)) and f.stat().st_size <= 40 for f in files)
    assert len(files) == -(-60 // 4)  # four 9-byte lines fit in 40 bytes
    assert [line for f in files for line in f.read_text().splitlines()] == [i.upper() for i in items]


def test_files_builder_sink_when_bad_arguments_then_errors_at_build(tmp_path) -> None:
    with pytest.raises(DagValidationError, match="roll_by_file_size\\(max_bytes\\) needs an int >= 1, got 0"):
        Sinks.files_builder(tmp_path).roll_by_file_size(0)
    assert Sinks.files_builder(tmp_path).build().name == f"filesSink({tmp_path})"
