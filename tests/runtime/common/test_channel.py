"""The authenticated channel (dag/runtime/common/channel.py): handshake, frames, the driver's message server."""

from __future__ import annotations

import socket
import threading

import pytest

from dag.runtime.common.channel import (
    AuthenticationError, ChannelClient, DriverChannel, FrameSocket, bind_host, client_handshake, connect, new_secret,
    server_handshake,
)
from tests.support import wait_for


def test_channel_when_request_then_handler_reply_returned():
    secret = new_secret()
    with DriverChannel(secret) as server:
        server.register("echo", lambda body: ("got", body))
        with ChannelClient(server.address, secret) as client:
            assert client.request("echo", [1, "x"]) == ("got", [1, "x"])
            assert client.request("echo", {"a": 2}, as_json=True) == ("got", {"a": 2})


def test_channel_when_threads_share_a_client_then_each_request_gets_its_own_reply():
    """Several threads of a task share one client: a reply's check must not read a request id that another
    thread's request has moved on since (a run under load failed with "reply out of order")."""
    import sys

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race needs a switch at one line
    errors: list[BaseException] = []
    secret = new_secret()
    try:
        with DriverChannel(secret) as server:
            server.register("echo", lambda body: body)
            with ChannelClient(server.address, secret) as client:

                def work(n: int) -> None:
                    try:
                        for i in range(1500):
                            assert client.request("echo", (n, i)) == (n, i)
                    except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                        errors.append(exc)

                threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(60)
                assert not any(t.is_alive() for t in threads)
    finally:
        sys.setswitchinterval(previous)
    assert not errors, errors[:3]


def test_channel_when_one_way_messages_then_handled_in_order():
    secret = new_secret()
    seen: list[int] = []
    with DriverChannel(secret) as server:
        server.register("n", seen.append)
        with ChannelClient(server.address, secret) as client:
            for i in range(100):
                client.send("n", i, as_json=i % 2 == 0)
            wait_for(lambda: len(seen) == 100, 5, "the 100 messages", interval=0.01)
    assert seen == list(range(100))


def test_channel_when_wrong_secret_then_peer_dropped_and_nothing_unpickled():
    calls: list[object] = []
    with DriverChannel(new_secret()) as server:
        server.register("t", calls.append)
        with pytest.raises((AuthenticationError, ConnectionError)):
            with ChannelClient(server.address, new_secret()) as client:
                client.send("t", 1)
                client.request("t", 2, timeout=2)
        assert calls == []


def test_channel_when_peer_sends_pickle_without_handshake_then_it_is_never_decoded():
    class Boom:
        def __reduce__(self):
            return (calls.append, ("executed",))

    import pickle
    calls: list[object] = []
    with DriverChannel(new_secret()) as server:
        raw = socket.create_connection(server.address, timeout=5)
        raw.recv(32)
        payload = pickle.dumps({"t": "x", "i": None, "b": Boom()})
        raw.sendall(b"\x00" * 64 + len(payload).to_bytes(4, "big") + b"P" + payload)
        try:
            assert raw.recv(100) == b""  # dropped after the failed challenge
        except ConnectionResetError:
            pass  # dropped with our unread bytes still queued
        raw.close()
    assert calls == []


def test_channel_when_peer_silent_then_dropped_after_timeout_and_server_keeps_serving(monkeypatch):
    secret = new_secret()
    with DriverChannel(secret) as server:
        server.register("echo", lambda body: body)
        silent = socket.create_connection(server.address, timeout=5)  # a port scan that says nothing
        with ChannelClient(server.address, secret) as client:
            assert client.request("echo", 7) == 7
        silent.close()


def test_channel_when_handler_fails_then_request_raises_and_server_survives():
    secret = new_secret()
    with DriverChannel(secret) as server:
        server.register("bad", lambda body: 1 / 0)
        server.register("ok", lambda body: "ok")
        with ChannelClient(server.address, secret) as client:
            with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                client.request("bad", None)
            assert client.request("ok", None) == "ok"


def test_handshake_when_server_impostor_then_client_refuses():
    listener = socket.create_server(("127.0.0.1", 0))
    result: list[BaseException | None] = []

    def impostor():
        conn, _ = listener.accept()
        try:
            server_handshake(conn, new_secret())
        except AuthenticationError:
            pass
        conn.close()

    t = threading.Thread(target=impostor)
    t.start()
    with pytest.raises((AuthenticationError, ConnectionError)):
        connect(listener.getsockname()[:2], new_secret(), timeout=5)
    t.join(5)
    listener.close()


def test_frames_when_json_then_decoded_without_pickle():
    a, b = socket.socketpair()
    secret = new_secret()
    t = threading.Thread(target=server_handshake, args=(a, secret))
    t.start()
    client_handshake(b, secret)
    t.join(5)
    fa, fb = FrameSocket(a), FrameSocket(b)
    fa.send({"vertex": "v", "index": 3}, as_json=True)
    assert fb.recv() == {"vertex": "v", "index": 3}
    fa.close()
    fb.close()


def test_bind_host_when_local_master_then_loopback():
    assert bind_host("local[2]") == "127.0.0.1"
    assert bind_host("local-cluster[2,1,1024]") == "127.0.0.1"
    assert bind_host("spark://h:7077", "10.1.2.3") == "10.1.2.3"
    with pytest.raises(ValueError, match="cluster_host"):
        bind_host("yarn")


def test_channel_when_closed_then_no_thread_outlives_it():
    before = set(threading.enumerate())
    secret = new_secret()
    server = DriverChannel(secret)
    server.register("echo", lambda body: body)
    client = ChannelClient(server.address, secret)
    client.request("echo", 1)
    client.close()
    server.close()
    wait_for(lambda: not (set(threading.enumerate()) - before), 5, "the channel's threads to end", interval=0.01)
