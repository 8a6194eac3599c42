"""write_buffered_p without Spark."""

from __future__ import annotations

import pytest

from dag.errors import DagValidationError
from processors import Context, Inbox, Outbox, Watermark, verify_processor, write_buffered_p


def make(log, create=None):
    return write_buffered_p(
        create or (lambda ctx: []),
        lambda buf, item: buf.append(item),
        lambda buf: (log.append(("flush", list(buf))), buf.clear()),
        lambda buf: log.append(("destroy", list(buf))),
    )


def test_write_buffered_when_supplier_called_then_new_non_cooperative_processor_each_time():
    supplier = make([])
    a, b = supplier(), supplier()
    assert a is not b
    assert not a.is_cooperative()


def test_write_buffered_flushes_once_per_inbox_batch_and_destroys_on_close():
    log = []
    p = make(log)()
    p.init(Outbox([]), Context())
    p.process(0, Inbox([1, 2, 3]))
    p.process(0, Inbox([4]))
    assert p.try_process_watermark(Watermark(5)) is True
    p.close()
    assert log == [("flush", [1, 2, 3]), ("flush", [4]), ("destroy", [])]


def test_write_buffered_empties_the_inbox():
    p = make([])()
    p.init(Outbox([]), Context())
    inbox = Inbox([1, 2])
    p.process(0, inbox)
    assert inbox.is_empty()


def test_write_buffered_passes_verify_processor_and_each_run_flushes_every_item():
    buffers = []

    def create(ctx):
        buffers.append({"pending": [], "flushed": [], "destroyed": False})
        return buffers[-1]

    def flush(buf):
        buf["flushed"] += buf["pending"]
        buf["pending"] = []

    supplier = write_buffered_p(create, lambda buf, item: buf["pending"].append(item), flush,
                                lambda buf: buf.update(destroyed=True))
    verify_processor(supplier).disable_snapshots().input(list(range(5))).expect_output([])
    assert buffers, "verify_processor never created a processor"
    for buf in buffers:  # verify_processor runs the processor several times (inbox limits 1 and many)
        assert buf["flushed"] == list(range(5)) and buf["pending"] == [] and buf["destroyed"]


def test_write_buffered_create_fn_gets_the_processor_context():
    contexts = []
    p = make([], create=lambda ctx: contexts.append(ctx) or [])()
    ctx = Context(vertex_name="sink", global_processor_index=0)
    p.init(Outbox([]), ctx)
    assert contexts == [ctx]


def test_write_buffered_when_create_fn_returns_none_then_clear_error_naming_vertex():
    p = write_buffered_p(lambda ctx: None, lambda buf, item: None)()
    with pytest.raises(DagValidationError, match="create_fn of sink vertex 'out'.*returned None"):
        p.init(Outbox([]), Context(vertex_name="out"))
    p.close()  # no buffer: destroy_fn is not called and close does not fail


def test_write_buffered_when_receive_fails_then_destroy_still_runs_on_close():
    log = []

    def receive(buf, item):
        raise ValueError(f"cannot store {item}")

    p = write_buffered_p(lambda ctx: "conn", receive, None, lambda buf: log.append(buf))()
    p.init(Outbox([]), Context())
    with pytest.raises(ValueError, match="cannot store 1"):
        p.process(0, Inbox([1]))
    p.close()
    assert log == ["conn"]


def test_write_buffered_without_flush_and_destroy_fns():
    received = []
    p = write_buffered_p(lambda ctx: received, lambda buf, item: buf.append(item))()
    p.init(Outbox([]), Context())
    p.process(0, Inbox(["a"]))
    p.close()
    assert received == ["a"]


@pytest.mark.parametrize("param", ["create_fn", "on_receive_fn", "flush_fn", "destroy_fn"])
def test_write_buffered_when_argument_not_callable_then_clear_error(param):
    args = {"create_fn": lambda ctx: [], "on_receive_fn": lambda b, i: None, param: 42}
    with pytest.raises(DagValidationError, match=f"write_buffered_p: {param} must be a function"):
        write_buffered_p(**args)
