"""TCP links between tasks (dag/runtime/pipelined/links.py) without Spark: two tasks' links in one process."""

from __future__ import annotations

import os
import threading
import time
from collections import deque

from dag.runtime.pipelined.links import FRAME_ITEMS, LINK_ENTRIES, Links, _joined, _next_frame
from dag.runtime.pipelined.queues import JOIN_ITEMS
from tests.support import wait_for

SIZE = 500  # items per list: the socket's buffers fill after a few thousand lists


class _Sink:
    """A destination queue that takes everything (or nothing while ``full``)."""

    def __init__(self):
        self.entries: deque = deque()
        self.full = False

    def offer(self, entry):
        if self.full:
            return False
        self.entries.append(entry)
        return True


def _pump(link: Links, stop: threading.Event) -> None:
    """What a task's scheduler does for its links: pump in every round, sleep on the sockets when idle."""
    while not stop.is_set():
        if not link.pump():
            link.wait(0.001)


def _pair(errors: list):
    secret = os.urandom(32)
    sinks = [_Sink(), _Sink()]
    stop = threading.Event()
    links = [Links(t, secret, "127.0.0.1", 1, lambda key, t=t: sinks[t], lambda peer, text: errors.append(text),
                   stop.is_set) for t in range(2)]
    addresses = [link.address for link in links]
    connecting = [threading.Thread(target=link.connect, args=(addresses,)) for link in links]
    for thread in connecting:
        thread.start()
    for thread in connecting:
        thread.join(30)
    pumps = [threading.Thread(target=_pump, args=(link, stop), daemon=True) for link in links]
    for thread in pumps:
        thread.start()
    return links, sinks, stop, pumps


def _flat(entries, key):
    return [x for k, e in entries if k == key for x in (e if isinstance(e, list) else [e])]


def test_links_when_receiver_holds_back_then_items_arrive_in_order_and_link_refuses_when_full():
    errors: list = []
    links, sinks, stop, pumps = _pair(errors)
    try:
        sinks[1].full = True
        offered, refused, deadline = 0, False, time.monotonic() + 30
        while not refused and time.monotonic() < deadline:  # until the socket's buffers and the link are full
            if links[0].offer(1, "q", list(range(offered * SIZE, (offered + 1) * SIZE))):
                offered += 1
            else:
                refused = True
        assert refused, "a link whose peer takes nothing refuses lists once its entries are queued"
        assert len(links[0].outbound[1].pending) >= LINK_ENTRIES
        sinks[1].full = False
        links[0].offer(1, "q", "WM")
        wait_for(lambda: sum(len(e) for e in sinks[1].entries if isinstance(e, list)) == offered * SIZE, 30,
                 lambda: f"{offered * SIZE} items, got {sum(len(e) for e in sinks[1].entries if isinstance(e, list))}")
        wait_for(lambda: sinks[1].entries and sinks[1].entries[-1] == "WM", 30, "the watermark after the items")
        assert _flat([("q", e) for e in sinks[1].entries], "q") == list(range(offered * SIZE)) + ["WM"]
        links[0].finish()
        wait_for(links[1].all_said_bye, 30, "the peer's BYE")
        assert errors == []
    finally:
        stop.set()
        for thread in pumps:
            thread.join(10)
        for link in links:
            link.close()



def test_joined_joins_a_queues_consecutive_lists_until_its_watermark_without_changing_them():
    first = [1, 2]
    entries = [("q", first), ("r", [9]), ("q", [3]), ("q", "WM"), ("q", [4]), ("q", [5, 6]), ("q", [7])]
    assert _joined(entries) == [("q", [1, 2, 3]), ("r", [9]), ("q", "WM"), ("q", [4, 5, 6, 7])]
    assert first == [1, 2], "a list offered to several queues is the same object: joining must copy it"


def test_joined_starts_a_new_list_past_join_items():
    entries = [("q", list(range(JOIN_ITEMS - 1))), ("q", [1]), ("q", [2])]
    assert [len(e) for _, e in _joined(entries)] == [JOIN_ITEMS, 1]


def test_a_full_link_goes_out_in_frames_of_at_most_frame_items_items():
    # one frame of a full link (64 lists of 1,024 items) took 30 ms to pickle and 47 ms to unpickle, a round in
    # which neither task moved anything else
    pending = deque(("q", [i] * 1024) for i in range(LINK_ENTRIES))
    frames = []
    while pending:
        frames.append(_next_frame(pending))
    assert all(sum(len(entry) for _, entry in frame) <= FRAME_ITEMS for frame in frames)
    assert [entry for frame in frames for _, entry in frame] == [[i] * 1024 for i in range(LINK_ENTRIES)]
    big = deque([("q", [0] * (FRAME_ITEMS + 1)), ("q", [1])])
    assert len(_next_frame(big)) == 1 and len(big) == 1  # an entry larger than a frame still goes, alone
