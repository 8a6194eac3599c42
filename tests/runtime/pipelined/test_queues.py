"""Queues and inbound edges of the pipelined runtime (dag/runtime/pipelined/queues.py) without Spark."""

from __future__ import annotations

import threading

from dag.runtime.pipelined.queues import JOIN_ITEMS, QUEUE_ENTRIES, InboundEdge, Queue
from processors.api.watermark import Watermark


class Recording:
    """What an inbound edge hands a tasklet, in order."""

    def __init__(self):
        self.got: list = []

    def add_batch(self, ordinal, items):
        self.got.append(("items", list(items)))

    def add_watermark(self, ordinal, ts):
        self.got.append(("wm", ts))

    def add_barrier(self, ordinal, barrier):
        self.got.append(("barrier", barrier))

    def edge_done(self, ordinal):
        self.got.append(("done",))


def filled(*entries) -> Queue:
    queue = Queue(threading.Event())
    queue.entries.extend(entries)
    return queue


def test_drain_when_a_queue_holds_several_small_lists_then_one_round_takes_them_all_joined():
    # a producer in the consumer's thread emits one small list per round: taking one list per round, a backlog
    # that built up in one slow round never drained (every item waited QUEUE_ENTRIES rounds more from then on)
    queue = filled(*([i] for i in range(QUEUE_ENTRIES)))
    edge, tasklet = InboundEdge(0, [queue], None), Recording()
    assert edge.drain_into(tasklet)
    assert tasklet.got == [("items", list(range(QUEUE_ENTRIES)))] and not queue.entries


def test_drain_joins_only_up_to_the_watermark_that_follows_the_lists():
    queue = filled([1], [2, 3], Watermark(7), [4])
    edge, tasklet = InboundEdge(0, [queue], None), Recording()
    while queue.entries:
        edge.drain_into(tasklet)
    assert tasklet.got == [("items", [1, 2, 3]), ("wm", 7), ("items", [4])]


def test_drain_joins_at_most_join_items_and_leaves_the_offered_lists_unchanged():
    first, second, third = [0] * (JOIN_ITEMS - 10), [1] * 10, [2]
    queue = filled(first, second, third)
    edge, tasklet = InboundEdge(0, [queue], None), Recording()
    edge.drain_into(tasklet)
    edge.drain_into(tasklet)
    assert [len(items) for _, items in tasklet.got] == [JOIN_ITEMS, 1]
    # a list offered to several queues (a broadcast edge) is shared: the join makes a new list
    assert len(first) == JOIN_ITEMS - 10 and second == [1] * 10


def test_drain_takes_one_joined_entry_from_each_queue_in_turn():
    a, b = filled([1], [2]), filled([10], [20])
    edge, tasklet = InboundEdge(0, [a, b], None), Recording()
    edge.drain_into(tasklet)
    assert sorted(items for _, items in tasklet.got) == [[1, 2], [10, 20]]
