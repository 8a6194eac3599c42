"""Security of failure reporting: text that reaches an error message (data) is never decoded as a failure.

A data string shaped like the old failure marker (``"JETSPARK-FAILURE:" + base64 of a pickle``) used to be
unpickled by the driver: code ran there and the job hung in COMPLETING. Failure details now travel on the
job's authenticated channel as JSON, so such a string is inert and the job ends with a normal failure.
"""

from __future__ import annotations

import base64
import os
import pickle

import pytest

from dag import DAG, JobFailedError, JobStatus
from edges import between
from processors import AbstractProcessor, map_p, read_list_p, write_list_p, write_map_p
from tests.support import unique

pytestmark = pytest.mark.spark


class _Exploit:
    """Pickles to a call of ``os.system`` (what an attacker would put in a data string)."""

    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def _malicious(marker_file) -> str:
    blob = base64.b64encode(pickle.dumps(_Exploit(f"touch {marker_file}"), protocol=0)).decode("ascii")
    return "JETSPARK-FAILURE:" + blob


def _source_of_malicious_string(engine, dag, marker):
    """A one-processor vertex ``src`` reading a driver list that holds :func:`_malicious` of ``marker``."""
    name = unique("src")
    engine.get_list(name).append(_malicious(marker))
    return dag.new_vertex("src", read_list_p(name), local_parallelism=1)


class RaisesItem(AbstractProcessor):
    def try_process0(self, item):
        raise ValueError(item)


def test_failure_when_data_string_carries_old_marker_in_processor_error_then_no_code_runs_and_job_fails(
        engine, tmp_path):
    marker = tmp_path / "pwned"
    dag = DAG()
    s = _source_of_malicious_string(engine, dag, marker)
    r = dag.new_vertex("raises", RaisesItem, local_parallelism=1)
    dag.edge(between(s, r))
    job = engine.new_job(dag)
    with pytest.raises(JobFailedError) as info:
        job.join(timeout=120)
    assert not marker.exists(), "the driver executed code found in data"
    assert job.status is JobStatus.FAILED
    err = info.value
    assert (err.vertex, err.processor_index, err.exc_type) == ("raises", 0, "ValueError")
    assert err.exc_message.startswith("JETSPARK-FAILURE:")  # reported as the plain text it is


def test_failure_when_data_string_with_old_marker_reaches_a_driver_sink_then_no_code_runs_and_join_returns(
        engine, tmp_path):
    marker = tmp_path / "pwned"
    dag = DAG()
    s = _source_of_malicious_string(engine, dag, marker)
    m = dag.new_vertex("sink", write_map_p(unique("out")))  # not an entry: an error quoting it
    dag.edge(between(s, m))
    job = engine.new_job(dag)
    with pytest.raises(JobFailedError) as info:
        job.join()  # no timeout: must return
    assert not marker.exists()
    assert "not a (key, value) entry" in str(info.value)


def test_failure_when_data_string_passes_through_to_a_sink_then_delivered_as_data(engine, tmp_path):
    marker, out = tmp_path / "pwned", unique("out")
    dag = DAG()
    s = _source_of_malicious_string(engine, dag, marker)
    m = dag.new_vertex("upper", map_p(str.upper), local_parallelism=1)
    w = dag.new_vertex("sink", write_list_p(out))
    dag.edge(between(s, m)).edge(between(m, w))
    engine.new_job(dag).join(timeout=120)
    assert engine.get_list(out) == [_malicious(marker).upper()] and not marker.exists()
