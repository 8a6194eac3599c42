"""``map_using_imap`` and ``map_using_replicated_map`` on Spark (issue 27): lookups in driver maps on both
runtimes (a missing key gives ``None``, a ``None`` result drops the item), the keyed forms, and a stream job
seeing a change of the map made while it runs."""

from __future__ import annotations

import pytest

from dag import ExecutionMode, JobConfig
from pipeline import Pipeline, Sinks, TestSources
from tests.support import running, unique, wait_for

pytestmark = pytest.mark.spark

ITEMS = list(range(40))


def _prices(target: dict) -> dict:
    target.update({k: k * 100 for k in range(0, 30, 3)})
    target[1] = "skip"
    return dict(target)


def _expected(prices: dict) -> list:
    return sorted((x, prices.get(x)) for x in ITEMS if prices.get(x) != "skip")


@pytest.mark.parametrize("mode", [ExecutionMode.STAGED, ExecutionMode.PIPELINED])
def test_map_using_imap_when_run_then_values_looked_up_missing_none_and_none_results_dropped(engine, mode) -> None:
    name, out, keyed = unique("prices"), unique("imap"), unique("imap-keyed")
    prices = _prices(engine.get_map(name))
    p = Pipeline.create()
    src = p.read_from(TestSources.items(ITEMS))
    src.map_using_imap(engine.get_map(name), lambda x: x,
                       lambda x, price: None if price == "skip" else (x, price)).write_to(Sinks.list(out))
    (src.grouping_key(lambda x: x).map_using_imap(name, lambda x, price: None if price == "skip" else (x, price))
     .write_to(Sinks.list(keyed)))
    engine.new_job(p, JobConfig(execution_mode=mode)).join(timeout=300)
    assert sorted(engine.get_list(out)) == _expected(prices)
    assert sorted(engine.get_list(keyed)) == _expected(prices)


@pytest.mark.parametrize("mode", [ExecutionMode.STAGED, ExecutionMode.PIPELINED])
def test_map_using_replicated_map_when_run_then_every_processor_finds_the_values(engine, mode) -> None:
    name, out = unique("replicated"), unique("rep")
    prices = _prices(engine.get_replicated_map(name))
    assert name not in [k for k in engine.get_map(name)]  # a namespace of its own: get_map(name) is another map
    p = Pipeline.create()
    (p.read_from(TestSources.items(ITEMS)).rebalance()
     .map_using_replicated_map(engine.get_replicated_map(name), lambda x: x,
                               lambda x, price: None if price == "skip" else (x, price))
     .write_to(Sinks.list(out)))
    engine.new_job(p, JobConfig(execution_mode=mode)).join(timeout=300)
    assert sorted(engine.get_list(out)) == _expected(prices)


@pytest.mark.parametrize("lookup", ["imap", "replicated"])
def test_lookup_when_map_changes_while_stream_runs_then_later_items_see_the_new_value(engine, lookup) -> None:
    name, out = unique(f"live-{lookup}"), unique("live-out")
    target = engine.get_map(name) if lookup == "imap" else engine.get_replicated_map(name)
    target["rate"] = "old"
    p = Pipeline.create()
    stage = p.read_from(TestSources.item_stream(100, lambda ts, seq: seq)).without_timestamps()
    looked_up = (stage.map_using_imap(name, lambda seq: "rate", lambda seq, rate: [rate]) if lookup == "imap" else
                 stage.map_using_replicated_map(name, lambda seq: "rate", lambda seq, rate: [rate]))
    looked_up.write_to(Sinks.list(out))

    def rates() -> list:
        return [rate for rate, in list(engine.get_list(out))]

    with running(engine, p, join_timeout=120):
        wait_for(lambda: "old" in rates(), 120, "items looked up with the first value")
        target["rate"] = "new"
        wait_for(lambda: "new" in rates(), 60, "items looked up with the changed value")
        del target["rate"]
        wait_for(lambda: None in rates(), 60, "items looked up after the key was removed")
    seen = rates()
    assert seen.index("old") < seen.index("new") < seen.index(None)
