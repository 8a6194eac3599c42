"""examples/sequence_source.py: the checkpointed sequence source resumes from its saved offset, the injected
failure fires once, and real EXACTLY_ONCE runs, with and without the injected failure, publish each number
exactly once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "examples")]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import sequence_source as seq  # noqa: E402
from test_network_source import processor, run_until  # noqa: E402

from dag import RestartableError  # noqa: E402
from processors import Inbox  # noqa: E402


def test_sequence_source_when_restored_then_emits_from_the_saved_offset() -> None:
    proc, outbox = processor(seq.sequence_source(1000))
    first, _ = run_until(proc, outbox, lambda items, done: len(items) >= 150)
    outbox.reset()
    assert proc.save_to_snapshot() is True
    saved = outbox.drain_snapshot()
    proc.close()
    restored, restored_outbox = processor(seq.sequence_source(1000))
    restored.restore_from_snapshot(Inbox(saved))
    assert restored.finish_snapshot_restore() is True
    rest, done = run_until(restored, restored_outbox, lambda items, done: done)
    restored.close()
    assert done and first == list(range(len(first))) and rest == list(range(len(first), 1000))


def test_fail_once_when_restarted_then_passes_the_item(tmp_path: Path) -> None:
    fail = seq.FailOnce(tmp_path, 5)
    assert fail(4) == 4
    with pytest.raises(RestartableError, match="injected failure at 5"):
        fail(5)
    assert seq.FailOnce(tmp_path, 5)(5) == 5  # a rebuilt processor (after the restart) lets it through


def test_check_when_numbers_missing_or_doubled_then_says_so(tmp_path: Path) -> None:
    (tmp_path / "0-0").write_text("0\n1\n2\n")
    assert seq.check(tmp_path, 3).startswith("exactly once")
    (tmp_path / "0-1").write_text("2\n")
    (tmp_path / ".0-2.prepared").write_text("3\n")  # not published: not counted
    assert seq.check(tmp_path, 4) == "NOT exactly once: 1 missing (first [3]), 1 doubled"


@pytest.mark.spark
def test_sequence_source_when_run_exactly_once_then_each_number_published_once(engine, tmp_path: Path) -> None:
    out = tmp_path / "out"
    engine.new_job(seq.build_dag(out, 5000), seq.job_config(100)).join(timeout=300)
    assert seq.published_numbers(out) == list(range(5000))


@pytest.mark.spark
def test_sequence_source_when_failure_injected_then_restarted_and_each_number_published_once(engine, tmp_path: Path) -> None:
    out = tmp_path / "out"
    job = engine.new_job(seq.build_dag(out, 20_000, fail_after=10_000), seq.job_config(100))
    job.join(timeout=300)
    assert (out / seq.MARKER).exists() and job.metrics().restarts == 1  # the failure happened, the job restarted
    assert seq.published_numbers(out) == list(range(20_000))
