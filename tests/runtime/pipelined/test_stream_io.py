"""Stream sources and live sinks end to end on the pipelined runtime (local[2]): the tutorial's network source
fed by socket clients, stream_map_p fed by puts on the driver, stream_files_p fed by appends, results seen in
driver-side lists and maps while the job runs. Every job is cancelled in ``finally``; no thread of the job and
no listening socket may outlive it."""

from __future__ import annotations

import itertools
import socket
import sys
import threading
from pathlib import Path

import pytest

from dag import DAG, Engine, EngineConfig
from dag import JobStatus
from edges import between
from processors import JournalInitialPosition, map_p, stream_files_p, stream_map_p, write_list_p, write_map_p

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
sys.path.insert(0, str(EXAMPLES))

import network_source  # noqa: E402

from tests.support import connect, free_base_port, port_is_free, running, wait_for  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

WAIT = 60.0


def poke_until(poke, predicate, what: str) -> None:
    """Call ``poke(i)`` for i = 0, 1, ... every 0.05 s until ``predicate()``: a source that skips what came before
    it started (START_FROM_CURRENT, a file watcher) has surely started once a poke arrived."""
    count = itertools.count()
    wait_for(lambda: predicate() or poke(next(count)), WAIT, what)


def append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


@pytest.mark.parametrize("members", [1, 2])
def test_network_source_when_clients_send_lines_then_seen_live_in_driver_list(engine, members):
    eng = Engine(EngineConfig(members=members), spark=engine.spark) if members > 1 else engine
    base = free_base_port(4)
    name = f"network-lines-{members}"
    eng.get_list(name).clear()
    dag = network_source.build_dag(network_source.build_network_source(base, parallelism=2),
                                   sink=write_list_p(name))
    # distributed(2) asks for 2 per member, capped by the default local parallelism (local[2]: 2 // members)
    total = eng.plan(dag).vertices["http-source"].total_parallelism
    assert total == 2
    clients = []
    try:
        with running(eng, dag):
            clients = [connect(base + g, WAIT) for g in range(total)]
            for g, client in enumerate(clients):
                client.sendall("".join(f"{g},line {i}\n" for i in range(50)).encode())
            wait_for(lambda: len(eng.get_list(name)) >= 50 * total, WAIT, "every line in the driver's list")
            lines = list(eng.get_list(name))
        assert sorted(lines) == sorted(f"{g},line {i}" for g in range(total) for i in range(50))
        for g in range(total):  # one client, one processor: its lines in order
            assert [x for x in lines if x.startswith(f"{g},")] == [f"{g},line {i}" for i in range(50)]
    finally:
        for client in clients:
            client.close()
    wait_for(lambda: all(port_is_free(base + g) for g in range(total)), 15, "the source ports to close")


def test_stream_map_when_puts_on_the_driver_then_entries_reach_live_map_sink(engine):
    prices = engine.get_map("live-prices")
    prices.update({"early": 1})
    out = engine.get_map("live-prices-doubled")
    out.clear()
    dag = DAG()
    src = dag.new_vertex("prices", stream_map_p("live-prices", JournalInitialPosition.START_FROM_OLDEST))
    double = dag.new_vertex("double", map_p(lambda e: (e[0], e[1] * 2)))
    sink = dag.new_vertex("sink", write_map_p("live-prices-doubled"))
    dag.edge(between(src, double)).edge(between(double, sink))
    with running(engine, dag):
        wait_for(lambda: out.get("early") == 2, WAIT, "the entry put before the job started")
        for i in range(100):
            prices[f"k{i % 10}"] = i
        wait_for(lambda: all(out.get(f"k{j}") == 2 * (90 + j) for j in range(10)), WAIT,
                 "the last update of each key")
        del prices["early"]
        prices["late"] = 7
        wait_for(lambda: out.get("late") == 14, WAIT, "a put after a remove")
    assert out["early"] == 2  # the remove is not a put event: nothing was emitted for it


def test_stream_map_when_start_from_current_then_old_entries_skipped(engine):
    m = engine.get_map("current-journal")
    m.update({"old": 1})
    seen = engine.get_list("current-journal-out")
    seen.clear()
    dag = DAG()
    src = dag.new_vertex("journal", stream_map_p("current-journal", JournalInitialPosition.START_FROM_CURRENT))
    dag.edge(between(src, dag.new_vertex("sink", write_list_p("current-journal-out"))))
    with running(engine, dag):
        # START_FROM_CURRENT is per source processor: put to one key (one partition, one processor) until that
        # processor has surely started, i.e. until one of the puts arrives
        poke_until(lambda i: m.__setitem__("tick", i), lambda: seen, "a put to reach the sink")
        m["tick"] = -1
        wait_for(lambda: ("tick", -1) in seen, WAIT, "the last put")
    assert ("old", 1) not in seen


def test_stream_files_when_lines_appended_after_start_then_seen_in_order(engine, tmp_path):
    lines = engine.get_list("tail-out")
    lines.clear()
    dag = DAG()
    src = dag.new_vertex("tail", stream_files_p(tmp_path, glob="*.log"))
    dag.edge(between(src, dag.new_vertex("sink", write_list_p("tail-out"))))
    with running(engine, dag):
        path = tmp_path / "app.log"
        # lines written before the watcher started are skipped
        poke_until(lambda i: append(path, f"tick {i}\n"), lambda: lines, "an appended line to reach the sink")
        append(path, "".join(f"line {j}\n" for j in range(200)))
        append(tmp_path / "ignored.txt", "not matching\n")
        wait_for(lambda: "line 199" in lines, WAIT, "the appended lines")
        got = list(lines)
    assert [x for x in got if x.startswith("line")] == [f"line {j}" for j in range(200)]
    assert "not matching" not in got


def test_stream_socket_when_server_closes_then_source_completes_and_job_completes(engine):
    from processors import stream_socket_p

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    out = engine.get_list("socket-out")
    out.clear()

    def serve():
        server.settimeout(WAIT)
        conn, _ = server.accept()
        with conn:
            conn.sendall("".join(f"msg {i}\n" for i in range(100)).encode() + b"unterminated")

    feeder = threading.Thread(target=serve, daemon=True)
    feeder.start()
    dag = DAG()
    src = dag.new_vertex("socket", stream_socket_p("127.0.0.1", port))
    dag.edge(between(src, dag.new_vertex("sink", write_list_p("socket-out"))))
    job = engine.new_job(dag)
    try:
        job.join(WAIT)  # every source completed: the stream job ends by itself
        assert job.status is JobStatus.COMPLETED
        assert list(out) == [f"msg {i}" for i in range(100)]
    finally:
        job.cancel()
        feeder.join(5)
        server.close()
    assert not feeder.is_alive()
