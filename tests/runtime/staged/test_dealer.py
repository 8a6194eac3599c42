"""The Dealer of a driver source (dag/runtime/staged/dealer.py): every entry dealt once, in order, replayed to retries."""

from __future__ import annotations

import threading

import pytest

from dag.runtime.common.channel import ChannelClient
from dag.runtime.staged.dealer import TOPIC, Dealer, dealt_chunks
from dag.runtime.common.jobchannel import JobChannel


def _drain(dealer: Dealer, g: int) -> list[list]:
    chunks = []
    while (chunk := dealer.chunk(g, len(chunks))) is not None:
        chunks.append(chunk)
    return chunks


def test_dealer_when_processors_alternate_then_every_entry_once_in_collection_order_per_processor():
    items = list(range(1000))
    dealer = Dealer(items, processors=3)
    taken: dict[int, list[list]] = {0: [], 1: [], 2: []}
    g = 0
    while True:  # processor 0 asks twice as often as the others: it gets more
        order = (0, 0, 1, 2)[g % 4]
        g += 1
        chunk = dealer.chunk(order, len(taken[order]))
        if chunk is None:
            break
        taken[order].append(chunk)
    flat = {p: [x for c in chunks for x in c] for p, chunks in taken.items()}
    assert sorted(x for xs in flat.values() for x in xs) == items
    assert all(xs == sorted(xs) for xs in flat.values())
    assert len(flat[0]) > len(flat[1]) and len(flat[0]) > len(flat[2])
    sizes = [len(c) for c in taken[0]]
    assert sizes[0] == 167 and sizes[-1] == 1 and sizes == sorted(sizes, reverse=True)  # ceil(1000 / 6), shrinking


def test_dealer_when_a_processor_asks_again_for_a_chunk_then_the_same_entries_as_before():
    dealer = Dealer(list("abcdefghij"), processors=2)
    first = _drain(dealer, 0)
    assert _drain(dealer, 0) == first  # a retried task reads what the first attempt read, the end included
    assert sorted(x for c in first + _drain(dealer, 1) for x in c) == list("abcdefghij")


def test_dealer_when_chunk_skipped_or_processor_unknown_then_value_error_naming_it():
    dealer = Dealer([1, 2, 3], processors=2)
    with pytest.raises(ValueError, match="processor 1 asked for chunk 2 but was dealt 0"):
        dealer.chunk(1, 2)
    with pytest.raises(ValueError, match="processor index 2 out of range 0..1"):
        dealer.chunk(2, 0)


def test_dealt_chunks_when_tasks_ask_over_the_channel_concurrently_then_all_entries_dealt_once():
    channel = JobChannel("local[2]")
    try:
        dealer = Dealer(list(range(500)), processors=2)
        channel.register(TOPIC, lambda body: dealer.chunk(body["g"], body["i"]) if body["ordinal"] is None else None)
        got: dict[int, list] = {}

        def task(g: int) -> None:  # a client per task, as in two worker processes
            ref = channel.ref
            client = ChannelClient(ref.address, ref.secret)
            try:
                fake = type("Ref", (), {"client": lambda self: client})()
                got[g] = [x for chunk in dealt_chunks(fake, "src", None, g) for x in chunk]
            finally:
                client.close()

        threads = [threading.Thread(target=task, args=(g,)) for g in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(got[0] + got[1]) == list(range(500))
    finally:
        channel.close()
