"""PartitionedStreamSource, the base of stream_kafka_p and stream_map_p: items with and without event time, and
partition offsets saved to snapshots only after what was read went out, resumed after a full bucket. Engine-free."""

from __future__ import annotations

from processors import Context, Outbox
from processors.api.watermark import Watermark
from processors.io.partitioned_source import PartitionedStreamSource
from processors.windowing.event_time import EventTimeMapper, wm_gen_params
from processors.windowing.watermark_policies import limiting_lag, no_throttling


class _TwoPartitions(PartitionedStreamSource):
    """Reads two partitions whose offsets the test sets."""

    def __init__(self, event_time: bool) -> None:
        super().__init__()
        self.offsets = [0, 0]
        if event_time:
            params = wm_gen_params(lambda t: t, limiting_lag(1), no_throttling(), idle_timeout_ms=0)
            self._mapper = EventTimeMapper(params, 2)

    def _snapshot_entries(self):
        return [(("p", i), (offset, self._watermark(i))) for i, offset in enumerate(self.offsets)]


def _started(source: PartitionedStreamSource, capacity: int = 10, snapshot_capacity: int = 10) -> Outbox:
    outbox = Outbox([capacity], snapshot_capacity=snapshot_capacity)
    source.init(outbox, Context(vertex_name="src"))
    return outbox


def test_add_item_when_no_event_time_then_items_as_they_are_and_none_dropped():
    out: list = []
    source = _TwoPartitions(event_time=False)
    for item, partition in (("a", 0), (None, 1), ("b", 1)):
        source._add_item(out, item, partition)
    assert out == ["a", "b"]


def test_add_item_when_event_time_then_watermark_from_the_minimum_of_the_partitions():
    out: list = []
    source = _TwoPartitions(event_time=True)
    source._add_item(out, 10, 0)
    source._add_item(out, None, 1)  # dropped: no event for partition 1
    source._add_item(out, 20, 1)
    assert [x for x in out if isinstance(x, Watermark)] == [Watermark(9)]  # min(10, 20) - lag 1
    assert [x for x in out if not isinstance(x, Watermark)] == [10, 20]
    assert source._watermark(1) == 19


def test_save_when_items_pending_or_bucket_full_then_resumes_and_saves_each_partition_once():
    source = _TwoPartitions(event_time=False)
    outbox = _started(source, capacity=1, snapshot_capacity=1)

    def save() -> bool:  # one processor call, as the runtime makes it
        outbox.reset()
        return source.save_to_snapshot()

    source._pending = ["x", "y"]
    source.offsets = [5, 7]
    assert save() is False  # "y" still waits for room: no offset saved yet
    assert outbox.drain(0) == ["x"] and outbox.drain_snapshot() == []
    assert save() is False  # "y" went out; the bucket takes one entry of two
    assert outbox.drain(0) == ["y"]
    saved = outbox.drain_snapshot()
    source.offsets = [6, 8]  # read on meanwhile: the snapshot keeps the offsets it started with
    assert save() is True
    saved += outbox.drain_snapshot()
    assert sorted(saved) == [(("p", 0), (5, None)), (("p", 1), (7, None))]
    assert save() is False  # the next snapshot lists the partitions again
    saved = outbox.drain_snapshot()
    assert save() is True
    saved += outbox.drain_snapshot()
    assert sorted(saved) == [(("p", 0), (6, None)), (("p", 1), (8, None))]
