"""Every chapter-4 operation of the pipeline contract, run on the staged Spark runtime with known results."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from dag import JobFailedError
from pipeline import JoinClause, Pipeline, Sinks, Sources, TestSources
from processors import (
    ContextFactory,
    ProcessorMetaSupplier,
    counting,
    map_p,
    max_by,
    read_list_p,
    summing,
    to_list,
    to_set,
    verify_processor,
    whole_item,
)

pytestmark = pytest.mark.spark


def _run(engine, p: Pipeline, sinks: tuple[str, ...] = ("out",)) -> list | dict:
    for name in sinks:
        engine.get_list(name).clear()
    engine.new_job(p).join(timeout=300)
    results = [list(engine.get_list(name)) for name in sinks]
    for name in sinks:  # the driver-side lists are shared by every test of the session
        engine.get_list(name).clear()
    return results[0] if len(results) == 1 else results


def test_stateless_stages_when_run_then_map_filter_flat_map_results(engine) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.items("a b", "c", "", "d e f"))
     .flat_map(str.split).map(str.upper).filter(lambda w: w != "C").map(lambda w: None if w == "F" else w)
     .write_to(Sinks.list("out")))
    assert sorted(_run(engine, p)) == ["A", "B", "D", "E"]


def test_using_context_stages_when_run_then_functions_get_the_context(engine) -> None:
    p = Pipeline.create()
    ctx = ContextFactory.with_create_fn(lambda: {"a": 1, "b": 2})
    (p.read_from(TestSources.items("a", "b", "z"))
     .filter_using_context(ctx, lambda table, w: w in table)
     .map_using_context(ctx, lambda table, w: (w, table[w]))
     .flat_map_using_context(ctx, lambda table, e: [e] * e[1])
     .write_to(Sinks.list("out")))
    assert sorted(_run(engine, p)) == [("a", 1), ("b", 2), ("b", 2)]


def test_keyed_map_using_context_when_run_then_fn_gets_ctx_key_and_item(engine) -> None:
    p = Pipeline.create()
    ctx = ContextFactory.with_create_fn(lambda: "ctx")
    (p.read_from(TestSources.items("apple", "avocado", "banana")).set_local_parallelism(1)
     .grouping_key(lambda s: s[0])
     .map_using_context(ctx, lambda c, key, item: f"{c}:{key}:{item}")
     .write_to(Sinks.list("out")))
    assert sorted(_run(engine, p)) == ["ctx:a:apple", "ctx:a:avocado", "ctx:b:banana"]


def test_merge_and_sources_when_run_then_items_of_both_stages(engine, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("line one\nline two\n", encoding="utf-8")
    engine.get_list("in-list")[:] = ["from list"]
    engine.get_map("in-map").clear()
    engine.get_map("in-map").update({"k": "v"})
    p = Pipeline.create()
    files = p.read_from(Sources.files(str(tmp_path)))
    listed = p.read_from(Sources.list("in-list"))
    mapped = p.read_from(Sources.map("in-map")).map(lambda e: f"{e[0]}={e[1]}")
    custom = p.read_from(Sources.batch_from_processor("custom", read_list_p("in-list"))).map(str.upper)
    files.merge(listed).merge(mapped).merge(custom).write_to(Sinks.list("out"))
    assert sorted(_run(engine, p)) == ["FROM LIST", "from list", "k=v", "line one", "line two"]


def test_aggregate_when_unkeyed_then_one_result(engine) -> None:
    p = Pipeline.create()
    p.read_from(TestSources.items(list(range(1, 101)))).aggregate(summing()).write_to(Sinks.list("out"))
    assert _run(engine, p) == [5050]


def test_aggregate2_and_3_when_unkeyed_then_tuple_of_results(engine) -> None:
    p = Pipeline.create()
    a = p.read_from(TestSources.items(1, 2, 3))
    b = p.read_from(TestSources.items("x", "y"))
    c = p.read_from(TestSources.items(10, 20))
    a.aggregate2(summing(), b, counting()).write_to(Sinks.list("pipeline-two"))
    a.aggregate3(counting(), b, to_set(), c, max_by()).write_to(Sinks.list("pipeline-three"))
    two, three = _run(engine, p, ("pipeline-two", "pipeline-three"))
    assert two == [(6, 2)]
    assert three == [(3, {"x", "y"}, 20)]


def test_group_and_aggregate_when_keyed_then_entries_per_key(engine) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.items("a", "bb", "cc", "ddd", "e"))
     .grouping_key(len).aggregate(counting()).write_to(Sinks.map("lengths")))
    engine.get_map("lengths").clear()
    engine.new_job(p).join(timeout=300)
    assert dict(engine.get_map("lengths")) == {1: 2, 2: 2, 3: 1}


def test_keyed_aggregate3_when_map_to_output_fn_then_applied_per_key(engine) -> None:
    p = Pipeline.create()
    a = p.read_from(TestSources.items(("u1", 1), ("u1", 2), ("u2", 5))).grouping_key(lambda e: e[0])
    b = p.read_from(TestSources.items([("u1", "x")])).grouping_key(lambda e: e[0])
    c = p.read_from(TestSources.items(("u2", 9), ("u3", 1))).grouping_key(lambda e: e[0])
    a.aggregate3(summing(lambda e: e[1]), b, counting(), c, counting(),
                 lambda key, total, bs, cs: f"{key}:{total}/{bs}/{cs}").write_to(Sinks.list("out"))
    assert sorted(_run(engine, p)) == ["u1:3/1/0", "u2:5/0/1", "u3:0/0/1"]


def test_distinct_when_run_then_each_item_or_key_once(engine) -> None:
    p = Pipeline.create()
    items = p.read_from(TestSources.items("ab", "ab", "ac", "b", "b"))
    items.distinct().write_to(Sinks.list("all"))
    items.grouping_key(lambda s: s[0]).distinct().map(lambda s: s[0]).write_to(Sinks.list("by-key"))
    distinct, by_key = _run(engine, p, ("all", "by-key"))
    assert sorted(distinct) == ["ab", "ac", "b"]
    assert sorted(by_key) == ["a", "b"]


def test_rolling_aggregate_when_keyed_then_current_result_per_item(engine) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.items(("x", 3), ("y", 1), ("x", 7), ("x", 2)))
     .grouping_key(lambda t: t[0]).rolling_aggregate(max_by(lambda t: t[1]))
     .map(lambda e: (e[0], e[1][1])).write_to(Sinks.list("out")))
    results = _run(engine, p)
    assert [r for r in results if r[0] == "x"] == [("x", 3), ("x", 7), ("x", 7)]  # in order within a key
    assert [r for r in results if r[0] == "y"] == [("y", 1)]


def test_rolling_aggregate_when_unkeyed_then_running_result_in_one_processor(engine) -> None:
    p = Pipeline.create()
    p.read_from(TestSources.items(1, 2, 3, 4)).rolling_aggregate(summing()).write_to(Sinks.list("out"))
    assert _run(engine, p) == [1, 3, 6, 10]


def test_hash_join_when_left_item_has_no_match_then_joined_with_none(engine) -> None:
    engine.get_map("names").clear()
    engine.get_map("names").update({1: "one", 2: "two"})
    p = Pipeline.create()
    left = p.read_from(TestSources.items(1, 2, 3))
    left.hash_join(p.read_from(Sources.map("names")), JoinClause.join_map_entries(whole_item),
                   lambda n, name: (n, name)).write_to(Sinks.list("out"))
    assert sorted(_run(engine, p)) == [(1, "one"), (2, "two"), (3, None)]


def test_hash_join_when_on_keys_with_projection_then_projected_right_items(engine) -> None:
    p = Pipeline.create()
    left = p.read_from(TestSources.items("apple", "banana"))
    right = p.read_from(TestSources.items(("a", 1), ("b", 2)))
    clause = JoinClause.on_keys(lambda s: s[0], lambda r: r[0]).project_right(lambda r: r[1])
    left.hash_join(right, clause, lambda s, n: f"{s}{n}").write_to(Sinks.list("out"))
    assert sorted(_run(engine, p)) == ["apple1", "banana2"]


def test_peek_custom_transform_and_logger_when_run_then_items_pass_through_the_peeked_vertex(engine, caplog) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.items(1, 2)).map(lambda x: x * 10).set_name("times-ten").peek()
     .custom_transform("plus-one", map_p(lambda x: x + 1))
     .write_to(Sinks.list("out")))
    assert sorted(_run(engine, p)) == [11, 21]
    # the peeked vertex's processors log what they emit (checked in-process: worker logs stay on the workers)
    with caplog.at_level(logging.INFO, logger="jetspark"):
        verify_processor(p.to_dag().get_vertex("times-ten").supplier).disable_snapshots().input([1, 2]) \
            .expect_output([10, 20])
    assert {r.getMessage() for r in caplog.records} >= {"Output to ordinal 0: 10", "Output to ordinal 0: 20"}


def test_file_noop_and_processor_sinks_when_run_then_each_receives(engine, tmp_path: Path) -> None:
    p = Pipeline.create()
    items = p.read_from(TestSources.items("x", "y"))
    items.write_to(Sinks.files(str(tmp_path / "out"), to_string_fn=str.upper))
    items.write_to(Sinks.noop())
    items.write_to(Sinks.from_processor("custom-sink", ProcessorMetaSupplier.of(map_p(str))))
    engine.new_job(p).join(timeout=300)
    lines = sorted(line for f in (tmp_path / "out").iterdir() for line in f.read_text().splitlines())
    assert lines == ["X", "Y"]


def test_grouping_key_when_key_fn_returns_none_then_job_fails_naming_the_stage(engine) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.items("a", "b")).grouping_key(lambda s: None if s == "b" else s)
     .aggregate(counting()).write_to(Sinks.list("out")))
    with pytest.raises(JobFailedError, match=r"Null key from the key function of stage 'group-and-aggregate'"):
        engine.new_job(p).join(timeout=300)


def test_set_local_parallelism_when_set_then_vertex_runs_with_it(engine) -> None:
    p = Pipeline.create()
    p.read_from(TestSources.items(1, 2, 3)).map(str).set_local_parallelism(3).write_to(Sinks.list("out"))
    assert p.to_dag().get_vertex("map").local_parallelism == 3
    assert sorted(_run(engine, p)) == ["1", "2", "3"]
    assert engine.plan(p).explain().count("map") >= 1


def test_aggregate_when_to_list_over_items_then_all_items(engine) -> None:
    p = Pipeline.create()
    p.read_from(TestSources.items(3, 1, 2)).aggregate(to_list()).map(sorted).write_to(Sinks.list("out"))
    assert _run(engine, p) == [[1, 2, 3]]


def test_peek_and_logger_sink_when_run_then_their_records_reach_the_driver(engine, caplog) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.items(1, 2)).map(lambda x: x * 10).set_name("times-ten").peek()
     .write_to(Sinks.logger(lambda x: f"got {x}")))
    with caplog.at_level(logging.INFO, logger="jetspark"):
        engine.new_job(p).join(timeout=300)
    peeked = sorted(r.getMessage() for r in caplog.records if r.name.startswith("jetspark.times-ten#"))
    assert peeked == ["Output to ordinal 0: 10", "Output to ordinal 0: 20"]
    logged = sorted(r.getMessage() for r in caplog.records if r.name.startswith("jetspark.loggerSink#"))
    assert logged == ["got 10", "got 20"]
