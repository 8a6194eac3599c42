"""``CdcSinks.map``'s processor and the driver's ``sink.map.apply`` topic, over a real DriverChannel in-process
(no Spark, no database): deletes remove, older sequences are ignored, a replay never moves a key back; a truncate
removes its own table's keys only, and no record older than it brings a key back."""

from __future__ import annotations

from contextlib import contextmanager

from connectors.cdc_records import ChangeRecord, Operation
from connectors.cdc_sink import CdcMapSinkP
from dag.runtime.common.channel import ChannelClient, DriverChannel, new_secret
from dag.runtime.common.driver_collections import DriverCollections
from dag.runtime.common.driver_topics import register_collection_topics
from processors import Context, Inbox


def _record(op: Operation, key: int, amount: int, seq: tuple[int, int], table: str = "orders") -> ChangeRecord:
    return ChangeRecord(op, "db", "public", table, 0, seq[0], seq[1], {"id": key}, {"id": key, "amount": amount})


def _truncate(seq: tuple[int, int], table: str = "orders") -> ChangeRecord:
    return ChangeRecord(Operation.UNSPECIFIED, "db", "public", table, 0, seq[0], seq[1], {}, {}, truncate=True)


@contextmanager
def _sink(by_table: bool = False):
    """A ``CdcMapSinkP`` of map ``mirror`` (keyed ``(table, id)`` when ``by_table``, else ``id``) sending to a real
    driver channel in-process; yields ``send(*batches)``, which processes the batches, waits until the driver
    stored them and returns the map."""
    store, secret = DriverCollections(partition_count=3), new_secret()
    with DriverChannel(secret) as channel:
        register_collection_topics(channel, store)
        with ChannelClient(channel.address, secret) as client:
            key_fn = (lambda r: (r.table(), r.key().to_map()["id"])) if by_table else (lambda r: r.key().to_map()["id"])
            sink = CdcMapSinkP("mirror", key_fn, lambda r: r.value().to_map()["amount"])
            sink.init(None, Context(vertex_name="mapCdcSink(mirror)", driver=client))

            def send(*batches: list) -> dict:
                for batch in batches:
                    sink.process(0, Inbox(batch))
                assert sink.complete() is True
                return dict(store.get("map", "mirror"))

            yield send


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


def test_cdc_map_sink_when_truncate_then_only_that_tables_keys_removed():
    with _sink(by_table=True) as send:
        before = [_record(Operation.SYNC, 1, 10, (100, 0)), _record(Operation.SYNC, 2, 20, (100, 0)),
                  _record(Operation.SYNC, 1, 5, (100, 0), table="customers"),
                  _record(Operation.INSERT, 3, 30, (200, 1))]
        assert send(before) == {("orders", 1): 10, ("orders", 2): 20, ("orders", 3): 30,
                                     ("customers", 1): 5}
        after = [_truncate((300, 2)), _record(Operation.INSERT, 4, 40, (300, 3))]
        assert send(after) == {("customers", 1): 5, ("orders", 4): 40}


def test_cdc_map_sink_when_replayed_across_truncate_then_older_rows_never_come_back():
    with _sink() as send:
        stream = [_record(Operation.SYNC, 1, 10, (100, 0)), _record(Operation.INSERT, 2, 20, (200, 1)),
                  _record(Operation.INSERT, 3, 30, (300, 1)), _truncate((300, 2)),
                  _record(Operation.INSERT, 1, 11, (300, 3)), _record(Operation.INSERT, 5, 50, (400, 1))]
        assert send(stream) == {1: 11, 5: 50}
        # a restart replays from a snapshot before the truncate: the rows before it change nothing (not even for a
        # moment), then the truncate and the rest again, then a newer change
        assert send(stream[1:3]) == {1: 11, 5: 50}
        assert send(stream[3:], [_record(Operation.UPDATE, 5, 51, (500, 1))]) == {1: 11, 5: 51}


def test_cdc_map_sink_when_records_overtake_a_truncate_then_newer_stay_and_older_stay_out():
    """Records of one table may reach the driver through different processors, so out of commit order."""
    with _sink() as send:
        assert send([_record(Operation.INSERT, 1, 10, (100, 1)), _record(Operation.INSERT, 2, 20, (300, 1))],
                         [_truncate((200, 1))]) == {2: 20}  # key 2 was inserted after the truncate
        # an insert older than the truncate, of a key the sink never saw, arrives late: still truncated
        assert send([_record(Operation.INSERT, 3, 30, (150, 1))]) == {2: 20}
        # an older truncate arriving late removes nothing newer
        assert send([_truncate((120, 1))]) == {2: 20}
