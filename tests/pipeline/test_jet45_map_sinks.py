"""``Sinks.map_with_merging``, ``map_with_updating`` and ``map_with_entry_processor`` on Spark (issue 27): both
runtimes give the map plain Python computes, a failing function fails the job naming the sink, and under
EXACTLY_ONCE a restart from a snapshot applies every item's update exactly once."""

from __future__ import annotations

import collections

import pytest

from dag import ExecutionMode, JobConfig, JobFailedError, ProcessingGuarantee
from pipeline import Pipeline, Sinks, TestSources
from processors import ProcessorMetaSupplier
from tests.support import unique
from tests.support.processors import FailAt, sequence

pytestmark = pytest.mark.spark

WORDS = "the quick fox saw the lazy dog and the quick cat".split()


class _Tally:
    """An entry processor (Jet's ``EntryProcessor``): counts a word, removing it at its third sighting."""

    def process(self, entry):
        seen = (entry.get_value() or 0) + 1
        entry.set_value(None if seen == 3 else seen)


def _expected() -> tuple[dict, dict, dict]:
    counts = {"old": 100, **collections.Counter(WORDS)}
    lengths: dict = {"gone": 1}
    for word in WORDS:
        lengths[word[0]] = lengths.get(word[0], 0) + len(word)
    tallies = {w: n for w, n in collections.Counter(WORDS).items() if n != 3}
    return counts, lengths, tallies


@pytest.mark.parametrize("mode", [ExecutionMode.STAGED, ExecutionMode.PIPELINED])
def test_map_sinks_when_job_runs_then_map_as_plain_python_computes(engine, mode) -> None:
    merged, updated, processed = (unique(n) for n in ("merged", "updated", "processed"))
    engine.get_map(merged)["old"] = 100
    engine.get_map(updated)["gone"] = 1
    p = Pipeline.create()
    words = p.read_from(TestSources.items(WORDS))
    words.write_to(Sinks.map_with_merging(engine.get_map(merged), lambda w: w, lambda w: 1, lambda a, b: a + b))
    (words.write_to(Sinks.map_with_updating(updated, lambda w: w[0], lambda old, w: (old or 0) + len(w))))
    words.write_to(Sinks.map_with_entry_processor(processed, lambda w: w, lambda w: _Tally()))
    engine.new_job(p, JobConfig(execution_mode=mode)).join(timeout=300)
    counts, lengths, tallies = _expected()
    assert dict(engine.get_map(merged)) == counts
    assert dict(engine.get_map(updated)) == lengths
    assert dict(engine.get_map(processed)) == tallies
    assert "the" not in engine.get_map(processed)  # seen three times: removed by set_value(None)


@pytest.mark.parametrize("mode", [ExecutionMode.STAGED, ExecutionMode.PIPELINED])
def test_map_with_updating_when_function_raises_then_job_fails_naming_sink_and_item(engine, mode) -> None:
    name = unique("failing")
    p = Pipeline.create()
    (p.read_from(TestSources.items([1, 2, 0, 4]))
     .write_to(Sinks.map_with_updating(name, lambda x: x, lambda old, x: 10 // x)))
    with pytest.raises(JobFailedError) as info:
        engine.new_job(p, JobConfig(execution_mode=mode)).join(timeout=300)
    text = str(info.value)
    assert f"mapWithUpdatingSink({name})" in text and "update_fn" in text and "ZeroDivisionError" in text
    assert "item 0" in text


def test_map_with_merging_when_restarted_from_snapshot_under_exactly_once_then_each_item_merged_once(
        engine, tmp_path) -> None:
    n = 3000
    name = unique("eo-merged")
    marker = tmp_path / f"item-{n // 2}"
    p = Pipeline.create()
    (p.read_from(sequence(n, until=marker.exists))  # the source ends only after the injected failure
     .custom_transform("fail-once", ProcessorMetaSupplier.of(
         lambda: FailAt([n // 2], tmp_path, after_commit=True), preferred_local_parallelism=1))
     .write_to(Sinks.map_with_merging(name, lambda x: x % 3, lambda x: x, lambda a, b: a + b)))
    config = JobConfig(execution_mode=ExecutionMode.PIPELINED, snapshot_interval_ms=100,
                       processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE)
    job = engine.new_job(p, config)
    job.join(timeout=300)
    assert marker.exists() and job.metrics().restarts >= 1  # it really failed after a snapshot and restarted
    assert dict(engine.get_map(name)) == {k: sum(x for x in range(n) if x % 3 == k) for k in range(3)}
