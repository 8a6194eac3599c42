"""The Pipeline API's key functions in their batch form (``CheckedKey.keys_of``): a windowed stage counts a
whole inbox of ``JetEvent``s with C-level passes, with the same keys, the same window results in the same
order, and the same null-key error as the per-item calls."""

from __future__ import annotations

import pytest

from dag.errors import ProcessorContractError
from pipeline import Pipeline, Sinks, Sources, WindowDefinition
from pipeline.events import JetEvent
from pipeline.internal import CheckedKey
from processors import Watermark, counting, entry_key, entry_value, map_p
from processors.context import Context
from processors.inbox import Inbox
from processors.outbox import Outbox


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


def _window_stage():
    """Stage 1 of the Pipeline API's sliding-window count (the vertex its lowering makes)."""
    p = Pipeline.create()
    (p.read_from(Sources.stream_from_processor("events", map_p(str))).with_timestamps(entry_value, 0)
     .grouping_key(entry_key).window(WindowDefinition.sliding(100, 20)).aggregate(counting())
     .write_to(Sinks.noop()))
    return p.to_dag().get_vertex("sliding-window-prepare").supplier


def _run_stage(steps: list, one_by_one: bool) -> list:
    processor = _window_stage()()
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


def test_pipeline_window_stage_when_whole_batches_then_same_output_and_order_as_per_item() -> None:
    events = _events(400, 13)
    steps = [events[:150], Watermark(1000), events[150:300], Watermark(2500), events[300:]]
    batched = _run_stage(steps, one_by_one=False)
    assert batched == _run_stage(steps, one_by_one=True)
    frames = [item for item in batched if not isinstance(item, Watermark)]
    assert sum(entry.value for entry in frames) == 400  # every event counted once, in its frame


def test_pipeline_window_stage_when_a_key_is_none_then_fails_naming_the_stage() -> None:
    events = _events(20, 4)
    events[7] = JetEvent(70, (None, 70))
    with pytest.raises(ProcessorContractError, match=r"item JetEvent\(timestamp=70, item=\(None, 70\)\).*"
                                                     r"Null key from the key function of stage 'sliding-window'"):
        _run_stage([events], one_by_one=False)
