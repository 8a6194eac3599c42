"""Faults in PIPELINED stream jobs on local Spark (issue 11, "Bad input and faults"): a Python worker that dies
or freezes, a TCP link between tasks that breaks, a sink that cannot write, a source whose ``create_fn`` fails.

With processing guarantee NONE each fails the job within seconds with a ``JobFailedError`` naming the vertex and
processor; with EXACTLY_ONCE an infrastructure fault (a dead worker, a broken link) restarts the job from its
last snapshot instead (issue 12). After every test no job thread, socket or Python worker of the job is left:
the driver's jetspark threads, the job's channel, the workers' jetspark threads, and every Python worker that
ran a processor of the job is either gone or back to an idle worker (one thread, no listening socket).

The DAG: ``endless`` (one processor, task 0) -> ``probe`` (two processors: #0 in task 0, #1 in task 1) ->
``sink`` (one processor, task 0), so both edges cross the TCP link between the two tasks. Each probe
processor first emits ``("pid", index, os.getpid())``: the test learns which Python worker runs which task.
"""

from __future__ import annotations

import gc
import os
import signal
import time
import uuid

import pytest

from dag import DAG, ExecutionMode, JobConfig, JobFailedError, JobStatus, ProcessingGuarantee
from edges import between
from processors import AbstractProcessor, SourceBuilder, write_file_p, write_list_p
from tests.support import channel_closed, counter_stream, running, wait_for, wait_no_threads_left
from tests.support.processors import Endless

pytestmark = pytest.mark.spark
FAIL_WITHIN = 60.0  # seconds from the fault to join()'s error, generous for a loaded 2-core machine


def _config(guarantee=ProcessingGuarantee.NONE):
    return JobConfig(execution_mode=ExecutionMode.PIPELINED, processing_guarantee=guarantee,
                     snapshot_interval_ms=200)


class Probe(AbstractProcessor):
    """Passes items on after reporting its Python worker's pid; processor #1, at its first item >= ``cut_at``
    (when given), breaks the TCP links of its task abruptly, once per marker file (``marker`` None: each
    execution)."""

    def __init__(self, cut_at=None, marker=None):
        super().__init__()
        self.cut_at, self.marker, self.reported = cut_at, marker, False

    def init_processor(self, context):
        self.g = context.global_processor_index

    def try_process0(self, item):
        if not self.reported:
            if not self.try_emit(("pid", self.g, os.getpid())):
                return False
            self.reported = True
        if self.g == 1 and self.cut_at is not None and item >= self.cut_at:
            self.cut_at = None
            if _first_time(self.marker):
                _break_links()
        return self.try_emit(item)


def _first_time(marker):
    if marker is None:
        return True
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _break_links():
    """Shut down every TCP connection of this task's links (the peer sees the link end without its BYE)."""
    import socket

    from dag.runtime.pipelined.links import Links

    gc.unfreeze()  # the worker hides its long-lived objects (the links among them) from gc.get_objects()
    for links in [o for o in gc.get_objects() if isinstance(o, Links) and not o.closed]:
        for conn in list(links.conns):
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _probe_dag(name, probe=Probe, source=Endless):
    dag = DAG()
    src = dag.new_vertex("endless", source, local_parallelism=1)
    mid = dag.new_vertex("probe", probe, local_parallelism=2)
    sink = dag.new_vertex("sink", write_list_p(name), local_parallelism=1)
    dag.edge(between(src, mid)).edge(between(mid, sink))
    return dag


def _pids(engine, name):
    """``{probe index: pid}`` reported so far."""
    return {x[1]: x[2] for x in list(engine.get_list(name)) if isinstance(x, tuple) and x[0] == "pid"}


def _both_pids(engine, name):
    """``{probe index: pid}`` once both probe processors reported theirs."""
    wait_for(lambda: len(_pids(engine, name)) == 2, 60, "both probes' pids")
    return _pids(engine, name)


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _listening_inodes():
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A":  # LISTEN
                    inodes.add(fields[9])
    return inodes


def busy_workers(pids):
    """Python workers among ``pids`` still doing the job's work: alive with more than one thread, or holding a
    listening socket (a task's link server). An idle, reusable pyspark worker has one thread and listens on
    nothing."""
    listening = _listening_inodes()
    busy = []
    for pid in pids:
        if not _alive(pid):
            continue
        try:
            threads = len(os.listdir(f"/proc/{pid}/task"))
            fds = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except (FileNotFoundError, ProcessLookupError):
            continue
        servers = [fd for fd in fds if fd.startswith("socket:[") and fd[8:-1] in listening]
        if threads > 1 or servers:
            busy.append((pid, threads, len(servers)))
    return busy


def assert_nothing_left(engine, job, pids):
    wait_for(lambda: busy_workers(pids) == [], 30, "the job's Python workers to end or idle")
    assert channel_closed(job)
    wait_no_threads_left(engine)


def _fails_naming(job, fault_time, vertices):
    with pytest.raises(JobFailedError) as info:
        job.join(timeout=FAIL_WITHIN + 60)
    assert time.monotonic() - fault_time < FAIL_WITHIN, "the job did not fail within seconds of the fault"
    assert job.status is JobStatus.FAILED
    error = info.value
    assert (error.vertex, error.processor_index) in vertices, str(error)
    assert f"vertex '{error.vertex}'" in str(error) and f"#{error.processor_index}" in str(error)
    return error


def test_stream_job_when_python_worker_killed_then_fails_naming_its_processors_and_nothing_left(engine):
    name = f"killed-{uuid.uuid4().hex}"
    with running(engine, _probe_dag(name), _config()) as job:
        pids = _both_pids(engine, name)
        os.kill(pids[1], signal.SIGKILL)  # the worker of task 1, which runs probe#1 only
        error = _fails_naming(job, time.monotonic(), {("probe", 1)})
        assert "task 1" in str(error)
    assert not _alive(pids[1])
    assert_nothing_left(engine, job, pids.values())


def test_stream_job_when_python_worker_frozen_then_fails_after_its_silence_naming_its_processors(engine):
    from dag.runtime.pipelined.coordinator import TASK_SILENCE_SECONDS

    name = f"frozen-{uuid.uuid4().hex}"
    with running(engine, _probe_dag(name), _config()) as job:
        pids = _both_pids(engine, name)
        try:
            os.kill(pids[1], signal.SIGSTOP)  # alive for Spark, silent for the job: a frozen worker or machine
            error = _fails_naming(job, time.monotonic() - TASK_SILENCE_SECONDS, {("probe", 1)})
            assert error.exc_type == "TaskLostError" and "task 1" in str(error) and "has not reported" in str(error)
        finally:
            try:
                os.kill(pids[1], signal.SIGCONT)
            except ProcessLookupError:
                pass  # Spark killed it when the job's stage was cancelled
    assert_nothing_left(engine, job, pids.values())


def test_stream_job_when_tcp_link_breaks_then_fails_naming_a_processor_of_the_lost_peer(engine):
    name = f"cut-{uuid.uuid4().hex}"
    with running(engine, _probe_dag(name, lambda: Probe(cut_at=2000)), _config()) as job:
        pids = _both_pids(engine, name)
        started = time.monotonic()
        # task 0 lost task 1 (probe#1), or task 1 lost task 0 (endless#0, probe#0, sink#0 run there)
        error = _fails_naming(job, started, {("probe", 1), ("endless", 0)})
        assert "link" in str(error)
    assert_nothing_left(engine, job, pids.values())


def test_stream_file_sink_when_it_cannot_write_then_fails_naming_sink_and_nothing_left(engine, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "0").symlink_to("/dev/full")  # every write fails: "No space left on device"
    dag = DAG()
    # a stream source: write_file_p is live
    src = dag.new_vertex("endless", counter_stream("endless", pause=0.002), local_parallelism=1)
    sink = dag.new_vertex("sink", write_file_p(out, append=True), local_parallelism=1)
    dag.edge(between(src, sink))
    with running(engine, dag, _config()) as job:
        error = _fails_naming(job, time.monotonic(), {("sink", 0)})
        assert "No space left on device" in str(error)
    assert_nothing_left(engine, job, [])


def test_stream_file_sink_when_directory_cannot_be_created_then_fails_naming_sink(engine, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    dag = DAG()
    src = dag.new_vertex("endless", Endless, local_parallelism=1)
    dag.edge(between(src, dag.new_vertex("sink", write_file_p(blocker / "out"), local_parallelism=1)))
    with running(engine, dag, _config()) as job:
        with pytest.raises(JobFailedError, match=r"vertex 'sink'.*Not a directory") as info:
            job.join(timeout=FAIL_WITHIN)
        assert info.value.vertex == "sink"
    assert_nothing_left(engine, job, [])


def _broken_create(ctx):
    raise ConnectionRefusedError(f"no server for processor {ctx.global_processor_index}")


def test_stream_source_when_create_fn_fails_then_fails_naming_source_and_nothing_left(engine):
    source = (SourceBuilder.stream("feed", _broken_create).fill_buffer_fn(lambda state, buf: None)
              .distributed(1).build())
    dag = DAG()
    src = dag.new_vertex("feed", source)
    dag.edge(between(src, dag.new_vertex("sink", write_list_p(f"feed-{uuid.uuid4().hex}"))))
    with running(engine, dag, _config()) as job:
        error = _fails_naming(job, time.monotonic(), {("feed", 0), ("feed", 1)})
        assert error.exc_type == "ConnectionRefusedError" and "no server for processor" in str(error)
        assert "_broken_create" in error.user_traceback
    assert_nothing_left(engine, job, [])


def test_exactly_once_stream_when_tcp_link_breaks_then_restarts_from_snapshot(engine, tmp_path):
    name = f"cut-eo-{uuid.uuid4().hex}"
    source = counter_stream("endless", pause=0.002)
    dag = _probe_dag(name, lambda: Probe(cut_at=3000, marker=str(tmp_path / "cut")), source)
    with running(engine, dag, _config(ProcessingGuarantee.EXACTLY_ONCE)) as job:
        wait_for(lambda: (tmp_path / "cut").exists(), 120, "the link cut")
        wait_for(lambda: job.metrics().restarts >= 1, 120, "the restart")
        seen = len(engine.get_list(name))
        wait_for(lambda: len(engine.get_list(name)) > seen + 1000, 120, "output after the restart")
        assert job.status is JobStatus.RUNNING
        pids = _pids(engine, name)
    items = sorted(x for x in engine.get_list(name) if not isinstance(x, tuple))
    assert items == list(range(len(items)))  # what was published: each item once, none skipped
    assert_nothing_left(engine, job, pids.values())
