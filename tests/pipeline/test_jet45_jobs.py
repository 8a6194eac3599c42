"""Jet 4.5's names run on Spark with results computed in plain Python: sources given the driver objects, map
source predicate and projection, builder-made operations, the multi-input aggregate2/aggregate3, services and
ingestion timestamps (issue 27)."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from pipeline import AggregateOperation, Pipeline, ServiceFactories, Sinks, Sources, TestSources, WindowDefinition
from processors import counting
from tests.support import running, unique, wait_for

pytestmark = pytest.mark.spark


def _run(engine, p: Pipeline, sink: str) -> list:
    engine.new_job(p).join(timeout=300)
    out = list(engine.get_list(sink))
    engine.get_list(sink).clear()
    return out


def _summing_builder() -> AggregateOperation:
    """Jet's how-to sample: a mutable accumulator, functions returning nothing."""
    return (AggregateOperation.with_create(lambda: [0])
            .and_accumulate(lambda acc, x: acc.__setitem__(0, acc[0] + x))
            .and_combine(lambda left, right: left.__setitem__(0, left[0] + right[0]))
            .and_export_finish(lambda acc: acc[0]))


def test_sources_when_given_driver_list_and_map_objects_then_read_them(engine) -> None:
    words = engine.get_list(unique("words"))
    words.extend(["a", "bb", "ccc"])
    prices = engine.get_map(unique("prices"))
    prices.update({"x": 1, "y": 5, "z": 9})
    out = unique("out")
    p = Pipeline.create()
    p.read_from(Sources.list(words)).map(len).write_to(Sinks.list(out))
    p.read_from(Sources.map(prices, lambda e: e[1] > 2, lambda e: e[0].upper())).write_to(Sinks.list(out))
    assert sorted(_run(engine, p, out), key=str) == sorted([1, 2, 3, "Y", "Z"], key=str)


def test_builder_op_when_aggregated_and_grouped_then_sums(engine) -> None:
    items = list(range(1, 41))
    out = unique("out")
    p = Pipeline.create()
    stage = p.read_from(TestSources.items(items))
    stage.aggregate(_summing_builder()).write_to(Sinks.list(out))
    stage.grouping_key(lambda x: x % 3).aggregate(_summing_builder()).write_to(Sinks.list(out))
    expected_groups = Counter()
    for x in items:
        expected_groups[x % 3] += x
    assert sorted(_run(engine, p, out), key=str) == sorted([sum(items), *expected_groups.items()], key=str)


def test_aggregate2_and_aggregate3_when_one_multi_input_op_then_its_result(engine) -> None:
    left, right, third = ["a", "bb", "cc"], ["xx", "y", "zz", "zz"], ["q"]
    op2 = (AggregateOperation.with_create(lambda: [0, 0])
           .and_accumulate0(lambda acc, x: acc.__setitem__(0, acc[0] + 1))
           .and_accumulate1(lambda acc, x: acc.__setitem__(1, acc[1] + 1))
           .and_combine(lambda a, b: [a[0] + b[0], a[1] + b[1]])
           .and_export_finish(tuple))
    op3 = (AggregateOperation.with_create(lambda: "")
           .and_accumulate0(lambda acc, x: acc + "L").and_accumulate1(lambda acc, x: acc + "R")
           .and_accumulate2(lambda acc, x: acc + "T")
           .and_export_finish(lambda acc: "".join(sorted(acc))))  # no combine_fn: one vertex, as Jet
    out = unique("out")
    p = Pipeline.create()
    s0, s1, s2 = (p.read_from(TestSources.items(items)) for items in (left, right, third))
    s0.aggregate2(s1, op2).map(lambda r: ("all", r)).write_to(Sinks.list(out))
    s0.grouping_key(len).aggregate2(s1.grouping_key(len), op2).write_to(Sinks.list(out))
    s0.grouping_key(len).aggregate3(s1.grouping_key(len), s2.grouping_key(len), op3).map(
        lambda e: ("three", e)).write_to(Sinks.list(out))
    expected = [("all", (3, 4)), (1, (1, 1)), (2, (2, 3)), ("three", (1, "LRT")), ("three", (2, "LLRRR"))]
    assert sorted(_run(engine, p, out), key=str) == sorted(expected, key=str)


def test_using_service_when_shared_and_keyed_then_functions_get_the_service(engine) -> None:
    rates = ServiceFactories.shared_service(lambda ctx: {"EUR": 2, "USD": 3})
    seen = ServiceFactories.non_shared_service(lambda: set())
    trades = [("EUR", 10), ("USD", 1), ("EUR", 1), ("GBP", 4)]
    out = unique("out")
    p = Pipeline.create()
    (p.read_from(TestSources.items(trades))
     .filter_using_service(rates, lambda r, t: t[0] in r)
     .map_using_service(rates, lambda r, t: (t[0], t[1] * r[t[0]]))
     .grouping_key(lambda t: t[0])
     .flat_map_using_service(seen, lambda s, key, t: [] if key in s or s.add(key) else [t])
     .write_to(Sinks.list(out)))
    results = dict(_run(engine, p, out))  # the first trade of each key that reaches its processor
    assert results.keys() == {"EUR", "USD"} and results["EUR"] in (20, 2) and results["USD"] == 3


def test_with_ingestion_timestamps_when_windowed_then_windows_end_near_now(engine) -> None:
    out = unique("ingest")
    start = time.time() * 1000
    p = Pipeline.create()
    (p.read_from(TestSources.item_stream(200)).with_ingestion_timestamps()
     .window(WindowDefinition.tumbling(200)).aggregate(counting()).write_to(Sinks.list(out)))
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(engine.get_list(out)) >= 3, 120, "3 window results")
    results = list(engine.get_list(out))
    engine.get_list(out).clear()
    assert all(r.timestamp % 200 == 0 and start <= r.timestamp <= time.time() * 1000 + 200 for r in results)
    assert all(r.item >= 1 for r in results)
