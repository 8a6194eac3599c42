"""Fault-tolerance settings and names: RestartableError, JobStatus.SUSPENDED, snapshot and restart settings,
the two-phase-commit defaults of Processor."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dag import DagError, EngineConfig, JobConfig, RestartableError
from dag import JobStatus
from processors import Processor, peek_input_p


def test_restartable_error_when_raised_then_a_dag_error_and_picklable():
    import pickle

    err = pickle.loads(pickle.dumps(RestartableError("broker lost")))
    assert isinstance(err, DagError) and isinstance(err, RuntimeError) and str(err) == "broker lost"


def test_job_status_when_suspended_then_not_terminal():
    assert JobStatus.SUSPENDED.value == "SUSPENDED" and not JobStatus.SUSPENDED.is_terminal


def test_job_config_when_defaults_then_jet_interval_and_bounded_restarts():
    config = JobConfig()
    assert (config.snapshot_interval_ms, config.max_restarts) == (10000, 10)
    with pytest.raises(ValidationError):
        JobConfig(max_restarts=-1)
    with pytest.raises(ValidationError):
        JobConfig(snapshot_interval_ms=-5)


def test_engine_config_when_snapshot_dir_unset_then_none():
    assert EngineConfig().snapshot_dir is None
    assert EngineConfig(snapshot_dir="/shared/snaps").snapshot_dir == "/shared/snaps"


def test_processor_two_phase_commit_defaults_when_not_overridden_then_true():
    class Plain(Processor):
        def __init__(self):  # no super().__init__(): Processor holds no state
            pass

    assert Plain().snapshot_commit_prepare() is True
    assert Plain().snapshot_commit_finish(False) is True


def test_peek_wrapper_when_two_phase_commit_called_then_delegates_to_wrapped():
    calls = []

    class TwoPhase(Processor):
        def snapshot_commit_prepare(self):
            calls.append("prepare")
            return False

        def snapshot_commit_finish(self, success):
            calls.append(("finish", success))
            return True

    wrapped = peek_input_p(TwoPhase)()  # a zero-argument factory wraps into a zero-argument factory
    assert wrapped.snapshot_commit_prepare() is False and wrapped.snapshot_commit_finish(True) is True
    assert calls == ["prepare", ("finish", True)]
