"""A sink fed by a stage with timestamps gets plain items: ``UnwrapEventsP`` rewrites its inbox in place."""

from __future__ import annotations

from typing import Any

from pipeline.events import JetEvent
from pipeline.internal import UnwrapEventsP
from processors import Inbox, Processor


class _TakesOne(Processor):
    """Takes one item per ``process`` call, like a sink whose outbox or connection is full."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def process(self, ordinal: int, inbox: Inbox) -> None:
        self.seen.append(inbox.remove())


def test_unwrap_events_when_sink_takes_part_then_it_sees_plain_items_in_order() -> None:
    sink = _TakesOne()
    wrapper = UnwrapEventsP(sink)
    inbox = Inbox([JetEvent(1, "a"), "b", JetEvent(3, "c")])
    wrapper.process(0, inbox)
    assert sink.seen == ["a"] and list(inbox) == ["b", "c"]
    inbox.add_all([JetEvent(4, "d")])  # the next batch arrives behind what is left
    while not inbox.is_empty():
        wrapper.process(0, inbox)
    assert sink.seen == ["a", "b", "c", "d"]
