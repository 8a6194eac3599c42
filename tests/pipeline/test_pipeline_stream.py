"""The stream half of the pipeline, engine-free: timestamp choices, events through stateless stages, windows,
rolling aggregation, the stream sources, and the tutorial's DOT. Processors of lowered vertices are run with
``verify_processor`` (watermarks included)."""

from __future__ import annotations

import pytest

from dag.errors import DagValidationError
from edges import RoutingPolicy
from pipeline import Pipeline, SimpleEvent, Sinks, Sources, TestSources, TimestampedItem, WindowDefinition
from pipeline.events import JetEvent
from pipeline.stream_factories import ItemStreamP
from pipeline.timestamps import event_time_params
from processors import (
    Outbox,
    SinkBuilder,
    SourceBuilder,
    TimestampedEntry,
    Watermark,
    WindowResult,
    counting,
    map_p,
    max_by,
    to_list,
    verify_processor,
    whole_item,
)
from processors.api.context import Context
from processors.io.text_streams import is_stream_source

TUTORIAL_DOT = """digraph DAG {
    "itemStream" [localParallelism=1];
    "cpu-sink" [localParallelism=1];
    "itemStream" -> "cpu-sink" [queueSize=1024];
}"""


def _sink():
    return SinkBuilder.sink_builder("cpu-sink", lambda ctx: None).receive_fn(lambda s, i: None).build()


def _edge(dag, source: str, dest: str):
    edge, = [e for e in dag.get_outbound_edges(source) if e.dest_name == dest]
    return edge


def _outputs(supplier, items: list) -> list:
    """What one processor of ``supplier`` emits for ``items`` (single-item inbox, no snapshots)."""
    seen: list = []
    verify_processor(supplier).disable_snapshots().disable_progress_assertion().input(items).assert_output(
        1, lambda mode, actual: seen.append(actual[0]))
    return seen[0]


def _stream(p: Pipeline, name: str = "s"):
    return p.read_from(Sources.stream_from_processor(name, map_p(str)))


def test_tutorial_cpu_log_producer_when_lowered_then_dot_equals_the_tutorials() -> None:
    p = Pipeline.create()
    p.read_from(TestSources.item_stream(10)).without_timestamps().write_to(_sink())
    assert p.to_dot().replace("\t", "    ") == TUTORIAL_DOT
    assert is_stream_source(p.to_dag().get_vertex("itemStream").meta_supplier)


def test_network_consumer_when_peek_after_stream_source_then_source_still_a_stream_source() -> None:
    source = SourceBuilder.stream("network-source", lambda ctx: None).fill_buffer_fn(lambda s, b: None).build()
    p = Pipeline.create()
    p.read_from(source).without_timestamps().peek().write_to(Sinks.noop())
    dag = p.to_dag()
    assert [v.name for v in dag.vertices] == ["network-source", "noop"]
    assert is_stream_source(dag.get_vertex("network-source").meta_supplier)


def test_with_timestamps_when_source_cannot_stamp_then_add_timestamps_vertex_on_isolated_edge() -> None:
    p = Pipeline.create()
    _stream(p).with_timestamps(len, 5).write_to(Sinks.noop())
    dag = p.to_dag()
    assert [v.name for v in dag.vertices] == ["s", "s-add-timestamps", "noop"]
    assert _edge(dag, "s", "s-add-timestamps").routing_policy is RoutingPolicy.ISOLATED
    stamps = dag.get_vertex("s-add-timestamps").supplier
    assert _outputs(stamps, ["aa", "a"]) == [Watermark(-3), JetEvent(2, "aa"), JetEvent(1, "a")]


def test_with_timestamps_when_later_in_the_pipeline_then_add_timestamps_vertex() -> None:
    p = Pipeline.create()
    _stream(p).without_timestamps().map(str.upper).with_timestamps(len, 0).write_to(Sinks.noop())
    assert [v.name for v in p.to_dag().vertices] == ["s", "map", "add-timestamps", "noop"]


def test_native_timestamps_when_item_stream_then_applied_in_the_source() -> None:
    p = Pipeline.create()
    p.read_from(TestSources.item_stream(10)).with_native_timestamps(0).write_to(Sinks.noop())
    assert [v.name for v in p.to_dag().vertices] == ["itemStream", "noop"]


def test_native_timestamps_when_source_has_none_then_error_says_use_with_timestamps() -> None:
    p = Pipeline.create()
    with pytest.raises(DagValidationError, match=r"stage 's': this source has no native timestamps.*with_timestamps"):
        _stream(p).with_native_timestamps(0)


def test_stateless_stages_when_stage_has_timestamps_then_outputs_keep_the_input_timestamp() -> None:
    p = Pipeline.create()
    stage = _stream(p).with_timestamps(len, 0)
    stage.flat_map(lambda s: [s, s + "!"]).filter(lambda s: s != "b").map(str.upper).write_to(Sinks.noop())
    dag = p.to_dag()
    events = [JetEvent(10, "a"), JetEvent(20, "b")]
    flat = _outputs(dag.get_vertex("flat-map").supplier, events)
    assert flat == [JetEvent(10, "a"), JetEvent(10, "a!"), JetEvent(20, "b"), JetEvent(20, "b!")]
    kept = _outputs(dag.get_vertex("filter").supplier, flat)
    assert _outputs(dag.get_vertex("map").supplier, kept) == [
        JetEvent(10, "A"), JetEvent(10, "A!"), JetEvent(20, "B!")]


def test_sink_when_fed_events_then_sees_plain_items() -> None:
    received: list = []
    sink = SinkBuilder.sink_builder("collect", lambda ctx: received).receive_fn(list.append).build()
    p = Pipeline.create()
    stage = _stream(p).with_timestamps(len, 0)
    stage.write_to(sink)
    stage.write_to(Sinks.list("driver"))
    dag = p.to_dag()
    assert [v.name for v in dag.vertices] == ["s", "s-add-timestamps", "collect", "listSink(driver)-unwrap",
                                              "listSink(driver)"]
    _outputs(dag.get_vertex("collect").supplier, [JetEvent(1, "x"), Watermark(1), JetEvent(2, "y")])
    assert received[:2] == ["x", "y"]
    assert _outputs(dag.get_vertex("listSink(driver)-unwrap").supplier, [JetEvent(1, "x")]) == ["x"]


def test_keyed_sliding_window_when_lowered_then_prepare_pair_and_results_stamped_with_window_end() -> None:
    p = Pipeline.create()
    (_stream(p).with_timestamps(lambda s: int(s), 0).grouping_key(lambda s: int(s) % 2)
     .window(WindowDefinition.sliding(4, 2)).aggregate(counting()).write_to(Sinks.noop()))
    dag = p.to_dag()
    into = _edge(dag, "s-add-timestamps", "sliding-window-prepare")
    assert into.routing_policy is RoutingPolicy.PARTITIONED and into.is_local
    between = _edge(dag, "sliding-window-prepare", "sliding-window")
    assert between.is_distributed and between.routing_policy is RoutingPolicy.PARTITIONED
    frames = _outputs(dag.get_vertex("sliding-window-prepare").supplier,
                      ["0", "1", "3", Watermark(4)])
    results = _outputs(dag.get_vertex("sliding-window").supplier, frames)
    # read only by a sink: the results travel plain (no JetEvent to make and unwrap again), as in a Core DAG
    assert [r for r in results if not isinstance(r, Watermark)] == [
        TimestampedEntry(2, 0, 1), TimestampedEntry(2, 1, 1), TimestampedEntry(4, 0, 1), TimestampedEntry(4, 1, 2),
        TimestampedEntry(6, 1, 1),  # flushed by complete(): the window [2, 6) still holds "3"
    ]


def test_unkeyed_tumbling_window_when_lowered_then_all_to_one_and_timestamped_items() -> None:
    p = Pipeline.create()
    (_stream(p).with_timestamps(lambda s: int(s), 0).window(WindowDefinition.tumbling(10))
     .aggregate(to_list()).write_to(Sinks.noop()))
    dag = p.to_dag()
    edge = _edge(dag, "sliding-window-prepare", "sliding-window")
    assert edge.is_all_to_one and edge.is_distributed
    assert dag.get_vertex("sliding-window").local_parallelism == 1
    frames = _outputs(dag.get_vertex("sliding-window-prepare").supplier,
                      ["1", "5", "12", Watermark(20)])
    results = [r for r in _outputs(dag.get_vertex("sliding-window").supplier, frames)
               if not isinstance(r, Watermark)]
    assert results == [TimestampedItem(10, ["1", "5"]), TimestampedItem(20, ["12"])]  # read by a sink: plain


def test_session_window_when_keyed_then_one_vertex_emitting_window_results() -> None:
    p = Pipeline.create()
    (_stream(p).with_timestamps(lambda s: int(s[1:]), 0).grouping_key(lambda s: s[0])
     .window(WindowDefinition.session(10)).aggregate(counting()).write_to(Sinks.noop()))
    dag = p.to_dag()
    assert [v.name for v in dag.vertices] == ["s", "s-add-timestamps", "session-window", "noop"]
    into = _edge(dag, "s-add-timestamps", "session-window")
    assert into.is_distributed and into.routing_policy is RoutingPolicy.PARTITIONED
    results = _outputs(dag.get_vertex("session-window").supplier,
                       ["a1", "a6", "a30", Watermark(25)])
    assert results[0] == WindowResult(1, 16, "a", 2)  # read only by a sink: plain


def test_window_distinct_and_map_to_output_fn_when_lowered_then_plain_results() -> None:
    p = Pipeline.create()
    stage = _stream(p).with_timestamps(lambda s: int(s), 0)
    stage.window(WindowDefinition.tumbling(10)).distinct().write_to(Sinks.noop())
    (stage.grouping_key(lambda s: len(s)).window(WindowDefinition.tumbling(10))
     .aggregate(counting(), lambda start, end, key, n: f"{start}-{end} {key}: {n}").write_to(Sinks.noop()))
    dag = p.to_dag()
    assert {v.name for v in dag.vertices} >= {"sliding-window", "sliding-window-2-prepare", "sliding-window-2"}
    frames = _outputs(dag.get_vertex("sliding-window-2-prepare").supplier,
                      ["1", "22", "3", Watermark(10)])
    results = [r for r in _outputs(dag.get_vertex("sliding-window-2").supplier, frames)
               if not isinstance(r, Watermark)]
    assert results == ["0-10 1: 2", "20-30 2: 1"]  # "22" is stamped 22 by the stage's timestamp function


@pytest.mark.parametrize("kind", ["sliding", "tumbling", "session"])
@pytest.mark.parametrize("keyed", [True, False])
def test_window_when_a_later_stage_reads_it_then_results_are_events_stamped_with_the_window_end(kind: str,
                                                                                                keyed: bool) -> None:
    p = Pipeline.create()
    stage = _stream(p).with_timestamps(lambda s: int(s), 0)
    stage = stage.grouping_key(lambda s: int(s) % 2) if keyed else stage
    wdef = {"sliding": WindowDefinition.sliding(4, 2), "tumbling": WindowDefinition.tumbling(4),
            "session": WindowDefinition.session(2)}[kind]
    windowed = stage.window(wdef).aggregate(counting())
    windowed.write_to(Sinks.noop())
    windowed.map(str).write_to(Sinks.noop())  # a stage after the window: it needs the results' timestamps
    dag = p.to_dag()
    window = "session-window" if kind == "session" else "sliding-window"
    items = ["0", "1", "3", Watermark(8)]
    if kind != "session":
        items = _outputs(dag.get_vertex(window + "-prepare").supplier, items)
    results = [r for r in _outputs(dag.get_vertex(window).supplier, items) if not isinstance(r, Watermark)]
    assert results and all(type(r) is JetEvent for r in results)
    ends = [r.item.end if isinstance(r.item, WindowResult) else r.item.timestamp for r in results]
    assert [r.timestamp for r in results] == ends


def _counted_by_window(between: bool) -> list:
    """Items -> ``add-timestamps`` -> (an identity ``map`` when ``between``) -> a keyed sliding window count."""
    p = Pipeline.create()
    stage = _stream(p).with_timestamps(lambda s: int(s), 0)
    stage = stage.map(lambda s: s) if between else stage
    stage.grouping_key(len).window(WindowDefinition.sliding(4, 2)).aggregate(counting()).write_to(Sinks.noop())
    dag = p.to_dag()
    stamped = _outputs(dag.get_vertex("s-add-timestamps").supplier, ["0", "1", "3", "12", "5"])
    assert all(type(item) is JetEvent for item in stamped if not isinstance(item, Watermark)) == between
    if between:
        stamped = _outputs(dag.get_vertex("map").supplier, stamped)
    frames = _outputs(dag.get_vertex("sliding-window-prepare").supplier, stamped)
    return _outputs(dag.get_vertex("sliding-window").supplier, frames)


def test_timestamps_when_only_a_window_reads_them_then_plain_items_and_the_same_windows() -> None:
    # read only by the window, add-timestamps sends plain items and the window stamps them with the same
    # function (as the DAG written by hand); with a map between, they travel as JetEvents: same results
    assert _counted_by_window(between=False) == _counted_by_window(between=True)
    assert [r for r in _counted_by_window(between=False) if not isinstance(r, Watermark)][:2] == [
        TimestampedEntry(2, 1, 2), TimestampedEntry(4, 1, 3)]


def test_timestamps_when_another_stage_also_reads_them_then_events() -> None:
    p = Pipeline.create()
    stage = _stream(p).with_timestamps(lambda s: int(s), 0)
    stage.window(WindowDefinition.tumbling(10)).aggregate(counting()).write_to(Sinks.noop())
    stage.write_to(Sinks.noop())
    dag = p.to_dag()
    assert _outputs(dag.get_vertex("s-add-timestamps").supplier, ["1"]) == [Watermark(1), JetEvent(1, "1")]
    frames = _outputs(dag.get_vertex("sliding-window-prepare").supplier, [JetEvent(1, "1"), Watermark(10)])
    assert [f for f in frames if not isinstance(f, Watermark)] == [TimestampedEntry(10, 0, 1)]


def test_window_when_stage_has_no_timestamps_then_error_says_add_them() -> None:
    p = Pipeline.create()
    with pytest.raises(DagValidationError, match=r"stage 's' has no timestamps.*with_timestamps"):
        _stream(p).without_timestamps().window(WindowDefinition.tumbling(10))


def test_window_aggregate2_when_two_keyed_streams_then_co_aggregated_per_window() -> None:
    p = Pipeline.create()
    a = _stream(p, "a").with_timestamps(lambda s: int(s), 0).grouping_key(whole_item)
    b = _stream(p, "b").with_timestamps(lambda s: int(s), 0).grouping_key(whole_item)
    a.window(WindowDefinition.sliding(60_000, 1_000)).aggregate2(to_list(), b, counting()).write_to(Sinks.noop())
    dag = p.to_dag()
    assert _edge(dag, "b-add-timestamps", "sliding-window-prepare").dest_ordinal == 1


def test_rolling_aggregate_when_stream_with_timestamps_then_results_keep_timestamps() -> None:
    p = Pipeline.create()
    (_stream(p).with_timestamps(len, 0).grouping_key(lambda s: s[0]).rolling_aggregate(max_by(len))
     .write_to(Sinks.noop()))
    dag = p.to_dag()
    edge = _edge(dag, "s-add-timestamps", "rolling-aggregate")
    assert edge.is_distributed and edge.routing_policy is RoutingPolicy.PARTITIONED
    assert edge.key_fn(JetEvent(3, "abc")) == "a"
    out = _outputs(dag.get_vertex("rolling-aggregate").supplier, [JetEvent(2, "ab"), JetEvent(1, "a")])
    assert out == [JetEvent(2, ("a", "ab")), JetEvent(1, ("a", "ab"))]


def test_peek_when_events_then_logs_item_and_event_time(caplog) -> None:
    p = Pipeline.create()
    _stream(p).with_timestamps(len, 0).map(str.upper).peek().write_to(Sinks.noop())
    with caplog.at_level("INFO", logger="jetspark"):
        _outputs(p.to_dag().get_vertex("map").supplier, [JetEvent(1_583_310_272_413, "x")])
    assert any(r.getMessage().startswith("Output to ordinal 0: X (eventTime=") for r in caplog.records)


def test_item_stream_processor_when_completed_then_simple_events_spaced_by_the_rate() -> None:
    processor = ItemStreamP(1_000_000, None)
    outbox = Outbox([1024])
    processor.init(outbox, Context())
    items: list = []
    while len(items) < 5:
        assert processor.complete() is False  # a stream never completes
        items += outbox.drain(0)
    assert [e.sequence for e in items[:5]] == [0, 1, 2, 3, 4]
    assert all(isinstance(e, SimpleEvent) for e in items)
    assert items[1].timestamp - items[0].timestamp in (0, 1)


def test_item_stream_processor_when_native_timestamps_then_events_and_watermarks() -> None:
    processor = ItemStreamP(1_000_000, lambda ts, seq: seq, event_time_params(None, 0))
    outbox = Outbox([1024])
    processor.init(outbox, Context())
    out: list = []
    while len([x for x in out if isinstance(x, JetEvent)]) < 3:
        processor.complete()
        out += outbox.drain(0)
    events = [x for x in out if isinstance(x, JetEvent)]
    assert [e.item for e in events[:3]] == [0, 1, 2]
    assert isinstance(out[0], Watermark) and out[0].timestamp == events[0].timestamp


def test_stream_stages_when_batch_only_operation_then_type_error() -> None:
    p = Pipeline.create()
    stage = p.read_from(TestSources.item_stream(1)).with_native_timestamps(0)
    with pytest.raises(TypeError, match=r"Add window\("):
        stage.aggregate2(counting(), stage, counting())
    with pytest.raises(TypeError, match=r"window\("):
        stage.grouping_key(whole_item).aggregate_builder(counting())


def test_custom_transform_when_stage_has_timestamps_then_processor_gets_plain_items() -> None:
    p = Pipeline.create()
    stage = _stream(p).with_timestamps(len, 0).custom_transform("mine", map_p(str.upper))
    stage.write_to(Sinks.noop())
    with pytest.raises(DagValidationError, match="stage 'mine' has no timestamps"):
        stage.window(WindowDefinition.tumbling(10))
    assert _outputs(p.to_dag().get_vertex("mine").supplier, [JetEvent(1, "a")]) == ["A"]


def test_connector_stream_sources_when_timestamped_then_journal_in_source_and_socket_by_a_vertex() -> None:
    p = Pipeline.create()
    p.read_from(Sources.map_journal("trades")).with_timestamps(lambda e: e[1], 10).write_to(Sinks.noop())
    p.read_from(Sources.socket("127.0.0.1", 9999)).with_timestamps(len, 10).write_to(Sinks.noop())
    dag = p.to_dag()
    assert [v.name for v in dag.vertices] == ["mapJournalSource(trades)", "noop", "socketSource(127.0.0.1:9999)",
                                              "socketSource(127.0.0.1:9999)-add-timestamps", "noop-2"]
    for name in ("mapJournalSource(trades)", "socketSource(127.0.0.1:9999)"):
        assert is_stream_source(dag.get_vertex(name).meta_supplier)
