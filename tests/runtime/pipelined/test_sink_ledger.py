"""SinkLedger: driver-side sinks publish per completed snapshot in EXACTLY_ONCE jobs."""

from __future__ import annotations

import doctest
import random

import dag.runtime.pipelined.sink_ledger as sink_ledger
from dag.runtime.pipelined.sink_ledger import SinkLedger

LIST = ("list", "out")


def _ledger():
    published: list = []
    return SinkLedger(lambda kind, name, items: published.extend((kind, name, i) for i in items)), published


def test_ledger_examples_hold():
    assert doctest.testmod(sink_ledger).failed == 0


def test_items_when_snapshot_not_complete_then_not_published():
    ledger, published = _ledger()
    ledger.stage(("s", 0), LIST, [1])
    ledger.seal(("s", 0), 4)
    ledger.publish_through(3)
    assert published == [] and ledger.pending() == 1
    assert ledger.publish_through(4) == 1 and published == [("list", "out", 1)]


def test_rollback_when_restarting_then_covered_published_later_dropped():
    ledger, published = _ledger()
    ledger.stage(("s", 0), LIST, [1]); ledger.seal(("s", 0), 0)
    ledger.stage(("s", 0), LIST, [2]); ledger.seal(("s", 0), 1)   # snapshot 1 failed
    ledger.stage(("s", 1), ("map", "m"), [("k", 3)])               # open, never sealed
    ledger.rollback(0)
    assert published == [("list", "out", 1)] and ledger.pending() == 0
    ledger.rollback(None)
    assert ledger.pending() == 0


def test_publish_all_when_bounded_job_completes_then_sealed_then_open_published():
    ledger, published = _ledger()
    ledger.stage(("s", 0), LIST, [2]); ledger.seal(("s", 0), 7)
    ledger.stage(("s", 0), LIST, [3])
    assert ledger.publish_all() == 2 and [p[2] for p in published] == [2, 3]


def test_random_restarts_when_sources_replay_then_every_item_exactly_once():
    """A model of the protocol: a source numbers items; snapshots seal and complete; failures roll back to the
    last complete snapshot and the source replays from the position saved in it."""
    rng = random.Random(12)
    ledger, published = _ledger()
    position, saved_position, snapshot_id, last_complete = 0, 0, 0, None
    total = 2000
    while position < total:
        step = rng.randint(1, 30)
        ledger.stage(("sink", 0), LIST, list(range(position, min(total, position + step))))
        position = min(total, position + step)
        roll = rng.random()
        if roll < 0.3:  # a barrier passes the sink; the snapshot completes or not
            ledger.seal(("sink", 0), snapshot_id)
            if rng.random() < 0.7:
                ledger.publish_through(snapshot_id)
                last_complete, saved_position = snapshot_id, position
            snapshot_id += 1
        elif roll < 0.4:  # failure: restart from the last complete snapshot
            ledger.rollback(last_complete)
            position = saved_position
    ledger.publish_all()
    assert [p[2] for p in published] == list(range(total))
