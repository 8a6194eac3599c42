"""The Pipeline API's windows in batches: stage 1 takes a whole inbox's keys with ``CheckedKey.keys_of`` (C-level
passes) and stage 2 makes its ``JetEvent(end, TimestampedEntry)`` results by wrapping the entries made straight
from the window (``EventResult.wrap_entries``); the same keys, window results in the same order and the same
null-key error as the per-item calls. Read only by a sink, stage 2's results are the hand-written DAG's own
``TimestampedEntry`` items (no wrapper)."""

from __future__ import annotations

import pytest

from dag.errors import ProcessorContractError
from pipeline import Pipeline, Sinks, Sources, WindowDefinition
from pipeline.events import JetEvent
from pipeline.internal import CheckedKey, EventResult
from processors import (TimestampedEntry, Watermark, combine_to_sliding_window_p, counting, entry_key, entry_value,
                        map_p, sliding_win_policy)
from processors.api.context import Context
from processors.api.inbox import Inbox
from processors.api.outbox import Outbox


def _events(n: int, keys: int) -> list[JetEvent]:
    return [JetEvent(10 * i, (f"k{(i * 7) % keys}", 10 * i)) for i in range(n)]


@pytest.mark.parametrize("key_fn", [entry_key, lambda e: e[0].upper()])
def test_keys_of_when_events_then_the_keys_of_calling_per_item(key_fn) -> None:
    events = _events(50, 6)
    checked = CheckedKey(key_fn, "stage", unwrap=True)
    assert checked.keys_of(events) == [checked(e) for e in events]
    plain = CheckedKey(key_fn, "stage")
    assert plain.keys_of([e.item for e in events]) == [plain(e.item) for e in events]


def test_keys_of_when_a_key_is_none_then_the_null_key_error_names_the_stage() -> None:
    events = _events(5, 3) + [JetEvent(99, (None, 99))]
    with pytest.raises(ValueError, match=r"Null key from the key function of stage 'agg' for item \(None, 99\)"):
        CheckedKey(entry_key, "agg", unwrap=True).keys_of(events)


def test_keys_of_when_a_key_equals_none_but_is_not_none_then_kept() -> None:
    class EqualsAll:
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    key = EqualsAll()
    assert CheckedKey(lambda item: key, "s").keys_of([1, 2]) == [key, key]


def _window_stage(vertex: str = "sliding-window-prepare", read_later: bool = True, events_in: bool = True):
    """A vertex of the Pipeline API's two-stage sliding-window count (stage 1 or ``"sliding-window"``), its
    results read by a later stage (``read_later``: they travel as ``JetEvent``) or only by a sink; its input
    ``JetEvent``s (``events_in``: a ``map`` between the timestamps and the window) or plain items (the
    ``add-timestamps`` vertex is read only by the window: the window applies the timestamp function)."""
    p = Pipeline.create()
    stamped = p.read_from(Sources.stream_from_processor("events", map_p(str))).with_timestamps(entry_value, 0)
    windowed = ((stamped.map(tuple) if events_in else stamped).grouping_key(entry_key)
                .window(WindowDefinition.sliding(100, 20)).aggregate(counting()))
    (windowed.map(str) if read_later else windowed).write_to(Sinks.noop())
    return p.to_dag().get_vertex(vertex).supplier


def _run_stage(steps: list, one_by_one: bool, vertex: str = "sliding-window-prepare", read_later: bool = True,
               supplier=None, events_in: bool = True) -> list:
    processor = (supplier or _window_stage(vertex, read_later, events_in))()
    if vertex == "sliding-window-prepare":
        assert isinstance(processor._key_fns[0], CheckedKey)  # the batch form is what this test is about
    outbox = Outbox([100_000])
    processor.init(outbox, Context())
    for step in steps:
        if isinstance(step, Watermark):
            assert processor.try_process_watermark(step)
        else:
            for batch in ([[e] for e in step] if one_by_one else [step]):
                inbox = Inbox(batch)
                processor.process(0, inbox)
                assert inbox.is_empty()
    assert processor.complete()
    return outbox.drain(0)


def _inputs(events: list, events_in: bool) -> list:
    return events if events_in else [e.item for e in events]


@pytest.mark.parametrize("events_in", [True, False])
def test_pipeline_window_stage_when_whole_batches_then_same_output_and_order_as_per_item(events_in: bool) -> None:
    events = _inputs(_events(400, 13), events_in)
    steps = [events[:150], Watermark(1000), events[150:300], Watermark(2500), events[300:]]
    batched = _run_stage(steps, one_by_one=False, events_in=events_in)
    assert batched == _run_stage(steps, one_by_one=True, events_in=events_in)
    frames = [item for item in batched if not isinstance(item, Watermark)]
    assert sum(entry.value for entry in frames) == 400  # every event counted once, in its frame


def test_pipeline_window_stage_when_plain_or_event_input_then_the_same_frames() -> None:
    events = _events(400, 13)
    steps = [events[:150], Watermark(1000), events[150:300], Watermark(2500), events[300:]]
    plain_steps = [s if isinstance(s, Watermark) else _inputs(s, False) for s in steps]
    assert _run_stage(plain_steps, one_by_one=False, events_in=False) == _run_stage(steps, one_by_one=False)


@pytest.mark.parametrize("events_in", [True, False])
def test_pipeline_window_stage_when_a_key_is_none_then_fails_naming_the_stage(events_in: bool) -> None:
    events = _events(20, 4)
    events[7] = JetEvent(70, (None, 70))
    item = r"JetEvent\(timestamp=70, item=\(None, 70\)\)" if events_in else r"\(None, 70\)"
    with pytest.raises(ProcessorContractError, match=rf"item {item}.*"
                                                     r"Null key from the key function of stage 'sliding-window'"):
        _run_stage([_inputs(events, events_in)], one_by_one=False, events_in=events_in)


def _stage_two_input() -> list:
    """Stage 1's output (frames of ``TimestampedEntry``s and watermarks) for 400 events of 13 keys."""
    events = _events(400, 13)
    return _run_stage([events[:150], Watermark(1000), events[150:300], Watermark(2500), events[300:]], False)


def _as_steps(items: list) -> list:
    steps, batch = [], []
    for item in items:
        if isinstance(item, Watermark):
            steps += [batch, item] if batch else [item]
            batch = []
        else:
            batch.append(item)
    return steps + ([batch] if batch else [])


def test_pipeline_window_results_when_wrapped_entries_then_same_events_and_order_as_per_result(monkeypatch) -> None:
    steps = _as_steps(_stage_two_input())
    wrapped = _run_stage(steps, one_by_one=False, vertex="sliding-window")
    monkeypatch.setattr(EventResult, "wrap_entries", property(lambda self: None))  # the per-chunk results path
    assert wrapped == _run_stage(steps, one_by_one=False, vertex="sliding-window")
    results = [item for item in wrapped if not isinstance(item, Watermark)]
    assert results and all(type(e) is JetEvent and type(e.item) is TimestampedEntry for e in results)
    assert all(e.timestamp == e.item.timestamp for e in results)


def test_wrap_entries_when_not_the_default_result_fn_then_none() -> None:
    assert EventResult(TimestampedEntry.from_window_result, keyed=True).wrap_entries is not None
    assert EventResult(lambda start, end, key, result: (key, result), keyed=True).wrap_entries is None
    assert EventResult(TimestampedEntry.from_window_result, keyed=False).wrap_entries is None


def test_pipeline_window_results_when_read_only_by_a_sink_then_the_hand_written_dags_entries() -> None:
    steps = _as_steps(_stage_two_input())
    plain = _run_stage(steps, one_by_one=False, vertex="sliding-window", read_later=False)
    by_hand = _run_stage(steps, one_by_one=False, vertex="sliding-window",
                         supplier=combine_to_sliding_window_p(sliding_win_policy(100, 20), counting()))
    assert plain == by_hand
    results = [item for item in plain if not isinstance(item, Watermark)]
    assert results and all(type(e) is TimestampedEntry for e in results)
    wrapped = _run_stage(steps, one_by_one=False, vertex="sliding-window")
    assert [e.item if type(e) is JetEvent else e for e in wrapped] == plain
