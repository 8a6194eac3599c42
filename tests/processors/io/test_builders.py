"""SourceBuilder and SinkBuilder without Spark: builder methods, buffer rules, processor protocol."""

from __future__ import annotations

import itertools
import time

import pytest

from dag.errors import DagValidationError, ProcessorContractError
from processors import (
    Context, Inbox, Outbox, ProcessorMetaSupplier, SinkBuilder, SourceBuilder, Watermark, verify_processor,
)
from processors.execution import staged
from processors.io.text_streams import is_stream_source
from processors.io.connector_builders import BatchSource, BuiltSink, SourceBuffer, StreamSource, TimestampedSourceBuffer
from processors.execution.staged import drive


def processors_of(pms, local_parallelism=1, member_count=1):
    """Every processor a meta-supplier makes, with its context, the way an engine would ask for them."""
    total = local_parallelism * member_count
    pms.init(Context(vertex_name="v", local_parallelism=local_parallelism, total_parallelism=total))
    get = pms.get(list(range(member_count)))
    made = []
    for member in range(member_count):
        ps = get(member)
        ps.init(Context(vertex_name="v", local_parallelism=local_parallelism, total_parallelism=total,
                        member_index=member))
        for local, proc in enumerate(ps.get(local_parallelism)):
            g = member * local_parallelism + local
            made.append((proc, Context(vertex_name="v", local_parallelism=local_parallelism,
                                       total_parallelism=total, member_index=member,
                                       local_processor_index=local, global_processor_index=g)))
    return made


def run_source(proc, context=None, capacity=3):
    """Drive a source processor: init, complete() until True, close(); returns (items, complete() calls)."""
    outbox = Outbox([capacity])
    try:
        proc.init(outbox, context or Context())
        return complete_all(proc, outbox)
    finally:
        proc.close()


def complete_all(proc, outbox, max_calls=10_000):
    """Call complete() until True, draining the outbox; returns (items, complete() calls)."""
    out = []
    for calls in range(1, max_calls):
        outbox.reset()
        done = proc.complete()
        out += outbox.drain(0)
        if done:
            return out, calls
    raise AssertionError("source never completed")


def fill_from_list(chunk):
    def fill(state, buf):
        for _ in range(chunk):
            if not state:
                buf.close()
                return
            buf.add(state.pop(0))
    return fill


# ---------------------------------------------------------------------------------------------- SourceBuffer


def test_buffer_when_add_after_close_then_clear_error():
    buf = SourceBuffer("src")
    buf.add(1)
    buf.close()
    with pytest.raises(ProcessorContractError, match="src.*closed, can't add more items"):
        buf.add(2)


def test_buffer_when_none_added_then_rejected():
    with pytest.raises(ProcessorContractError, match="must not be None"):
        SourceBuffer("src").add(None)


def test_buffer_when_closed_then_reports_closed():
    buf = SourceBuffer("src")
    buf.close()
    assert buf.is_closed()


def test_buffer_size_counts_added_items():
    buf = SourceBuffer("src")
    buf.add("a")
    buf.add("b")
    assert buf.size() == len(buf) == 2 and not buf.is_closed()


# ---------------------------------------------------------------------------------------------- SourceBuilder


def test_batch_source_when_built_then_named_meta_supplier_of_total_parallelism_one():
    src = SourceBuilder.batch("numbers", lambda ctx: [1]).fill_buffer_fn(fill_from_list(1)).build()
    assert isinstance(src, BatchSource) and isinstance(src, ProcessorMetaSupplier)
    assert src.name == "numbers"
    assert src.preferred_local_parallelism() == 1


def test_batch_source_emits_all_items_in_chunks_through_a_small_outbox():
    created = []

    def create(ctx):
        created.append(ctx.global_processor_index)
        return list(range(10))

    src = SourceBuilder.batch("numbers", create).fill_buffer_fn(fill_from_list(4)).build()
    [(proc, ctx)] = processors_of(src)
    assert not proc.is_cooperative()
    items, _ = run_source(proc, ctx, capacity=3)
    assert items == list(range(10))
    assert created == [0]


def test_batch_source_calls_fill_buffer_fn_once_per_complete_call_when_outbox_has_room():
    calls = []

    def fill(state, buf):
        calls.append(len(state))
        fill_from_list(2)(state, buf)

    src = SourceBuilder.batch("s", lambda ctx: list(range(5))).fill_buffer_fn(fill).build()
    [(proc, ctx)] = processors_of(src)
    items, complete_calls = run_source(proc, ctx, capacity=100)
    assert items == [0, 1, 2, 3, 4]
    assert len(calls) == complete_calls == 3  # [0,1] [2,3] [4]+close


def test_batch_source_passes_verify_processor():
    src = (SourceBuilder.batch("s", lambda ctx: list("abcdefg"))
           .fill_buffer_fn(fill_from_list(3)).build())
    verify_processor(src).disable_snapshots().expect_output(list("abcdefg"))


def test_batch_source_when_not_distributed_and_two_members_then_only_member_zero_creates_state():
    seen = []

    def create(ctx):
        seen.append((ctx.member_index, ctx.global_processor_index))
        return [ctx.member_index]

    src = SourceBuilder.batch("s", create).fill_buffer_fn(fill_from_list(5)).build()
    outputs = []
    for proc, ctx in processors_of(src, local_parallelism=1, member_count=2):
        outputs.append(run_source(proc, ctx)[0])
    assert seen == [(0, 0)]
    assert outputs == [[0], []]


def test_batch_source_when_not_distributed_and_local_parallelism_two_then_rejected_naming_vertex():
    src = SourceBuilder.batch("s", lambda ctx: []).fill_buffer_fn(fill_from_list(1)).build()
    with pytest.raises(DagValidationError, match="vertex 'v'.*total parallelism of 1"):
        src.init(Context(vertex_name="v", local_parallelism=2, total_parallelism=2))


def test_distributed_source_sees_each_global_index_once_and_slices_data():
    seen = []

    def create(ctx):
        seen.append(ctx.global_processor_index)
        return [i for i in range(20) if i % ctx.total_parallelism == ctx.global_processor_index]

    src = SourceBuilder.batch("s", create).fill_buffer_fn(fill_from_list(3)).distributed(2).build()
    assert src.preferred_local_parallelism() == 2
    out = []
    for proc, ctx in processors_of(src, local_parallelism=2, member_count=2):
        out += run_source(proc, ctx)[0]
    assert sorted(seen) == [0, 1, 2, 3]
    assert sorted(out) == list(range(20))


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None])
def test_distributed_when_not_positive_int_then_clear_error(bad):
    builder = SourceBuilder.batch("s", lambda ctx: [])
    with pytest.raises(DagValidationError, match=r"distributed\(.*must be an int >= 1"):
        builder.distributed(bad)


def test_build_when_fill_buffer_fn_missing_then_clear_error():
    with pytest.raises(DagValidationError, match="fill_buffer_fn must be set"):
        SourceBuilder.batch("s", lambda ctx: []).build()


@pytest.mark.parametrize("method", ["fill_buffer_fn", "destroy_fn", "create_snapshot_fn", "restore_snapshot_fn"])
def test_source_builder_method_when_not_callable_then_clear_error(method):
    with pytest.raises(DagValidationError, match=f"{method} must be a function"):
        getattr(SourceBuilder.batch("s", lambda ctx: []), method)(42)


def test_source_builder_when_create_fn_not_callable_or_name_empty_then_clear_error():
    with pytest.raises(DagValidationError, match="create_fn must be a function"):
        SourceBuilder.batch("s", "not a function")
    with pytest.raises(DagValidationError, match="non-empty str"):
        SourceBuilder.batch("", lambda ctx: [])


def test_destroy_fn_runs_once_after_completion():
    destroyed = []
    src = (SourceBuilder.batch("s", lambda ctx: ["x"]).fill_buffer_fn(fill_from_list(1))
           .destroy_fn(destroyed.append).build())
    [(proc, ctx)] = processors_of(src)
    run_source(proc, ctx)
    proc.close()
    assert destroyed == [[]]


def test_destroy_fn_runs_when_fill_buffer_fn_fails():
    destroyed = []

    def fill(state, buf):
        raise OSError("disk on fire")

    src = SourceBuilder.batch("s", lambda ctx: "state").fill_buffer_fn(fill).destroy_fn(destroyed.append).build()
    [(proc, ctx)] = processors_of(src)
    with pytest.raises(OSError, match="disk on fire"):
        run_source(proc, ctx)
    assert destroyed == ["state"]


def test_destroy_fn_not_called_when_create_fn_failed():
    destroyed = []

    def create(ctx):
        raise RuntimeError("no connection")

    src = SourceBuilder.batch("s", create).fill_buffer_fn(fill_from_list(1)).destroy_fn(destroyed.append).build()
    [(proc, ctx)] = processors_of(src)
    with pytest.raises(RuntimeError, match="no connection"):
        run_source(proc, ctx)
    assert destroyed == []


def test_destroy_fn_runs_even_for_a_none_state():
    destroyed = []
    src = (SourceBuilder.batch("s", lambda ctx: None).fill_buffer_fn(lambda st, buf: buf.close())
           .destroy_fn(destroyed.append).build())
    [(proc, ctx)] = processors_of(src)
    assert run_source(proc, ctx)[0] == []
    assert destroyed == [None]


def test_source_when_item_added_after_close_then_processor_fails_clearly():
    def fill(state, buf):
        buf.close()
        buf.add(1)

    src = SourceBuilder.batch("late", lambda ctx: None).fill_buffer_fn(fill).build()
    [(proc, ctx)] = processors_of(src)
    with pytest.raises(ProcessorContractError, match="'late'.*after close"):
        run_source(proc, ctx)


class Counter:
    def __init__(self, limit):
        self.next = 0
        self.limit = limit


def fill_counter(state, buf):
    for _ in range(2):
        if state.next >= state.limit:
            buf.close()
            return
        buf.add(state.next)
        state.next += 1


def test_snapshot_fns_when_verified_with_snapshot_restore_cycles_then_no_item_lost_or_duplicated():
    restored = []

    def restore(state, saved):
        restored.append(list(saved))
        state.next = saved[0]

    src = (SourceBuilder.batch("counter", lambda ctx: Counter(9)).fill_buffer_fn(fill_counter)
           .create_snapshot_fn(lambda st: st.next).restore_snapshot_fn(restore).build())
    verify_processor(src).expect_output(list(range(9)))
    assert restored, "restore_snapshot_fn was never called by the snapshot/restore cycles"


def test_snapshot_save_emits_pending_items_first_and_restore_gets_all_states():
    src = (SourceBuilder.batch("counter", lambda ctx: Counter(10)).fill_buffer_fn(fill_counter)
           .create_snapshot_fn(lambda st: st.next)
           .restore_snapshot_fn(lambda st, saved: setattr(st, "next", max(saved)))
           .build())
    [(proc, ctx)] = processors_of(src)
    outbox = Outbox([1], snapshot_capacity=10)
    proc.init(outbox, ctx)
    assert proc.complete() is False  # 0 emitted, 1 pending
    outbox.reset()
    assert proc.save_to_snapshot() is False  # the outbox is still full: 1 must go out before the state is saved
    assert outbox.drain_snapshot() == []
    assert outbox.drain(0) == [0]
    outbox.reset()
    assert proc.save_to_snapshot() is True
    assert outbox.drain(0) == [1]
    saved = outbox.drain_snapshot()
    assert [value for _key, value in saved] == [(2, None)]  # (state, watermark): no watermark in a batch source

    [(fresh, ctx2)] = processors_of(src)
    fresh_outbox = Outbox([100])
    fresh.init(fresh_outbox, ctx2)
    fresh.restore_from_snapshot(Inbox([saved[0], (("other", 1), (7, None))]))
    assert fresh.finish_snapshot_restore() is True
    assert complete_all(fresh, fresh_outbox)[0] == [7, 8, 9]


def test_snapshot_when_create_snapshot_fn_returns_none_then_nothing_saved():
    src = (SourceBuilder.batch("s", lambda ctx: Counter(3)).fill_buffer_fn(fill_counter)
           .create_snapshot_fn(lambda st: None).restore_snapshot_fn(lambda st, saved: None).build())
    [(proc, ctx)] = processors_of(src)
    outbox = Outbox([10], snapshot_capacity=10)
    proc.init(outbox, ctx)
    assert proc.save_to_snapshot() is True
    assert outbox.drain_snapshot() == []


def test_snapshot_when_only_one_of_the_two_fns_set_then_build_fails():
    with pytest.raises(DagValidationError, match="create_snapshot_fn is set but restore_snapshot_fn is not"):
        (SourceBuilder.batch("s", lambda ctx: []).fill_buffer_fn(fill_from_list(1))
         .create_snapshot_fn(lambda st: 1).build())
    with pytest.raises(DagValidationError, match="restore_snapshot_fn is set but create_snapshot_fn is not"):
        (SourceBuilder.batch("s", lambda ctx: []).fill_buffer_fn(fill_from_list(1))
         .restore_snapshot_fn(lambda st, saved: None).build())


def test_source_without_snapshot_fns_when_state_restored_then_clear_error():
    src = SourceBuilder.batch("s", lambda ctx: []).fill_buffer_fn(fill_from_list(1)).build()
    [(proc, ctx)] = processors_of(src)
    proc.init(Outbox([1]), ctx)
    with pytest.raises(ProcessorContractError, match="no restore_snapshot_fn"):
        proc.restore_from_snapshot(Inbox([("k", 1)]))


# ---------------------------------------------------------------------------------------------- streaming sources


def stream_processor(src, context=None, capacity=100, snapshot_capacity=None):
    """The (only) processor of a built stream source, initialised; taken without the meta-supplier's init()."""
    (proc,) = src.get([0])(0).get(1)
    outbox = Outbox([capacity], snapshot_capacity=snapshot_capacity)
    proc.init(outbox, context or Context())
    return proc, outbox


def complete_n(proc, outbox, calls):
    """Call complete() ``calls`` times (a stream never completes), draining the outbox; returns the items."""
    out = []
    for _ in range(calls):
        outbox.reset()
        assert proc.complete() is False
        out += outbox.drain(0)
    return out


def fill_counting(state, buf):
    """An endless source: 3 numbers per call."""
    for _ in range(3):
        buf.add(state[0])
        state[0] += 1


@pytest.mark.parametrize("kind", ["stream", "timestamped_stream"])
def test_stream_builder_when_built_then_named_stream_source(kind):
    src = getattr(SourceBuilder, kind)("ticks", lambda ctx: [0]).fill_buffer_fn(fill_counting).build()
    assert isinstance(src, StreamSource) and isinstance(src, ProcessorMetaSupplier)
    assert (src.name, src.kind, src.preferred_local_parallelism()) == ("ticks", kind, 1)


@pytest.mark.parametrize("kind", ["stream", "timestamped_stream"])
def test_stream_source_when_job_starts_then_init_accepts_and_marks_stream_source(kind):
    src = getattr(SourceBuilder, kind)("ticks", lambda ctx: [0]).fill_buffer_fn(fill_counting).build()
    src.init(Context(vertex_name="clock"))
    assert is_stream_source(src)
    assert not is_stream_source(SourceBuilder.batch("b", lambda ctx: None).fill_buffer_fn(fill_counting).build())


@pytest.mark.parametrize("kind", ["stream", "timestamped_stream"])
def test_stream_build_when_fill_buffer_fn_missing_then_clear_error(kind):
    with pytest.raises(DagValidationError, match=rf"SourceBuilder.{kind}\('s'\).build\(\): fill_buffer_fn must be set"):
        getattr(SourceBuilder, kind)("s", lambda ctx: None).build()


def test_stream_source_complete_never_returns_true_and_emits_every_fill():
    src = SourceBuilder.stream("ticks", lambda ctx: [0]).fill_buffer_fn(fill_counting).build()
    proc, outbox = stream_processor(src)
    assert not proc.is_cooperative()
    assert complete_n(proc, outbox, 50) == list(range(150))


def test_stream_source_through_a_one_slot_outbox_loses_nothing():
    src = SourceBuilder.stream("ticks", lambda ctx: [0]).fill_buffer_fn(fill_counting).build()
    proc, outbox = stream_processor(src, capacity=1)
    assert complete_n(proc, outbox, 30) == list(range(30))


@pytest.mark.parametrize("kind", ["stream", "timestamped_stream"])
def test_stream_source_when_buffer_closed_then_emits_rest_and_completes(kind):
    """The tutorials' network source closes its buffer when the connection ends (as Jet allows)."""

    def fill(state, buf):
        buf.add("last") if kind == "stream" else buf.add("last", 5)
        buf.close()

    src = getattr(SourceBuilder, kind)("ticks", lambda ctx: None).fill_buffer_fn(fill).build()
    proc, outbox = stream_processor(src)
    assert proc.complete() is True
    assert [x for x in outbox.drain(0) if not isinstance(x, Watermark)] == ["last"]


def test_stream_source_when_driven_then_bounded_outputs_and_close_destroys_state():
    destroyed = []
    src = (SourceBuilder.stream("ticks", lambda ctx: [0]).fill_buffer_fn(fill_counting)
           .destroy_fn(destroyed.append).build())
    (proc,) = src.get([0])(0).get(1)
    batches = drive(proc, Context(vertex_name="ticks"), inbound=[], inbound_priorities={}, outbound_capacities=[4])
    items = [item for _, batch in itertools.islice(batches, 10) for item in batch]
    assert items == list(range(len(items))) and len(items) >= 10
    assert destroyed == []
    batches.close()  # the consumer stops: the driver closes the processor
    assert len(destroyed) == 1


def test_stream_source_when_no_data_ready_for_long_then_driver_backs_off_instead_of_failing(monkeypatch):
    sleeps = []
    monkeypatch.setattr(staged, "_sleep", sleeps.append)
    polls = []

    def fill(state, buf):  # data arrives only at the 2000th poll
        polls.append(1)
        if len(polls) >= 2000:
            buf.add(len(polls))

    (proc,) = SourceBuilder.stream("quiet", lambda ctx: None).fill_buffer_fn(fill).build().get([0])(0).get(1)
    batches = drive(proc, Context(), inbound=[], inbound_priorities={}, outbound_capacities=[4])
    assert next(batches) == (0, [2000])
    batches.close()
    assert len(sleeps) == 1999 and max(sleeps) == staged.IDLE_MAX_SLEEP


def test_distributed_stream_source_snapshots_per_processor_and_restore_gets_all_states():
    src = (SourceBuilder.stream("ticks", lambda ctx: [ctx.global_processor_index * 100])
           .fill_buffer_fn(fill_counting).distributed(2)
           .create_snapshot_fn(lambda state: state[0])
           .restore_snapshot_fn(lambda state, saved: restored.append(sorted(saved)))
           .build())
    restored = []
    entries = []
    for index, proc in enumerate(src.get([0])(0).get(2)):  # the engine would ask for 2, without init(): see above
        outbox = Outbox([100], snapshot_capacity=1)
        proc.init(outbox, Context(local_parallelism=2, total_parallelism=2, global_processor_index=index,
                                  local_processor_index=index))
        complete_n(proc, outbox, 2)
        outbox.reset()
        assert proc.save_to_snapshot() is True
        entries += outbox.drain_snapshot()
    assert sorted(value for _key, value in entries) == [(6, None), (106, None)]
    assert len({key for key, _value in entries}) == 2, "each processor saves under its own key"

    fresh, outbox = stream_processor(src)
    fresh.restore_from_snapshot(Inbox(entries))
    assert fresh.finish_snapshot_restore() is True
    assert restored == [[6, 106]]


def test_stream_source_when_restored_then_continues_from_the_saved_state():
    def restore(state, saved):
        (state[0],) = saved

    src = (SourceBuilder.stream("ticks", lambda ctx: [0]).fill_buffer_fn(fill_counting)
           .create_snapshot_fn(lambda state: state[0]).restore_snapshot_fn(restore).build())
    proc, outbox = stream_processor(src, capacity=2, snapshot_capacity=1)
    assert proc.complete() is False  # 0 1 emitted, 2 pending: the outbox is full
    outbox.reset()
    assert proc.save_to_snapshot() is False  # 2 must go out before the state is saved
    first = outbox.drain(0)
    outbox.reset()
    assert proc.save_to_snapshot() is True
    first += outbox.drain(0)
    (entry,) = outbox.drain_snapshot()
    fresh, fresh_outbox = stream_processor(src)
    fresh.restore_from_snapshot(Inbox([entry]))
    fresh.finish_snapshot_restore()
    assert first + complete_n(fresh, fresh_outbox, 2) == list(range(9))


# ---------------------------------------------------------------------------------------------- timestamped


def fill_events(events):
    """fill_buffer_fn adding one (item, timestamp) list per call, then nothing."""
    chunks = iter(events)

    def fill(state, buf):
        for item, timestamp in next(chunks, []):
            buf.add(item, timestamp)
    return fill


def test_timestamped_source_emits_items_preceded_by_watermarks_of_the_highest_timestamp():
    fill = fill_events([[("a", 100), ("b", 90), ("c", 120)], [("d", 120), ("e", 130)]])
    src = SourceBuilder.timestamped_stream("events", lambda ctx: None).fill_buffer_fn(fill).build()
    proc, outbox = stream_processor(src)
    assert complete_n(proc, outbox, 3) == [
        Watermark(100), "a", "b", Watermark(120), "c", "d", Watermark(130), "e"]


def test_timestamped_source_allowed_lag_holds_the_watermark_back():
    fill = fill_events([[("a", 100), ("b", 95), ("c", 120)]])
    src = SourceBuilder.timestamped_stream("events", lambda ctx: None).fill_buffer_fn(fill).allowed_lag(10).build()
    proc, outbox = stream_processor(src, capacity=1)  # watermarks and items both wait for room
    assert complete_n(proc, outbox, 8) == [Watermark(90), "a", "b", Watermark(110), "c"]


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10", None])
def test_timestamped_allowed_lag_when_invalid_then_clear_error(bad):
    with pytest.raises(DagValidationError, match=r"allowed_lag\(.*\) must be an int >= 0"):
        SourceBuilder.timestamped_stream("s", lambda ctx: None).allowed_lag(bad)


def test_timestamped_buffer_add_without_timestamp_stamps_current_time_in_ms():
    buf = TimestampedSourceBuffer("clock")
    before = time.time_ns() // 1_000_000
    buf.add("now")
    after = time.time_ns() // 1_000_000
    [(item, timestamp)] = buf._take()
    assert item == "now" and before <= timestamp <= after


@pytest.mark.parametrize("bad", [1.5, "100", True])
def test_timestamped_buffer_when_timestamp_not_int_then_clear_error(bad):
    with pytest.raises(ProcessorContractError, match=r"source 'clock'.*timestamp must be an int \(milliseconds\)"):
        TimestampedSourceBuffer("clock").add("x", bad)


def test_timestamped_source_snapshot_saves_watermark_and_restore_resumes_from_lowest():
    fill = fill_events([[("a", 100)], [("b", 150)]])
    src = (SourceBuilder.timestamped_stream("events", lambda ctx: [0]).fill_buffer_fn(fill)
           .create_snapshot_fn(lambda state: "state").restore_snapshot_fn(lambda state, saved: None).build())
    proc, outbox = stream_processor(src, snapshot_capacity=1)
    complete_n(proc, outbox, 1)
    assert proc.save_to_snapshot() is True
    [(key, value)] = outbox.drain_snapshot()
    assert value == ("state", 100)

    restored_fill = fill_events([[("late", 90), ("x", 100), ("y", 101)]])
    src2 = (SourceBuilder.timestamped_stream("events", lambda ctx: [0]).fill_buffer_fn(restored_fill)
            .create_snapshot_fn(lambda state: "state").restore_snapshot_fn(lambda state, saved: None).build())
    fresh, fresh_outbox = stream_processor(src2)
    fresh.restore_from_snapshot(Inbox([(key, value), (("other",), ("state", 120))]))
    fresh.finish_snapshot_restore()
    assert complete_n(fresh, fresh_outbox, 1) == ["late", "x", Watermark(101), "y"]


def test_timestamped_source_when_no_items_for_idle_timeout_then_top_watermark_then_idle_once():
    from processors.api.clock import ManualClock, use_clock
    from processors.windowing.event_time import IDLE_MESSAGE

    clock = ManualClock()
    with use_clock(clock):
        fill = fill_events([[("a", 100)]])
        src = (SourceBuilder.timestamped_stream("events", lambda ctx: None).fill_buffer_fn(fill)
               .allowed_lag(5).idle_timeout(1000).build())
        proc, outbox = stream_processor(src)
        assert complete_n(proc, outbox, 3) == [Watermark(95), "a"]
        clock.advance_ms(999)
        assert complete_n(proc, outbox, 3) == []
        clock.advance_ms(1)
        assert complete_n(proc, outbox, 3) == [IDLE_MESSAGE]
        clock.advance_ms(5000)
        assert complete_n(proc, outbox, 3) == []


def test_timestamped_source_when_idle_timeout_not_int_then_clear_error():
    with pytest.raises(DagValidationError, match=r"idle_timeout\('1'\) must be an int"):
        SourceBuilder.timestamped_stream("s", lambda ctx: None).idle_timeout("1")


@pytest.mark.spark
@pytest.mark.timeout(300)
def test_stream_source_when_staged_mode_then_new_job_refuses_naming_vertex_and_pipelined(engine):
    from dag import DAG, ExecutionMode, JobConfig
    from edges import between
    from processors import write_list_p

    src = SourceBuilder.stream("ticks", lambda ctx: [0]).fill_buffer_fn(fill_counting).build()
    dag = DAG()
    dag.edge(between(dag.new_vertex(src.name, src), dag.new_vertex("sink", write_list_p("stream_never"))))
    with pytest.raises(DagValidationError) as info:
        engine.new_job(dag, JobConfig(execution_mode=ExecutionMode.STAGED))
    assert "vertex 'ticks' is a stream source" in str(info.value) and "PIPELINED" in str(info.value)


# ---------------------------------------------------------------------------------------------- SinkBuilder


class Recorder:
    def __init__(self, log, index):
        self.log = log
        self.index = index
        self.items = []

    def receive(self, item):
        self.items.append(item)
        self.log.append(("receive", self.index, item))

    def flush(self):
        self.log.append(("flush", self.index, len(self.items)))

    def destroy(self):
        self.log.append(("destroy", self.index))


def recording_sink(log, **kw):
    b = (SinkBuilder.sink_builder("rec", lambda ctx: Recorder(log, ctx.global_processor_index))
         .receive_fn(Recorder.receive).flush_fn(Recorder.flush).destroy_fn(Recorder.destroy))
    for k, v in kw.items():
        getattr(b, k)(v)
    return b.build()


def test_sink_builder_when_built_then_named_meta_supplier_preferring_one_processor():
    sink = recording_sink([])
    assert isinstance(sink, BuiltSink) and isinstance(sink, ProcessorMetaSupplier)
    assert sink.name == "rec"
    assert sink.preferred_local_parallelism() == 1


def test_sink_builder_preferred_local_parallelism_sets_processors_per_member():
    assert recording_sink([], preferred_local_parallelism=2).preferred_local_parallelism() == 2
    assert recording_sink([], preferred_local_parallelism=None).preferred_local_parallelism() is None
    assert recording_sink([], preferred_local_parallelism=-1).preferred_local_parallelism() is None


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True])
def test_sink_builder_preferred_local_parallelism_when_invalid_then_clear_error(bad):
    with pytest.raises(DagValidationError, match="preferred_local_parallelism"):
        SinkBuilder.sink_builder("s", lambda ctx: 1).preferred_local_parallelism(bad)


def test_sink_builder_when_receive_fn_missing_then_build_fails():
    with pytest.raises(DagValidationError, match="receive_fn must be set"):
        SinkBuilder.sink_builder("s", lambda ctx: 1).build()


@pytest.mark.parametrize("method", ["receive_fn", "flush_fn", "destroy_fn"])
def test_sink_builder_method_when_not_callable_then_clear_error(method):
    with pytest.raises(DagValidationError, match=f"{method} must be a function"):
        getattr(SinkBuilder.sink_builder("s", lambda ctx: 1), method)("nope")


def test_sink_receives_every_item_flushes_after_each_inbox_batch_and_destroys_on_close():
    log = []
    [(proc, ctx)] = processors_of(recording_sink(log))
    assert not proc.is_cooperative()
    proc.init(Outbox([]), ctx)
    proc.process(0, Inbox([1, 2]))
    proc.process(0, Inbox([3]))
    proc.close()
    assert log == [("receive", 0, 1), ("receive", 0, 2), ("flush", 0, 2), ("receive", 0, 3), ("flush", 0, 3),
                   ("destroy", 0)]


def test_sink_passes_verify_processor_and_receives_all_items():
    log = []
    verify_processor(recording_sink(log)).disable_snapshots().input([1, 2, 3]).expect_output([])
    received = [entry[2] for entry in log if entry[0] == "receive"]
    assert set(received) == {1, 2, 3}
    assert log[-1][0] == "destroy"


def test_sink_state_created_with_each_processors_context():
    log = []
    procs = processors_of(recording_sink(log, preferred_local_parallelism=2), local_parallelism=2)
    for proc, ctx in procs:
        proc.init(Outbox([]), ctx)
        proc.process(0, Inbox([ctx.global_processor_index * 10]))
        proc.close()
    assert [e for e in log if e[0] == "receive"] == [("receive", 0, 0), ("receive", 1, 10)]
