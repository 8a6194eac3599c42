"""Jet 4.5's ``site/docs/api/stateful-transforms.md``, its samples ported to Python (issue 27, part 6).

The logger sinks of the page become lists; the expected results are computed by plain Python. The Kafka topic
of the ``mapStateful`` sample becomes ``TestSources.item_stream`` generating the transaction events, with a
TTL of 300 ms instead of ten minutes. Not ported: the window samples' early results
(``setEarlyResultsPeriod`` is not built yet); the window samples themselves are covered by the windowing
tests."""

from __future__ import annotations

from collections import Counter
from enum import Enum
from typing import NamedTuple

import pytest

from pipeline import Pipeline, Sinks, TestSources
from processors import counting
from tests.support import running, unique, wait_for

pytestmark = pytest.mark.spark

TIMED_OUT = -1


def test_stateful_transforms_page_batch_samples(engine) -> None:
    sinks = {k: unique(k) for k in ("aggregate", "grouped", "rolling", "distinct", "distinct_key", "sort",
                                    "co_group")}
    p = Pipeline.create()
    items = p.read_from(TestSources.items(0, 1, 2, 3, 4, 5))
    items.aggregate(counting()).write_to(Sinks.list(sinks["aggregate"]))
    items.grouping_key(lambda i: "odds" if i % 2 == 0 else "evens").aggregate(counting()) \
        .write_to(Sinks.list(sinks["grouped"]))
    items.grouping_key(lambda i: "odds" if i % 2 == 0 else "evens").rolling_aggregate(counting()) \
        .write_to(Sinks.list(sinks["rolling"]))
    p.read_from(TestSources.items(0, 1, 1, 2, 3, 4, 5, 6)).distinct().write_to(Sinks.list(sinks["distinct"]))
    p.read_from(TestSources.items("joe", "john", "jenny", "maria")).grouping_key(lambda s: s[0:1]).distinct() \
        .write_to(Sinks.list(sinks["distinct_key"]))
    p.read_from(TestSources.items("bob", "alice", "dan", "chuck")).sort().write_to(Sinks.list(sinks["sort"]))
    visits = [(1, "home"), (1, "shoes"), (2, "home"), (1, "hats")]
    carts = [(1, "hat"), (2, "shoe"), (2, "sock")]
    page_visit = p.read_from(TestSources.items(visits)).grouping_key(lambda event: event[0])
    add_to_cart = p.read_from(TestSources.items(carts)).grouping_key(lambda event: event[0])
    page_visit.aggregate2(counting(), add_to_cart, counting()).write_to(Sinks.list(sinks["co_group"]))

    engine.new_job(p).join(timeout=300)
    got = {k: list(engine.get_list(name)) for k, name in sinks.items()}
    for name in sinks.values():
        engine.get_list(name).clear()

    key = {i: "odds" if i % 2 == 0 else "evens" for i in range(6)}
    assert got["aggregate"] == [6]
    assert sorted(got["grouped"]) == sorted(Counter(key.values()).items())
    for k in ("odds", "evens"):
        assert sorted(v for kk, v in got["rolling"] if kk == k) == [1, 2, 3]
    assert sorted(got["distinct"]) == [0, 1, 2, 3, 4, 5, 6]
    assert len(got["distinct_key"]) == 2 and "maria" in got["distinct_key"]
    assert {name[0] for name in got["distinct_key"]} == {"j", "m"}
    assert got["sort"] == ["alice", "bob", "chuck", "dan"]
    users = {u for u, _ in visits + carts}
    assert sorted(got["co_group"]) == sorted(
        (u, (sum(1 for v in visits if v[0] == u), sum(1 for c in carts if c[0] == u))) for u in users)


class EventType(Enum):
    TRANSACTION_START = 1
    TRANSACTION_END = 2


class TransactionEvent(NamedTuple):
    timestamp: int
    transaction_id: str
    type: EventType


def _transactions(timestamp: int, sequence: int):
    """Transaction i starts at sequence 2i and ends at 2i+1, except every third one, which never ends; after
    the first 12 sequences, heartbeat transactions that only start (they keep event time, so the watermark,
    moving)."""
    if sequence >= 12:
        return TransactionEvent(timestamp, f"heartbeat-{sequence}", EventType.TRANSACTION_START)
    transaction, end = divmod(sequence, 2)
    if end and transaction % 3 == 2:
        return None
    return TransactionEvent(timestamp, f"tx-{transaction}",
                            EventType.TRANSACTION_END if end else EventType.TRANSACTION_START)


def _match(state, id, event):
    if event.type is EventType.TRANSACTION_START:
        state[0] = event
    elif event.type is EventType.TRANSACTION_END:
        state[1] = event
    if state[0] is not None and state[1] is not None:
        return (event.transaction_id, state[1].timestamp - state[0].timestamp)
    return None


def _transactions_in(results) -> dict:
    return {id: duration for id, duration in list(results) if id.startswith("tx-")}


def test_stateful_transforms_page_map_stateful_sample(engine) -> None:
    out = unique("transactions")
    p = Pipeline.create()
    (p.read_from(TestSources.item_stream(20, _transactions))
     .with_native_timestamps(0)
     .grouping_key(lambda event: event.transaction_id)
     .map_stateful(300, lambda: [None, None], _match,
                   lambda state, id, current_watermark:
                       (id, TIMED_OUT) if state[0] is None or state[1] is None else None)
     .write_to(Sinks.list(out)))
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(_transactions_in(engine.get_list(out))) >= 6, 120,
                 lambda: f"6 transactions matched or timed out, got {list(engine.get_list(out))[:20]}")
    results = _transactions_in(engine.get_list(out))
    engine.get_list(out).clear()
    # 20 items per second: the events are 50 ms apart, so a completed transaction took 50 ms
    assert results == {f"tx-{i}": TIMED_OUT if i % 3 == 2 else 50 for i in range(6)}
