"""Property: two-stage sliding window aggregation (accumulate_by_frame_p -> combine_to_sliding_window_p) gives
the same windows as the single stage (aggregate_to_sliding_window_p) on random streams, with stage snapshots
(stage 1 flushing, stage 2 saving and restoring into a fresh processor) at random points."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from processors import (AggregateOperation, TimestampKind, Watermark, accumulate_by_frame_p,
                        aggregate_to_sliding_window_p, combine_to_sliding_window_p, counting, entry_key,
                        sliding_win_policy)
from processors.api.context import Context
from processors.api.inbox import Inbox
from processors.api.outbox import Outbox


def _start(supplier):
    processor = supplier()
    outbox = Outbox([100_000], snapshot_capacity=100_000)
    processor.init(outbox, Context())
    return processor, outbox


def _feed(processor, item):
    if isinstance(item, Watermark):
        assert processor.try_process_watermark(item)
    else:
        processor.process(0, Inbox([item]))


def _single_stage(policy, op, stream):
    p, box = _start(aggregate_to_sliding_window_p(entry_key, lambda e: e[1], TimestampKind.EVENT, policy, op))
    for step in stream:
        if step != "snapshot":
            _feed(p, step)
    assert p.complete()
    return box.drain(0)


def _two_stage(policy, op, stream):
    s1_supplier = accumulate_by_frame_p(entry_key, lambda e: e[1], TimestampKind.EVENT, policy, op)
    s2_supplier = combine_to_sliding_window_p(policy, op)
    s1, box1 = _start(s1_supplier)
    s2, box2 = _start(s2_supplier)

    def forward():
        for item in box1.drain(0):
            _feed(s2, item)

    for step in stream:
        if step == "snapshot":
            assert s1.save_to_snapshot()  # flushes its frames downstream, saves nothing
            assert box1.drain_snapshot() == []
            forward()
            assert s2.save_to_snapshot()
            saved, out = box2.drain_snapshot(), box2.drain(0)
            s2, box2 = _start(s2_supplier)
            box2.bucket(0).extend(out)
            s2.restore_from_snapshot(Inbox(saved))
            assert s2.finish_snapshot_restore()
        else:
            _feed(s1, step)
            forward()
    assert s1.complete()
    forward()
    assert s2.complete()
    return box2.drain(0)


def _canonical(output):
    """Watermarks in order, and between two watermarks the windows as a multiset (key order is unspecified)."""
    groups, current = [], Counter()
    for item in output:
        if isinstance(item, Watermark):
            groups.append((current, item))
            current = Counter()
        else:
            current[(item.timestamp, item.key, item.value)] += 1
    groups.append((current, None))
    return groups


@st.composite
def streams(draw):
    steps, wm = [], draw(st.integers(-30, 10))
    for kind in draw(st.lists(st.sampled_from(["item"] * 4 + ["wm"] * 2 + ["snapshot"]), min_size=3, max_size=60)):
        if kind == "item":
            steps.append((draw(st.integers(0, 3)), draw(st.integers(wm - 15, wm + 40))))
        elif kind == "wm":
            wm += draw(st.integers(0, 12))
            steps.append(Watermark(wm))
        else:
            steps.append("snapshot")
    return steps


OPS = {
    "counting-with-deduct": counting(),
    "sum-no-deduct": AggregateOperation(lambda: 0, lambda a, e: a + e[1] + 1, lambda a, b: a + b),
}


@settings(max_examples=300, deadline=None)
@given(slide=st.integers(1, 5), frames=st.integers(1, 5), op_name=st.sampled_from(sorted(OPS)), stream=streams())
def test_two_stage_when_random_stream_then_same_windows_as_single_stage(slide, frames, op_name, stream):
    policy = sliding_win_policy(slide * frames, slide)
    op = OPS[op_name]
    assert _canonical(_two_stage(policy, op, stream)) == _canonical(_single_stage(policy, op, stream))
