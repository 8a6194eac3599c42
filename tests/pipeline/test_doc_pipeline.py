"""Jet 4.5's ``site/docs/api/pipeline.md`` ported to Python (issue 27): a first pipeline, ``set_preserve_order``,
merging two inputs, one stage feeding two sinks (files), and the ways to give a stream its timestamps
(``with_native_timestamps``, ``with_timestamps``, ``with_ingestion_timestamps``, ``without_timestamps``, and
``add_timestamps`` later in the pipeline). Where the page logs, the port collects into a list."""

from __future__ import annotations

import pytest

from pipeline import Pipeline, Sinks, TestSources, WindowDefinition
from processors import counting
from tests.support import running, unique, wait_for

pytestmark = pytest.mark.spark

LEFT = ["the", "quick", "brown", "fox"]
RIGHT = ["jumps", "over", "the", "lazy", "dog"]


def _drain(engine, name: str) -> list:
    items = list(engine.get_list(name))
    engine.get_list(name).clear()
    return items


def test_pipeline_page_batch_samples(engine, tmp_path) -> None:
    upper, ordered, merged = unique("upper"), unique("ordered"), unique("merged")
    p = Pipeline.create()
    p.read_from(TestSources.items(*LEFT)).map(lambda item: item.upper()).write_to(Sinks.list(upper))
    engine.new_job(p).join(timeout=300)
    assert sorted(_drain(engine, upper)) == sorted(w.upper() for w in LEFT)

    p = Pipeline.create()
    p.set_preserve_order(True)
    p.read_from(TestSources.items(*LEFT)).map(str.upper).write_to(Sinks.list(ordered))
    engine.new_job(p).join(timeout=300)
    assert _drain(engine, ordered) == [w.upper() for w in LEFT]

    p = Pipeline.create()
    left = p.read_from(TestSources.items(*LEFT))
    right = p.read_from(TestSources.items(*RIGHT))
    left.merge(right).write_to(Sinks.list(merged))
    engine.new_job(p).join(timeout=300)
    assert sorted(_drain(engine, merged)) == sorted(LEFT + RIGHT)

    p = Pipeline.create()
    src = p.read_from(TestSources.items(*LEFT))
    src.map(str.upper).write_to(Sinks.files(tmp_path / "uppercase"))
    src.map(str.lower).write_to(Sinks.files(tmp_path / "lowercase"))
    engine.new_job(p).join(timeout=300)
    for directory, fn in (("uppercase", str.upper), ("lowercase", str.lower)):
        lines = [line for f in (tmp_path / directory).iterdir() for line in f.read_text().splitlines()]
        assert sorted(lines) == sorted(fn(w) for w in LEFT)


@pytest.mark.parametrize("policy", ["native", "timestamps", "ingestion", "without-then-add"])
def test_pipeline_page_timestamp_policies_give_windows_their_time(engine, policy) -> None:
    out = unique(f"ts-{policy}")
    p = Pipeline.create()
    source = p.read_from(TestSources.item_stream(20))
    if policy == "native":
        stage = source.with_native_timestamps(0)
    elif policy == "timestamps":
        stage = source.with_timestamps(lambda event: event.timestamp, 0)
    elif policy == "ingestion":
        stage = source.with_ingestion_timestamps()
    else:
        stage = source.without_timestamps().map(lambda event: (event.timestamp, event)) \
            .add_timestamps(lambda pair: pair[0], 0)
    stage.window(WindowDefinition.tumbling(200)).aggregate(counting()).write_to(Sinks.list(out))
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(engine.get_list(out)) >= 3, 120, "three windows' counts")
    results = _drain(engine, out)
    assert all(r.timestamp % 200 == 0 and r.item > 0 for r in results)
    assert sorted(r.timestamp for r in results) == [r.timestamp for r in results]  # one window after the other
