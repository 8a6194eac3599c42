"""Property: the whole-batch paths of the sliding-window processors (``processors.windowing.bulk``: ``counting()``
counted per batch, timestamps in order cut into frames with bisect, out-of-order batches spanning frames on the
per-item loop) give exactly the output of the per-item loop of an equivalent operation without the fast path,
and drop the same late items; single stage and two stages, ``TimestampKind.EVENT`` and ``FRAME``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from processors import (AggregateOperation, TimestampKind, Watermark, accumulate_by_frame_p,
                        aggregate_to_sliding_window_p, combine_to_sliding_window_p, counting, entry_key,
                        entry_value, sliding_win_policy)
from processors.api.context import Context
from processors.api.inbox import Inbox
from processors.api.outbox import Outbox

# counting() without its fast_path hint: the per-item loop with Python functions
PLAIN_COUNTING = AggregateOperation(lambda: 0, lambda acc, _item: acc + 1, lambda a, b: a + b, lambda a, b: a - b)


def _start(supplier):
    processor = supplier()
    outbox = Outbox([100_000])
    processor.init(outbox, Context())
    return processor, outbox


def _run(supplier, steps, one_by_one):
    p, box = _start(supplier)
    for step in steps:
        if isinstance(step, Watermark):
            assert p.try_process_watermark(step)
        elif one_by_one:
            for item in step:
                p.process(0, Inbox([item]))
        else:
            inbox = Inbox(step)
            p.process(0, inbox)
            assert inbox.is_empty()
    assert p.complete()
    return box.drain(0), p.late_events_dropped


def _two_stages(policy, kind, op, steps, one_by_one):
    s1, box1 = _start(accumulate_by_frame_p(entry_key, entry_value, kind, policy, op))
    s2, box2 = _start(combine_to_sliding_window_p(policy, op))

    def forward():
        items = box1.drain(0)
        batch = []
        for item in items + [None]:
            if item is None or isinstance(item, Watermark):
                if batch:
                    s2.process(0, Inbox(batch))
                    batch = []
                if item is not None:
                    assert s2.try_process_watermark(item)
            else:
                batch.append(item)

    for step in steps:
        if isinstance(step, Watermark):
            assert s1.try_process_watermark(step)
        elif one_by_one:
            for item in step:
                s1.process(0, Inbox([item]))
        else:
            s1.process(0, Inbox(step))
        forward()
    assert s1.complete()
    forward()
    assert s2.complete()
    return box2.drain(0), s1.late_events_dropped


@st.composite
def batched_streams(draw):
    steps, wm = [], draw(st.integers(-30, 10))
    for kind in draw(st.lists(st.sampled_from(["batch"] * 3 + ["wm"]), min_size=1, max_size=25)):
        if kind == "wm":
            wm += draw(st.integers(0, 12))
            steps.append(Watermark(wm))
            continue
        stamps = draw(st.lists(st.integers(wm - 15, wm + 40), min_size=1, max_size=30))
        if draw(st.booleans()):
            stamps.sort()  # in order: cut into frames with bisect
        steps.append([(draw(st.integers(0, 5)), ts) for ts in stamps])
    return steps


@settings(max_examples=300, deadline=None)
@given(slide=st.integers(1, 5), frames=st.integers(1, 4), offset=st.integers(0, 4), frame_kind=st.booleans(),
       stream=batched_streams())
def test_sliding_window_when_counting_batches_then_output_and_late_drops_equal_per_item_loop(
        slide, frames, offset, frame_kind, stream):
    policy = sliding_win_policy(slide * frames, slide).with_offset(offset % slide)
    kind = TimestampKind.FRAME if frame_kind else TimestampKind.EVENT

    def single(op):
        return aggregate_to_sliding_window_p(entry_key, entry_value, kind, policy, op)

    expected = _run(single(PLAIN_COUNTING), stream, one_by_one=True)
    assert _run(single(counting()), stream, one_by_one=False) == expected
    assert _two_stages(policy, kind, counting(), stream, one_by_one=False) == \
        _two_stages(policy, kind, PLAIN_COUNTING, stream, one_by_one=True)


def test_sliding_window_when_batch_holds_a_float_timestamp_then_error_names_timestamp_fn():
    p, _ = _start(aggregate_to_sliding_window_p(entry_key, entry_value, TimestampKind.EVENT,
                                                sliding_win_policy(4, 2), counting()))
    try:
        p.process(0, Inbox([("a", 1), ("b", 2.5), ("c", 3)]))
    except Exception as exc:  # noqa: BLE001 - the message is what matters
        assert "timestamp_fns[0]" in str(exc) and "float" in str(exc)
    else:
        raise AssertionError("a float timestamp was accepted")
