"""The map-updating sinks (``processors.io.map_updating``: Jet's mergeMapP/updateMapP) without Spark: the driver-side
application of merging, updating and entry processors, and the pipelined processor talking to the driver's
``sink.apply`` topic over a real DriverChannel in-process."""

from __future__ import annotations

import pytest

from dag import DAG
from dag.errors import DagValidationError, JobFailedError
from dag.runtime.common.channel import ChannelClient, DriverChannel, new_secret
from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.common.driver_topics import register_apply_topic, register_collection_topics
from processors import Context, Inbox
from processors.io.driver_apply import DriverApplyWriterP
from processors.io.map_updating import (merge_map_p, update_map_p,
                                     update_map_with_entry_processor_p)


class _Doubler:
    """An entry processor: doubles the value, removes the key at 8 or more, starts absent keys at 1."""

    def process(self, entry):
        value = entry.get_value()
        entry.set_value(1 if value is None else (None if value * 2 >= 8 else value * 2))


def test_merging_when_key_present_then_merged_and_none_result_removes_key():
    target = {"gone": 5}
    sink = merge_map_p("m", lambda item: item[0], lambda item: item[1],
                       lambda old, new: None if old + new == 0 else old + new)
    sink.apply_items(target, [("a", 1), ("b", 2), ("a", 3), ("gone", -5)], vertex="v")
    assert target == {"a": 4, "b": 2}


def test_updating_when_applied_then_old_value_or_none_given_and_none_removes():
    target = {"stop": 1}
    seen = []

    def update(old, item):
        seen.append((item, old))
        return None if item == "stop" else (old or 0) + len(item)

    update_map_p("m", lambda item: item, update).apply_items(target, ["ab", "ab", "stop"], vertex="v")
    assert target == {"ab": 4}
    assert seen == [("ab", None), ("ab", 2), ("stop", 1)]


def test_entry_processor_when_applied_then_entry_reads_and_writes_through():
    target = {"x": 3}
    sink = update_map_with_entry_processor_p("m", lambda item: item, lambda item: _Doubler())
    sink.apply_items(target, ["x", "y", "y", "x", "y"], vertex="v")
    assert target == {"y": 4}  # x: 3 -> 6 -> removed; y: 1 -> 2 -> 4


def test_map_sinks_when_function_fails_then_error_names_vertex_function_item_and_key():
    sink = merge_map_p("m", lambda item: item % 2, lambda item: item, lambda old, new: old // (new - 3))
    with pytest.raises(JobFailedError) as info:
        sink.apply_items({}, [1, 3], vertex="mapWithMergingSink(m)")
    text = str(info.value)
    assert "vertex 'mapWithMergingSink(m)'" in text and "merge_fn" in text and "ZeroDivisionError" in text
    assert "item 3" in text and "key 1" in text
    assert info.value.exc_type == "ZeroDivisionError"
    no_process = update_map_with_entry_processor_p("m", lambda item: item, lambda item: 42)
    with pytest.raises(JobFailedError, match="returned int, which has no process"):
        no_process.apply_items({}, [1], vertex="v")


def test_map_sink_factories_when_argument_not_a_function_then_refused_at_build():
    with pytest.raises(DagValidationError, match=r"merge_map_p\('m'\): merge_fn must be a function"):
        merge_map_p("m", str, str, "not a function")
    with pytest.raises(DagValidationError, match="map name must be a non-empty str"):
        update_map_p("", str, str)


def _dag_with(sink_vertex: str, sink) -> DAG:
    dag = DAG()
    dag.new_vertex(sink_vertex, sink)
    return dag


def test_writer_when_batches_sent_then_driver_applies_them_journalled_and_reports_failures():
    store, secret = DriverCollections(partition_count=3), new_secret()
    vertex = "mapWithUpdatingSink(totals)"
    sink = update_map_p("totals", lambda item: item[0],
                        lambda old, item: (old or 0) + 10 // item[1])
    with DriverChannel(secret) as channel:
        register_collection_topics(channel, store)
        register_apply_topic(channel, _dag_with(vertex, sink), store)
        with ChannelClient(channel.address, secret) as client:
            writer = DriverApplyWriterP(repr(sink))
            writer.init(None, Context(vertex_name=vertex, driver=client))
            writer.process(0, Inbox([("a", 1), ("b", 2), ("a", 5)]))
            assert writer.complete() is True
            assert dict(store.get("map", "totals")) == {"a": 12, "b": 5}
            journal = store.journal("totals")
            events = [e for p in range(3) for e in journal.read(p, 0, 10)[0]]
            assert sorted(e.type.value for e in events) == ["ADDED", "ADDED", "UPDATED"]
            with pytest.raises(JobFailedError) as info:
                writer.process(0, Inbox([("c", 0)]))
            assert info.value.vertex == vertex and info.value.exc_type == "ZeroDivisionError"
            assert "update_fn" in str(info.value) and "('c', 0)" in str(info.value)


def test_map_updating_docstring_examples_hold():
    import doctest

    import processors.io.map_updating

    assert doctest.testmod(processors.io.map_updating).failed == 0
