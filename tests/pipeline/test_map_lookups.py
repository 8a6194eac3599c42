"""The lookup services of ``pipeline.map_lookups`` over a real DriverChannel in-process (no Spark): batched
``map.get`` reads, the replicated copy following the journal, and a full copy again after lost events."""

from __future__ import annotations

import pytest

from dag.errors import DagValidationError
from dag.runtime.common.channel import ChannelClient, DriverChannel, new_secret
from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.common.driver_topics import register_collection_topics
from pipeline.map_lookups import DriverMapLookup, ReplicatedMapView
from processors import Context


@pytest.fixture
def driver():
    store, secret = DriverCollections(partition_count=4), new_secret()
    with DriverChannel(secret) as channel:
        register_collection_topics(channel, store)
        with ChannelClient(channel.address, secret) as client:
            yield store, Context(vertex_name="lookup", driver=client)


def test_imap_lookup_when_batch_of_keys_then_current_values_and_none_for_missing(driver):
    store, context = driver
    store.get("map", "m").update({"a": 1, "b": 2})
    lookup = DriverMapLookup(context, "m")
    assert lookup.get_all(["a", "x", "b"]) == [1, None, 2]
    store.get("map", "m")["x"] = 9
    assert lookup.get_all(["x"]) == [9]


def test_replicated_view_when_map_changes_then_refresh_applies_puts_and_removes(driver):
    store, context = driver
    replicated = store.get("replicated", "r")
    replicated.update({"a": 1, "b": 2})
    view = ReplicatedMapView(context, "r", refresh_seconds=3600)
    assert view.data == {"a": 1, "b": 2} and store.get("map", "r") == {}  # its own namespace
    replicated["a"] = 10
    del replicated["b"]
    replicated["c"] = 3
    assert view.get("a") == 1  # not due yet: the copy stays as it was
    view.refresh()
    assert view.data == {"a": 10, "c": 3}


def test_replicated_view_when_journal_dropped_events_then_copies_the_map_again():
    store, secret = DriverCollections(partition_count=1, journal_capacity=2), new_secret()
    with DriverChannel(secret) as channel:
        register_collection_topics(channel, store)
        with ChannelClient(channel.address, secret) as client:
            replicated = store.get("replicated", "r")
            view = ReplicatedMapView(Context(vertex_name="v", driver=client), "r", refresh_seconds=0)
            for i in range(5):  # more changes than the journal keeps
                replicated[i] = i
            del replicated[0]
            assert view.get(4) == 4 and view.data == {1: 1, 2: 2, 3: 3, 4: 4}


def test_lookups_when_no_driver_channel_then_error_says_it_needs_an_engine_job():
    with pytest.raises(DagValidationError, match=r"map_using_replicated_map\('r'\)"):
        ReplicatedMapView(Context(vertex_name="v"), "r")
