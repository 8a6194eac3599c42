"""The whole-batch helpers of the sliding-window processors (``processors.windowing.bulk``) against per-item
references: ``frame_runs`` cuts a batch as the per-item loop groups it into frames, and ``stamped_chunks`` makes
the window's ``TimestampedEntry`` outputs in the window's order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from processors.windowing.bulk import frame_runs, stamped_chunks
from processors.windowing.definitions import TimestampedEntry


def _frame(ts: int, size: int, shift: int, offset: int) -> int:
    """The per-item loop's frame of ``ts``: ``higher_frame_ts(ts - shift)``."""
    t = ts - shift
    return t - (t - offset) % size + size


def _runs_per_item(stamps: list[int], size: int, shift: int, offset: int) -> list[tuple[int, int, int]]:
    runs: list[tuple[int, int, int]] = []
    for i, ts in enumerate(stamps):
        frame = _frame(ts, size, shift, offset)
        if runs and runs[-1][0] == frame:
            runs[-1] = (frame, runs[-1][1], i + 1)
        else:
            runs.append((frame, i, i + 1))
    return runs


@settings(max_examples=300, deadline=None)
@given(stamps=st.lists(st.integers(-50, 50), min_size=1, max_size=40), size=st.integers(1, 7),
       shift=st.sampled_from([0, 1]), offset=st.integers(0, 6), in_order=st.booleans())
def test_frame_runs_when_any_batch_then_runs_match_the_per_item_frames_or_none_when_spanning_out_of_order(
        stamps, size, shift, offset, in_order):
    offset %= size
    if in_order:
        stamps.sort()
    runs = frame_runs(stamps, size, shift, offset)
    expected = _runs_per_item(stamps, size, shift, offset)
    frames = [frame for frame, _, _ in expected]
    if len(set(frames)) == 1:  # one frame, in order or not: the whole batch
        assert runs == [(frames[0], 0, len(stamps))]
    elif stamps == sorted(stamps):
        assert runs == expected
    else:
        assert runs is None


def test_frame_runs_when_equal_timestamps_in_order_span_frames_then_cut_at_each_frame():
    assert frame_runs([3, 3, 4, 4, 4, 8], 4, 0, 0) == [(4, 0, 2), (8, 2, 5), (12, 5, 6)]
    assert frame_runs([4, 4, 5, 8], 4, 1, 0) == [(4, 0, 2), (8, 2, 4)]  # TimestampKind.FRAME: 4 ends frame 4


def test_stamped_chunks_when_window_larger_than_chunk_then_entries_in_window_order_chunk_at_a_time():
    window = {f"k{i}": i + 1 for i in range(7)}
    chunks = list(stamped_chunks(30, window, 3))
    assert [len(c) for c in chunks] == [3, 3, 1]
    entries = [e for c in chunks for e in c]
    assert entries == [TimestampedEntry(30, k, v) for k, v in window.items()]
    assert all(e.__class__ is TimestampedEntry and (e.timestamp, e.key, e.value) == (30, k, v)
               for e, (k, v) in zip(entries, window.items()))
    assert list(stamped_chunks(30, {}, 3)) == []
    assert [len(c) for c in stamped_chunks(30, {"a": 1, "b": 2, "c": 3}, 3)] == [3]
