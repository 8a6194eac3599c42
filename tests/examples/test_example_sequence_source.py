"""examples/sequence_source.py: the checkpointed sequence source resumes from its saved offset, the injected
failure fires once, and real EXACTLY_ONCE runs publish each number exactly once: without faults, and with a
RestartableError and a killed Python worker mid-stream on one and on two members."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "examples")]

import sequence_source as seq  # noqa: E402

from dag import RestartableError  # noqa: E402
from processors import Inbox  # noqa: E402
from tests.support import complete_until  # noqa: E402
from tests.support.snapshots import open_source  # noqa: E402


def test_sequence_source_when_restored_then_emits_from_the_saved_offset() -> None:
    proc, outbox = open_source(seq.sequence_source(1000))
    first, _ = complete_until(proc, outbox, lambda items, done: len(items) >= 150)
    outbox.reset()
    assert proc.save_to_snapshot() is True
    saved = outbox.drain_snapshot()
    proc.close()
    restored, restored_outbox = open_source(seq.sequence_source(1000))
    restored.restore_from_snapshot(Inbox(saved))
    assert restored.finish_snapshot_restore() is True
    rest, done = complete_until(restored, restored_outbox, lambda items, done: done)
    restored.close()
    assert done and first == list(range(len(first))) and rest == list(range(len(first), 1000))


def test_fail_once_when_output_published_then_fails_at_the_first_item_from_k_once(tmp_path: Path) -> None:
    fail = seq.FailOnce(tmp_path, 5)
    assert fail(4) == 4 and fail(5) == 5  # nothing published yet: no restart would show exactly-once
    (tmp_path / ".0-0.prepared").write_text("0\n")
    assert fail(6) == 6  # staged, not published
    (tmp_path / "0-0").write_text("0\n")
    with pytest.raises(RestartableError, match="injected failure at 7"):
        fail(7)
    assert seq.FailOnce(tmp_path, 5)(8) == 8  # a rebuilt processor (after the restart) lets it through


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


@pytest.fixture(params=[1, 2], ids=["members1", "members2"])
def engine_with_members(request, engine):
    """The shared engine (one member) or an engine with two members on the same session."""
    from dag import Engine, EngineConfig

    return engine if request.param == 1 else Engine(EngineConfig(members=2), spark=engine.spark)


@pytest.mark.spark
def test_sequence_source_when_error_and_killed_worker_injected_then_restarted_and_each_number_published_once(
        engine_with_members, tmp_path: Path, caplog) -> None:
    out = tmp_path / "out"
    dag = seq.build_dag(out, 20_000, fail_after=6_000, kill_after=12_000, rate=5_000)
    job = engine_with_members.new_job(dag, seq.job_config(100))
    with caplog.at_level(logging.WARNING, logger="jetspark.snapshots"):
        job.join(timeout=300)
    assert (out / seq.MARKER).exists() and (out / seq.KILL_MARKER).exists()  # both faults fired mid-stream
    restarts = [r.getMessage() for r in caplog.records if " restarts from " in r.getMessage()]
    assert job.metrics().restarts == 2 and len(restarts) == 2
    # each fault came after published output, so each restart was from a snapshot, not from scratch
    assert all(" restarts from snapshot " in r for r in restarts), restarts
    assert seq.published_numbers(out) == list(range(20_000))
