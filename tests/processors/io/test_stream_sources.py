"""stream_socket_p and stream_files_p (processors/io/text_streams.py): line splitting, sockets, watched files."""

from __future__ import annotations

import codecs
import os
import shutil
import socket
import threading
import time

import pytest

from dag.errors import DagError, DagValidationError
from processors import Context, Outbox, stream_files_p, stream_socket_p
from processors.io.text_streams import LineSplitter, is_stream_source
from tests.support import complete_until

# ------------------------------------------------------------------------------------------------ LineSplitter

V97 = [("1\n2\n", ["1", "2"]), ("1\r\n2\r\n", ["1", "2"]), ("1\n2\r\n", ["1", "2"]), ("1\r\n2\n", ["1", "2"]),
       ("1\r2\n", ["1", "2"]), ("", []), ("\n", [""]), ("1", []), ("1\n2", ["1"]), ("1\n\n2\n", ["1", "", "2"])]


def _split_everywhere(data: bytes, encoding: str, cut: int) -> list[str]:
    decoder, splitter = codecs.getincrementaldecoder(encoding)(), LineSplitter()
    out = splitter.feed(decoder.decode(data[:cut])) + splitter.feed(decoder.decode(data[cut:]))
    return out + splitter.feed(decoder.decode(b"", final=True)) + splitter.finish()


@pytest.mark.parametrize("text,expected", V97)
def test_socket_lines_when_utf16_split_at_every_byte_then_jet_lines(text, expected):
    data = text.encode("utf-16")
    for cut in range(len(data) + 1):
        assert _split_everywhere(data, "utf-16", cut) == expected, (text, cut)


@pytest.mark.parametrize("text,expected", [
    ("", []), ("blabla", []), ("blabla\n", ["blabla"]), ("blabla\nbla", ["blabla"]),
    ("blabla\nbla\n", ["blabla", "bla"]), ("\nbla\n", ["", "bla"]), ("\n\nbla\n", ["", "", "bla"]),
    ("blabla\r\nbla\r\n", ["blabla", "bla"]), ("blabla\rbla\r", ["blabla", "bla"])])
def test_line_splitter_when_complete_lines_then_v98(text, expected):
    splitter = LineSplitter()
    assert splitter.feed(text) + splitter.finish() == expected


def test_line_splitter_when_cr_at_chunk_end_then_waits_to_see_lf():
    splitter = LineSplitter()
    assert splitter.feed("a\r") == [] and splitter.pending == "a\r"
    assert splitter.feed("\nb\r") == ["a"]
    assert splitter.feed("c") == ["b"] and splitter.pending == "c"


# ------------------------------------------------------------------------------------------------ stream_socket_p


def _processor(supplier, context=None, capacity=1000):
    (proc,) = supplier.get([0])(0).get(1)
    outbox = Outbox([capacity])
    proc.init(outbox, context or Context(vertex_name="src"))
    return proc, outbox


class _Server:
    """A one-connection TCP server on loopback whose handler gets the accepted socket."""

    def __init__(self, handler):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, args=(handler,), daemon=True)
        self.thread.start()

    def _serve(self, handler):
        conn, _ = self.sock.accept()
        with conn:
            handler(conn)

    def close(self):
        self.sock.close()
        self.thread.join(5)
        assert not self.thread.is_alive()


def test_stream_socket_when_server_sends_in_pieces_then_lines_and_complete_on_close():
    ready = threading.Event()

    def handler(conn):
        for piece in (b"al", b"pha\r", b"\nbe", "ta\ngam\u00e9".encode()[:-1], "\u00e9".encode()[-1:] + b"\nrest"):
            conn.sendall(piece)
            time.sleep(0.02)  # pacing (the behaviour): each piece arrives on its own
        ready.wait(5)

    server = _Server(handler)
    try:
        proc, outbox = _processor(stream_socket_p("127.0.0.1", server.port))
        assert not proc.is_cooperative()
        items, done = complete_until(proc, outbox, lambda items, done: len(items) >= 3)
        assert items == ["alpha", "beta", "gam\u00e9"] and not done
        ready.set()
        items, done = complete_until(proc, outbox, lambda items, done: done)
        assert items == [] and done  # "rest" had no terminator: dropped at the end, as Jet's
        proc.close()
    finally:
        ready.set()
        server.close()


def test_stream_socket_when_outbox_small_then_nothing_lost():
    def handler(conn):
        conn.sendall("".join(f"{i}\n" for i in range(500)).encode())

    server = _Server(handler)
    try:
        proc, outbox = _processor(stream_socket_p("127.0.0.1", server.port), capacity=3)
        items, done = complete_until(proc, outbox, lambda items, done: done)
        assert items == [str(i) for i in range(500)]
        proc.close()
    finally:
        server.close()


def test_stream_socket_when_nobody_listens_then_error_names_vertex_and_address():
    probe = socket.create_server(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with pytest.raises(DagError, match=rf"vertex 'src': stream_socket_p could not connect to 127.0.0.1:{port}"):
        _processor(stream_socket_p("127.0.0.1", port))


def test_stream_socket_when_bad_arguments_then_rejected_eagerly():
    with pytest.raises(DagValidationError, match="port must be an int"):
        stream_socket_p("localhost", 0)
    with pytest.raises(DagValidationError, match="unknown encoding 'nope'"):
        stream_socket_p("localhost", 80, encoding="nope")
    supplier = stream_socket_p("localhost", 80)
    assert is_stream_source(supplier) and supplier.preferred_local_parallelism() == 1


# ------------------------------------------------------------------------------------------------ stream_files_p


def _append(path, text, mode="a"):
    with open(path, mode, encoding="utf-8", newline="") as f:
        f.write(text)


def _lines(n, prefix="line"):
    return "".join(f"{prefix}{i}\n" for i in range(n))


def test_stream_files_when_new_file_and_appends_then_every_line_once(tmp_path):
    proc, outbox = _processor(stream_files_p(tmp_path))
    _append(tmp_path / "a.txt", _lines(100))
    items, _ = complete_until(proc, outbox, lambda items, done: len(items) >= 100)
    _append(tmp_path / "a.txt", _lines(5, "more"))
    items2, _ = complete_until(proc, outbox, lambda items, done: len(items) >= 5)
    assert items == [f"line{i}" for i in range(100)] and items2 == [f"more{i}" for i in range(5)]


def test_stream_files_when_two_files_interleaved_and_glob_then_only_matching(tmp_path):
    proc, outbox = _processor(stream_files_p(tmp_path, glob="a.*"))
    for i in range(20):
        _append(tmp_path / "a.txt", f"a{i}\n")
        _append(tmp_path / "b.txt", f"b{i}\n")
    items, _ = complete_until(proc, outbox, lambda items, done: len(items) >= 20)
    time.sleep(0.15)  # stream_files_p's poll interval (0.05 s) passes (the behaviour): the next complete() scans
    outbox.reset()
    proc.complete()
    assert items + outbox.drain(0) == [f"a{i}" for i in range(20)]


def test_stream_files_when_preexisting_partial_line_completed_then_that_line_skipped(tmp_path):
    _append(tmp_path / "a.txt", _lines(10) + "incomplete line")
    proc, outbox = _processor(stream_files_p(tmp_path))
    _append(tmp_path / "a.txt", " still incomplete line ")
    _append(tmp_path / "a.txt", _lines(10, "new"))
    items, _ = complete_until(proc, outbox, lambda items, done: len(items) >= 9)
    assert items == [f"new{i}" for i in range(1, 10)]


def test_stream_files_when_line_written_in_pieces_then_emitted_whole(tmp_path):
    proc, outbox = _processor(stream_files_p(tmp_path))
    _append(tmp_path / "a.txt", "incomplete1")
    _append(tmp_path / "b.txt", "incomplete2")
    complete_until(proc, outbox, lambda items, done: True)  # the first scan reads the incomplete lines
    _append(tmp_path / "a.txt", " complete1\n")
    _append(tmp_path / "b.txt", " complete2\n")
    items, _ = complete_until(proc, outbox, lambda items, done: len(items) >= 2)
    assert sorted(items) == ["incomplete1 complete1", "incomplete2 complete2"]


def test_stream_files_when_file_rewritten_in_place_then_no_items_and_deleted_file_forgotten(tmp_path):
    _append(tmp_path / "a.txt", _lines(10))
    proc, outbox = _processor(stream_files_p(tmp_path))
    _append(tmp_path / "a.txt", _lines(10, "LINE"), mode="r+")  # same size, overwritten from byte 0
    assert complete_until(proc, outbox, lambda items, done: True)[0] == []
    os.remove(tmp_path / "a.txt")
    time.sleep(0.1)  # stream_files_p's poll interval (0.05 s) passes (the behaviour): the next complete() scans
    assert complete_until(proc, outbox, lambda items, done: True)[0] == []  # the deletion is noticed
    _append(tmp_path / "a.txt", "fresh\n")
    items, _ = complete_until(proc, outbox, lambda items, done: len(items) >= 1)
    assert items == ["fresh"]


def test_stream_files_when_directory_deleted_then_completes(tmp_path):
    watched = tmp_path / "watched"
    watched.mkdir()
    proc, outbox = _processor(stream_files_p(watched))
    shutil.rmtree(watched)
    _items, done = complete_until(proc, outbox, lambda items, done: done)
    assert done


def test_stream_files_when_two_processors_then_files_split_between_them(tmp_path):
    supplier = stream_files_p(tmp_path)
    procs = []
    for index in range(2):
        (proc,) = supplier.get([0])(0).get(1)
        outbox = Outbox([1000])
        proc.init(outbox, Context(vertex_name="tail", local_parallelism=2, total_parallelism=2,
                                  local_processor_index=index, global_processor_index=index))
        procs.append((proc, outbox))
    for i in range(8):
        _append(tmp_path / f"f{i}.txt", f"from{i}\n")
    seen = []
    deadline = time.monotonic() + 10
    while len(seen) < 8 and time.monotonic() < deadline:
        for proc, outbox in procs:
            outbox.reset()
            proc.complete()
            seen.extend((id(proc), x) for x in outbox.drain(0))
        time.sleep(0.01)
    assert sorted(x for _, x in seen) == [f"from{i}" for i in range(8)]
    assert len({owner for owner, _ in seen}) == 2  # both processors got files (8 names, stable hash)


def test_stream_files_when_directory_missing_then_error_names_it(tmp_path):
    with pytest.raises(DagError, match="directory '.*nowhere' does not exist"):
        _processor(stream_files_p(tmp_path / "nowhere"))


def test_stream_files_when_append_larger_than_one_read_then_every_line_in_order(tmp_path):
    proc, outbox = _processor(stream_files_p(tmp_path), capacity=100_000)
    count = 150_000  # ~2.3 MB: several reads
    _append(tmp_path / "big.txt", _lines(count))
    items, _ = complete_until(proc, outbox, lambda items, done: len(items) >= count, timeout=60)
    assert items == [f"line{i}" for i in range(count)]
