"""examples/network_source.py (the Jet 4.0 tutorial's network source, steps 16-19), engine-free: its processors
driven directly, fed by a socket client on loopback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from processors import Inbox, Watermark

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import network_source  # noqa: E402

from tests.support import complete_until, connect, free_base_port, port_is_free  # noqa: E402
from tests.support.snapshots import open_source  # noqa: E402


def test_step16_stream_source_when_client_sends_lines_then_emitted_and_completes_on_disconnect():
    base = free_base_port(1)
    proc, outbox = open_source(network_source.build_network_source(base))
    try:
        assert complete_until(proc, outbox, lambda items, done: True) == ([], False)  # no client yet: nothing, no end
        client = connect(base)
        client.sendall(b"first line\nsecond ")
        items, done = complete_until(proc, outbox, lambda items, done: items)
        assert items == ["first line"] and not done
        client.sendall("line \u00e9\nlast without newline".encode())
        client.close()
        items, done = complete_until(proc, outbox, lambda items, done: done)
        assert items == ["second line \u00e9", "last without newline"] and done
    finally:
        proc.close()
    assert port_is_free(base)


def test_step17_timestamped_when_lines_start_with_time_then_watermarks_precede_items():
    base = free_base_port(1)
    proc, outbox = open_source(network_source.build_network_source(base, timestamped=True))
    try:
        client = connect(base)
        client.sendall(b"1000,0.5,a\n900,0.1,b\n1500,0.2,c\n")
        items, _ = complete_until(proc, outbox, lambda items, done: len(items) >= 5)
        client.close()
    finally:
        proc.close()
    assert items == [Watermark(1000), "1000,0.5,a", "900,0.1,b", Watermark(1500), "1500,0.2,c"]


@pytest.mark.parametrize("members", [1, 2])
def test_step18_distributed_when_parallelism_two_then_each_processor_listens_on_base_plus_global_index(members):
    source = network_source.build_network_source(0, parallelism=2)
    assert source.preferred_local_parallelism() == 2
    total = 2 * members
    base = free_base_port(total)
    source = network_source.build_network_source(base, parallelism=2)
    procs = [open_source(source, g, total, members) for g in range(total)]
    try:
        clients = [connect(base + g) for g in range(total)]
        for g, client in enumerate(clients):
            client.sendall(f"from client {g}\n".encode())
            client.close()
        for g, (proc, outbox) in enumerate(procs):
            items, done = complete_until(proc, outbox, lambda items, done: done)
            assert items == [f"from client {g}"]
    finally:
        for proc, _ in procs:
            proc.close()
    assert all(port_is_free(base + g) for g in range(total))


def test_step19_fault_tolerant_when_restored_then_each_processor_takes_its_own_count():
    base = free_base_port(2)
    source = network_source.build_network_source(base, parallelism=2, fault_tolerant=True)
    procs = [open_source(source, g, 2) for g in range(2)]
    try:
        clients = [connect(base + g) for g in range(2)]
        clients[1].sendall(b"x\ny\n")
        complete_until(*procs[1], lambda items, done: len(items) == 2)
        saved = []
        for proc, outbox in procs:
            outbox.reset()
            assert proc.save_to_snapshot() is True
            saved += outbox.drain_snapshot()
    finally:
        for proc, _ in procs:
            proc.close()
        for client in clients:
            client.close()
    restored = [open_source(source, g, 2) for g in range(2)]
    try:
        for proc, _ in restored:
            proc.restore_from_snapshot(Inbox(list(saved)))
            assert proc.finish_snapshot_restore() is True
        counts = [proc._state.emitted for proc, _ in restored]  # noqa: SLF001 - the example's state
    finally:
        for proc, _ in restored:
            proc.close()
    assert counts == [0, 2]


def test_step19_sequence_source_when_restored_then_resumes_where_the_snapshot_left_it():
    proc, outbox = open_source(network_source.build_sequence_source())
    first, _ = complete_until(proc, outbox, lambda items, done: len(items) >= 5)
    outbox.reset()
    assert proc.save_to_snapshot() is True
    saved = outbox.drain_snapshot()
    fresh, fresh_outbox = open_source(network_source.build_sequence_source())
    fresh.restore_from_snapshot(Inbox(saved))
    fresh.finish_snapshot_restore()
    again, _ = complete_until(fresh, fresh_outbox, lambda items, done: len(items) >= 3)
    assert first[:5] == [0, 1, 2, 3, 4] and again[0] == first[-1] + 1


def test_network_source_when_closed_before_any_client_then_port_released():
    base = free_base_port(1)
    proc, _ = open_source(network_source.build_network_source(base))
    assert not port_is_free(base)
    proc.close()
    assert port_is_free(base)


def test_network_dag_shape():
    dag = network_source.build_dag()
    assert [v.name for v in dag] == ["http-source", "sink"]


@pytest.mark.spark
@pytest.mark.timeout(600)
def test_network_source_script_when_fed_like_nc_then_logs_the_lines_and_exits_after_seconds():
    """As the README shows it: ``python examples/network_source.py --seconds N`` then ``cat data.csv | nc``."""
    import subprocess

    base = free_base_port(1)
    script = subprocess.Popen([sys.executable, str(EXAMPLES / "network_source.py"), "--port", str(base),
                               "--seconds", "90"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        client = connect(base, timeout=240)
        client.sendall(b"1583310272413,0.185707,SimpleEvent(sequence=14)\n")
        client.close()
        output, _ = script.communicate(timeout=300)
    finally:
        if script.poll() is None:
            script.kill()
            script.wait(30)
    assert script.returncode == 0, output[-3000:]
    assert f"Waiting for connection on port(s) {base} ..." in output
    assert "1583310272413,0.185707,SimpleEvent(sequence=14)" in output
