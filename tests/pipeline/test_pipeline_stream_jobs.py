"""Stream pipelines run end to end on the pipelined runtime: a socket stream that ends (the server closes),
windowed word counts per second, and the item stream cancelled after a while."""

from __future__ import annotations

import socket
import threading

import pytest

from pipeline import Pipeline, SimpleEvent, Sinks, Sources, TestSources, WindowDefinition
from processors import TimestampedEntry, counting, whole_item
from tests.support import running, wait_for

pytestmark = pytest.mark.spark


def _serve(lines: list[str]) -> tuple[int, threading.Thread]:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def run() -> None:
        with server:
            server.settimeout(120)
            connection, _ = server.accept()
            with connection:
                connection.sendall("".join(line + "\n" for line in lines).encode())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return port, thread


def test_socket_stream_when_windowed_word_count_then_counts_per_window(engine) -> None:
    lines = ["100,a b", "900,b", "1500,a", "2100,c c"]
    port, thread = _serve(lines)
    p = Pipeline.create()
    (p.read_from(Sources.socket("127.0.0.1", port))
     .with_timestamps(lambda line: int(line.split(",")[0]), 0)
     .flat_map(lambda line: line.split(",")[1].split())
     .window(WindowDefinition.tumbling(1000)).grouping_key(whole_item).aggregate(counting())
     .write_to(Sinks.list("stream-counts")))
    engine.get_list("stream-counts").clear()
    engine.new_job(p).join(timeout=300)
    thread.join(10)
    results = sorted(engine.get_list("stream-counts"))
    engine.get_list("stream-counts").clear()
    assert results == sorted([TimestampedEntry(1000, "a", 1), TimestampedEntry(1000, "b", 2),
                              TimestampedEntry(2000, "a", 1), TimestampedEntry(3000, "c", 2)])


def test_item_stream_when_run_then_simple_events_reach_the_sink_until_cancelled(engine) -> None:
    p = Pipeline.create()
    p.read_from(TestSources.item_stream(200)).with_native_timestamps(0).map(lambda e: e).write_to(
        Sinks.list("item-stream"))
    engine.get_list("item-stream").clear()
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(engine.get_list("item-stream")) >= 20, 120, "20 events in the sink")
    items = list(engine.get_list("item-stream"))
    engine.get_list("item-stream").clear()
    assert len(items) >= 20 and all(isinstance(e, SimpleEvent) for e in items)
    assert len({e.sequence for e in items}) == len(items)  # each event once (two map processors interleave them)
    assert len({e.timestamp - e.sequence * 1000 // 200 for e in items}) == 1  # stamped at the rate, from one start
