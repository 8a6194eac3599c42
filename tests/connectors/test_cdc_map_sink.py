"""``CdcSinks.map``'s processor and the driver's ``sink.map.apply`` topic, over a real DriverChannel in-process
(no Spark, no database): deletes remove, older sequences are ignored, a replay never moves a key back."""

from __future__ import annotations

from connectors.cdc_records import ChangeRecord, Operation
from connectors.cdc_sink import CdcMapSinkP
from dag.runtime.common.channel import ChannelClient, DriverChannel, new_secret
from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.common.driver_topics import register_collection_topics
from processors import Context, Inbox


def _record(op: Operation, key: int, amount: int, seq: tuple[int, int]) -> ChangeRecord:
    return ChangeRecord(op, "db", "public", "orders", 0, seq[0], seq[1], {"id": key}, {"id": key, "amount": amount})


def test_cdc_map_sink_when_records_replayed_or_late_then_map_never_moves_back():
    store, secret = DriverCollections(partition_count=3), new_secret()
    with DriverChannel(secret) as channel:
        register_collection_topics(channel, store)
        with ChannelClient(channel.address, secret) as client:
            sink = CdcMapSinkP("orders", lambda r: r.key().to_map()["id"], lambda r: r.value().to_map()["amount"])
            sink.init(None, Context(vertex_name="mapCdcSink(orders)", driver=client))
            first = [_record(Operation.SYNC, 1, 10, (100, 0)), _record(Operation.SYNC, 2, 20, (100, 0)),
                     _record(Operation.UPDATE, 1, 11, (200, 1)), _record(Operation.UPDATE, 1, 12, (200, 2)),
                     _record(Operation.DELETE, 2, 20, (300, 1))]
            sink.process(0, Inbox(first))
            assert sink.complete() is True
            assert dict(store.get("map", "orders")) == {1: 12}
            # a replay after a restart: everything again, plus one newer change
            sink.process(0, Inbox(first + [_record(Operation.INSERT, 2, 21, (400, 1))]))
            sink.process(0, Inbox([_record(Operation.UPDATE, 1, 99, (200, 1))]))  # late, older than 12's
            assert sink.complete() is True
            assert dict(store.get("map", "orders")) == {1: 12, 2: 21}
