"""SlidingWindowPolicy, the window items and BroadcastKey: Jet's SlidingWindowPolicyTest vectors (V1-V5) and the
contract's argument errors."""

from __future__ import annotations

import copy
import pickle

import pytest

from processors import (MIN_WATERMARK, BroadcastKey, TimestampedEntry, TimestampKind, WindowResult, broadcast_key,
                        entry_key, entry_value, sliding_win_policy, tumbling_win_policy)
from processors.windowing.definitions import MAX_TIMESTAMP, SlidingWindowPolicy

MIN, MAX = MIN_WATERMARK, MAX_TIMESTAMP

# V1-V3: ts -> (floor, higher) for (4, offset, 10)
FLOOR_HIGHER = {
    0: {-5: (-8, -4), -4: (-4, 0), -3: (-4, 0), -2: (-4, 0), -1: (-4, 0), 0: (0, 4), 1: (0, 4), 2: (0, 4), 3: (0, 4),
        4: (4, 8), 5: (4, 8), 6: (4, 8), 7: (4, 8), 8: (8, 12)},
    1: {-4: (-7, -3), -3: (-3, 1), -2: (-3, 1), -1: (-3, 1), 0: (-3, 1), 1: (1, 5), 2: (1, 5), 3: (1, 5), 4: (1, 5),
        5: (5, 9), 6: (5, 9), 7: (5, 9), 8: (5, 9), 9: (9, 13)},
    2: {-4: (-6, -2), -3: (-6, -2), -2: (-2, 2), -1: (-2, 2), 0: (-2, 2), 1: (-2, 2), 2: (2, 6), 3: (2, 6), 4: (2, 6),
        5: (2, 6), 6: (6, 10), 7: (6, 10), 8: (6, 10), 9: (6, 10)},
}


@pytest.mark.parametrize("offset", [0, 1, 2])
def test_floor_and_higher_frame_ts_when_negative_and_positive_timestamps_then_as_jet(offset):
    policy = SlidingWindowPolicy(4, offset, 10)
    for ts, (floor, higher) in FLOOR_HIGHER[offset].items():
        assert (policy.floor_frame_ts(ts), policy.higher_frame_ts(ts)) == (floor, higher), ts


def test_frame_ts_when_at_long_extremes_then_clamped_as_jet():
    assert SlidingWindowPolicy(3, 0, 10).floor_frame_ts(MIN) == MIN
    assert SlidingWindowPolicy(4, 3, 10).floor_frame_ts(MIN + 2) == MIN
    assert SlidingWindowPolicy(4, 3, 10).floor_frame_ts(MAX) == MAX
    assert SlidingWindowPolicy(4, 2, 10).higher_frame_ts(MAX - 1) == MAX
    assert SlidingWindowPolicy(4, 2, 10).higher_frame_ts(MIN) == MIN + 2


def test_factories_when_built_then_sizes_offsets_and_tumbling_as_jet():
    tumbling = tumbling_win_policy(123)
    assert (tumbling.frame_size, tumbling.window_size, tumbling.frame_offset) == (123, 123, 0)
    assert tumbling.is_tumbling()
    sliding = sliding_win_policy(1000, 100)
    assert (sliding.window_size, sliding.frame_size, sliding.frame_offset) == (1000, 100, 0)
    assert not sliding.is_tumbling()
    by_frame = sliding.to_tumbling_by_frame()
    assert (by_frame.window_size, by_frame.frame_size) == (100, 100)
    assert sliding.with_offset(10).frame_offset == 10
    assert sliding.with_offset(10).window_size == 1000


def test_javadoc_examples_when_windows_listed_then_as_documented():
    sliding = sliding_win_policy(4, 2)
    assert [(e - sliding.window_size, e) for e in range(2, 10, 2)] == [(-2, 2), (0, 4), (2, 6), (4, 8)]
    assert sliding.higher_frame_ts(-1) == 0 and sliding.higher_frame_ts(1) == 2
    shifted = tumbling_win_policy(4).with_offset(2)
    assert [shifted.higher_frame_ts(t) for t in (-2, 1, 2, 5)] == [2, 2, 6, 6]


@pytest.mark.parametrize("call, argument", [
    (lambda: sliding_win_policy(10, 3), "window_size must be an integer multiple of slide_by"),
    (lambda: sliding_win_policy(-4, 2), "window_size must be >= 1"),
    (lambda: sliding_win_policy(0, 5), "window_size must be >= 1"),
    (lambda: sliding_win_policy(4, -2), "slide_by must be >= 1"),
    (lambda: sliding_win_policy(4, 0), "slide_by must be >= 1"),
    (lambda: tumbling_win_policy(0), "window_size must be >= 1"),
    (lambda: sliding_win_policy(4, 2).with_offset(2), "offset must be >= 0 and less than"),
    (lambda: sliding_win_policy(4, 2).with_offset(-1), "offset must be >= 0 and less than"),
    (lambda: sliding_win_policy(4.0, 2), "window_size must be an int"),
])
def test_policy_when_bad_sizes_or_offset_then_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_multiple_error_when_raised_then_suggests_valid_sizes():
    with pytest.raises(ValueError, match="window_size=9 or window_size=12"):
        sliding_win_policy(10, 3)


def test_policy_when_pickled_then_equal():
    policy = sliding_win_policy(8, 4).with_offset(1)
    assert pickle.loads(pickle.dumps(policy)) == policy
    assert policy != sliding_win_policy(8, 4)


def test_timestamped_entry_when_used_as_entry_then_key_value_and_equality_with_timestamp():
    e = TimestampedEntry(10, "k", 3)
    assert (e.timestamp, e.key, e.value, entry_key(e), entry_value(e)) == (10, "k", 3, "k", 3)
    key, value = e
    assert (key, value) == ("k", 3)
    assert e == TimestampedEntry(10, "k", 3) and hash(e) == hash(TimestampedEntry(10, "k", 3))
    assert e != TimestampedEntry(11, "k", 3) and e != ("k", 3)
    assert TimestampedEntry.from_window_result(0, 4, "k", 1) == TimestampedEntry(4, "k", 1)
    assert pickle.loads(pickle.dumps(e)) == e and copy.deepcopy(e) == e
    assert repr(e) == "TimestampedEntry(10, 'k', 3)"


def test_window_result_when_used_as_entry_then_start_end_key_value_and_equality_with_all():
    r = WindowResult(1, 22, "a", 3)
    assert (r.start, r.end, r.key, r.value, entry_key(r), entry_value(r)) == (1, 22, "a", 3, "a", 3)
    assert r == WindowResult(1, 22, "a", 3) and r != WindowResult(2, 22, "a", 3) and r != WindowResult(1, 23, "a", 3)
    assert pickle.loads(pickle.dumps(r)) == r and copy.deepcopy(r) == r


def test_broadcast_key_when_compared_then_by_wrapped_key():
    assert broadcast_key("a") == BroadcastKey("a") and hash(broadcast_key("a")) == hash(broadcast_key("a"))
    assert broadcast_key("a") != broadcast_key("b") and broadcast_key("a") != "a"
    assert repr(broadcast_key("a")) == "BroadcastKey{key='a'}"
    assert pickle.loads(pickle.dumps(broadcast_key(("x", 1)))) == broadcast_key(("x", 1))
    with pytest.raises(ValueError, match="key must not be None"):
        broadcast_key(None)


def test_timestamp_kind_when_listed_then_event_and_frame():
    assert [k.name for k in TimestampKind] == ["EVENT", "FRAME"]
    assert MIN_WATERMARK == -(2**63)
