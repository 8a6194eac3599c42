"""Jet's testing API on Spark (issue 27, part 5): ``stage.apply(Assertions...)`` passing and failing with the
message, ``assert_collected``, a builder-made assertion sink, and ``assert_collected_eventually`` ending a
stream job with ``AssertionCompletedException`` or failing it after the timeout."""

from __future__ import annotations

import pytest

from dag import JobFailedError
from pipeline import Assertions, AssertionSinks, Pipeline, Sinks, TestSources
from tests.support import unique

pytestmark = pytest.mark.spark


def test_assertions_when_they_hold_then_job_completes_and_stage_goes_on(engine) -> None:
    out = unique("after-assert")
    p = Pipeline.create()
    stage = p.read_from(TestSources.items(1, 2, 3))
    (stage.apply(Assertions.assert_ordered("in order", [1, 2, 3]))
     .apply(Assertions.assert_any_order([3, 1, 2]))
     .apply(Assertions.assert_contains([2]))
     .apply(Assertions.assert_collected(lambda items: _check(sorted(items) == [1, 2, 3], items)))
     .map(lambda x: x * 2).write_to(Sinks.list(out)))
    stage.write_to(AssertionSinks.assertion_sink("sum-is-6", lambda: [0])
                   .receive_fn(lambda state, x: state.__setitem__(0, state[0] + x))
                   .complete_fn(lambda state: _check(state[0] == 6, state)).build())
    engine.new_job(p).join(timeout=300)
    assert sorted(engine.get_list(out)) == [2, 4, 6]
    engine.get_list(out).clear()


def _check(ok: bool, seen) -> None:
    assert ok, f"unexpected {seen}"


@pytest.mark.parametrize("assertion, text", [
    (Assertions.assert_ordered("wrong order", [3, 2, 1]), "wrong order: expected [3, 2, 1] but was [1, 2, 3]"),
    (Assertions.assert_any_order([1, 2]), "expected in any order [1, 2] but was [1, 2, 3]"),
    (Assertions.assert_contains("needs 9", [9, 1]), "needs 9: expected to contain [9]"),
])
def test_assertions_when_they_fail_then_job_fails_with_the_message(engine, assertion, text) -> None:
    p = Pipeline.create()
    p.read_from(TestSources.items(1, 2, 3)).apply(assertion)
    with pytest.raises(JobFailedError) as info:
        engine.new_job(p).join(timeout=300)
    assert "AssertionError" in str(info.value) and text in str(info.value)


def test_assert_collected_eventually_when_stream_passes_then_assertion_completed(engine) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.item_stream(100, lambda ts, seq: seq)).with_native_timestamps(0)
     .apply(Assertions.assert_collected_eventually(60, lambda items: _check(len(items) >= 20, len(items)))))
    with pytest.raises(JobFailedError, match="AssertionCompletedException"):
        engine.new_job(p).join(timeout=120)


def test_assert_collected_eventually_when_never_true_then_fails_after_timeout(engine) -> None:
    p = Pipeline.create()
    (p.read_from(TestSources.item_stream(50, lambda ts, seq: seq)).with_native_timestamps(0)
     .apply(Assertions.assert_collected_eventually(2, lambda items: _check(-1 in items, len(items)))))
    with pytest.raises(JobFailedError) as info:
        engine.new_job(p).join(timeout=120)
    assert "AssertionError" in str(info.value) and "unexpected" in str(info.value)
    assert "AssertionCompletedException" not in str(info.value)
