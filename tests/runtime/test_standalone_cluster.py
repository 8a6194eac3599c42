"""jetspark on a real Spark standalone cluster whose executors have no jetspark installed.

ONE module-scoped fixture starts a master and two workers (1 core each) with ``scripts/cluster.sh``, with
Spark's authentication on (a fresh secret), and stops them at the end (no process of the cluster may
outlive it). The executors run a SECOND virtual environment holding only jetspark's runtime dependencies
(pydantic, networkx, graphviz; pyspark comes from Spark's own ``python/lib/pyspark.zip``), built once and
cached in the temporary directory: every job proves that the engine shipped jetspark's packages itself.

The driver runs in a subprocess (one SparkContext per process; the suite's shared session is local[2]) and
runs two applications one after the other (module fixture ``main_run``; each scenario's outcome or error is
recorded, so one failure does not hide the others):

1. executors on the executor venv: word count and TF-IDF (compared with the same examples on the shared
   local session), a PIPELINED job across both executors (items crossing between them over jetspark's TCP
   links), a job whose function needs a module the executors lack (the error names it and the Python), and
   an EXACTLY_ONCE job whose executor JVM is killed (``kill -9``) mid-run and restarts from its snapshot on
   the replacement executor with exact output;
2. executors given nothing but ``python_env_archive`` (the executor venv packed with ``jetspark pack-env``,
   once, cached): a job showing they run in it, then a STAGED job during which a whole worker (its Worker
   and executor JVMs) is killed for good: Spark's retries on the remaining worker give the exact result.

The cluster script's own tests come first in the file: they need both workers still running.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from tests.support import free_base_port
from tests.support.drivers import run_driver

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER_SH = os.path.join(REPO, "scripts", "cluster.sh")
EXAMPLES = os.path.join(REPO, "examples")
RUNTIME_DEPS = ("pydantic", "networkx", "graphviz")
sys.path.insert(0, EXAMPLES)  # before the shared local session starts: its workers get the driver's sys.path


# ----------------------------------------------------------------------------------------------- fixtures


def _executor_venv() -> str:
    """A virtualenv with jetspark's runtime dependencies (the driver's versions) and not jetspark, built once
    per set of requirements in the temporary directory (under a lock: parallel test runs share it)."""
    requirements = [f"{name}=={importlib.metadata.version(name)}" for name in RUNTIME_DEPS]
    key = hashlib.sha256(" ".join([sys.version, *requirements]).encode()).hexdigest()[:12]
    venv = os.path.join(tempfile.gettempdir(), f"jetspark-executor-venv-{key}")
    python = os.path.join(venv, "bin", "python")
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(venv, ".complete")):
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv], check=True,
                           timeout=300)
            subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                            *requirements], check=True, timeout=600, capture_output=True)
            open(os.path.join(venv, ".complete"), "w").close()
    return venv


def _packed_venv(venv: str) -> str:
    """``jetspark pack-env`` of ``venv``, made once next to it."""
    archive = venv + ".tar.gz"
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(archive):
            proc = subprocess.run([sys.executable, "-m", "jetspark_cli.main", "pack-env", archive, "--venv", venv],
                                  cwd=REPO, capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr
    return archive


class Cluster:
    """A standalone cluster of ``scripts/cluster.sh`` (its state directory, master port and secret)."""

    def __init__(self, state: str, port: int, secret: str):
        self.state, self.port, self.secret = state, port, secret
        self.url = f"spark://127.0.0.1:{port}"

    def script(self, *args: str) -> subprocess.CompletedProcess:
        """``scripts/cluster.sh ARGS`` for this cluster's state directory and secret."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON")}
        env.update({"JETSPARK_CLUSTER_DIR": self.state, "JETSPARK_CLUSTER_SECRET": self.secret})
        return subprocess.run(["bash", CLUSTER_SH, *args], env=env, capture_output=True, text=True, timeout=180)

    def processes(self) -> list[str]:
        """Command lines of the live processes started for this cluster (daemons, executors, Python workers)."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if cwd.startswith(self.state + os.sep) or f"-Djetspark.cluster={self.state}/" in cmdline:
                found.append(f"{pid}: {cmdline[:150]}")
        return found


@pytest.fixture(scope="module")
def executor_venv() -> str:
    return _executor_venv()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, executor_venv):
    state = str(tmp_path_factory.mktemp("standalone"))
    cluster = Cluster(state, free_base_port(1), secrets.token_hex(24))
    started = cluster.script("start", "--workers", "2", "--port", str(cluster.port), "--memory", "1536m")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        yield cluster
    finally:
        stopped = cluster.script("stop")
        deadline = time.monotonic() + 30
        while cluster.processes() and time.monotonic() < deadline:
            time.sleep(0.2)
        left = cluster.processes()
        assert stopped.returncode == 0 and not left, (stopped.stdout + stopped.stderr, left)


# usermod.py: tests.support.cluster_faults (executor_pid, fault_once, sequence, ...), then this (run_driver)
USER_MODULE = '''
import os, signal, sys, time


def where(x):
    """x with where it ran: executor JVM, Python, and the file jetspark's processors came from."""
    import processors
    return (x, executor_pid(), sys.executable, sys.prefix, processors.__file__)


def tag_origin(x):
    return (executor_pid(), x)


def tag_receiver(item):
    return (executor_pid(),) + tuple(item)


def tag_with(cls):
    return lambda x: (x, cls.__name__)


def kill_worker_once(marker):
    """x -> x * x; on x == 1500, once, kills this task's whole worker: its Worker JVM and executor JVM."""
    def fn(x):
        if x == 1500:
            worker, executor = ancestor(b"deploy.worker.Worker"), executor_pid()
            if fault_once(marker, f"{worker} {executor}"):
                os.kill(worker, signal.SIGKILL)
                os.kill(executor, signal.SIGKILL)
        time.sleep(0.0005)
        return x * x
    return fn
'''

PRELUDE = '''
import json, os, sys, time
sys.path.insert(0, EXAMPLES)
from dag import DAG, Engine, EngineConfig, ExecutionMode, JobConfig
from edges import between
from processors import map_p, read_list_p, write_list_p
import usermod

master = sys.argv[1]


def wait_for_executors(engine, n, timeout=180):
    sc = engine.spark.sparkContext
    deadline = time.monotonic() + timeout
    while sc._jsc.sc().getExecutorMemoryStatus().size() - 1 < n:
        assert time.monotonic() < deadline, f"fewer than {n} executors after {timeout} s"
        time.sleep(0.2)


def where_job(engine, n=20):
    """Where a small map job's items ran: (item, executor pid, sys.executable, sys.prefix, processors file)."""
    name = f"where-{time.monotonic_ns()}"
    engine.get_list(name).extend(range(n))
    dag = DAG()
    src = dag.new_vertex("src", read_list_p(name))
    m = dag.new_vertex("where", map_p(usermod.where))
    out = dag.new_vertex("out", write_list_p(name + "-out"))
    dag.edge(between(src, m)).edge(between(m, out))
    engine.new_job(dag).join(timeout=300)
    return sorted(engine.get_list(name + "-out"))


def guarded(fn):
    """fn()'s result, or the error's text: one failing scenario does not hide the others."""
    try:
        return {"ok": fn()}
    except Exception as exc:
        import traceback
        return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
'''.replace("EXAMPLES", repr(EXAMPLES))

MAIN_SCRIPT = PRELUDE + '''
import word_count, tf_idf
from dag.runtime.pipelined import coordinator
from processors import accumulate_by_key_p, counting

coordinator.SLOT_WAIT_SECONDS = 180  # a replacement executor on this busy shared machine can take a while
python, marker, output, snapshots, archive, worker_marker = sys.argv[2:8]
result = {}
config = EngineConfig(master=master, members=2, snapshot_dir=snapshots, spark_conf={"spark.pyspark.python": python})
with Engine(config) as engine:
    wait_for_executors(engine, 2)
    conf = engine.spark.sparkContext.getConf()
    result["conf"] = {k: conf.get(k, None) for k in ("spark.authenticate", "spark.network.crypto.enabled",
                                                     "spark.ui.enabled", "spark.executorEnv.PYTHONPATH")}
    result["where"] = guarded(lambda: where_job(engine))
    result["word_count"] = guarded(lambda: word_count.count_words(engine))
    result["tf_idf"] = guarded(lambda: tf_idf.build_index(engine))

    def pipelined():
        engine.get_list("p-in").extend(range(400))
        dag = DAG()
        src = dag.new_vertex("src", read_list_p("p-in"), local_parallelism=1)
        origin = dag.new_vertex("origin", map_p(usermod.tag_origin), local_parallelism=1)
        receiver = dag.new_vertex("receiver", map_p(usermod.tag_receiver), local_parallelism=1)
        out = dag.new_vertex("out", write_list_p("p-out"))
        dag.edge(between(src, origin)).edge(between(origin, receiver).partitioned(lambda i: i[1]).distributed())
        dag.edge(between(receiver, out))
        engine.new_job(dag, JobConfig(execution_mode=ExecutionMode.PIPELINED)).join(timeout=300)
        return sorted(engine.get_list("p-out"))

    result["pipelined"] = guarded(pipelined)

    def missing_module():
        import iniconfig  # in the driver's virtualenv (pytest's), not in the executors'

        engine.get_list("m-in").extend(range(10))
        dag = DAG()
        src = dag.new_vertex("src", read_list_p("m-in"))
        m = dag.new_vertex("tag", map_p(usermod.tag_with(iniconfig.IniConfig)))
        dag.edge(between(src, m)).edge(between(m, dag.new_vertex("out", write_list_p("m-out"))))
        engine.new_job(dag).join(timeout=300)

    result["missing_module"] = guarded(missing_module)

    def exactly_once():
        n = 8000
        job, numbers, killed = usermod.killed_exactly_once_job(engine, n, marker, output, timeout=360)
        return {"numbers": numbers, "n": n, "restarts": job.metrics().restarts, "killed": killed}

    result["exactly_once"] = guarded(exactly_once)

# a second application of the same driver: executors given nothing but the packed environment
with Engine(EngineConfig(master=master, members=2, default_local_parallelism=2,
                         python_env_archive=archive)) as engine:
    wait_for_executors(engine, 2)
    result["archive_python"] = engine.spark.sparkContext.getConf().get("spark.pyspark.python")
    result["archive_where"] = guarded(lambda: where_job(engine))

    def worker_loss():  # last: the cluster keeps one worker afterwards
        engine.get_list("in").extend(range(4000))
        dag = DAG()
        src = dag.new_vertex("src", read_list_p("in"))
        sq = dag.new_vertex("square", map_p(usermod.kill_worker_once(worker_marker)))
        count = dag.new_vertex("count", accumulate_by_key_p([lambda x: x % 7], counting()))
        out = dag.new_vertex("out", write_list_p("out"))
        dag.edge(between(src, sq)).edge(between(sq, count).partitioned(lambda x: x % 7).distributed())
        dag.edge(between(count, out))
        engine.new_job(dag, JobConfig(execution_mode=ExecutionMode.STAGED)).join(timeout=360)
        return {"counts": sorted(engine.get_list("out")),
                "killed": open(worker_marker).read() if os.path.exists(worker_marker) else None}

    result["worker_loss"] = guarded(worker_loss)
print("RESULT " + json.dumps(result))
'''


@pytest.fixture(scope="module")
def main_run(cluster, executor_venv, tmp_path_factory) -> dict:
    """The one driver of the module (two applications one after the other; see the module docstring)."""
    archive = _packed_venv(executor_venv)
    tmp = tmp_path_factory.mktemp("main-driver")
    return run_driver(tmp, MAIN_SCRIPT, cluster.url, os.path.join(executor_venv, "bin", "python"),
                      str(tmp / "killed"), str(tmp / "out"), str(tmp / "snapshots"), archive,
                      str(tmp / "worker-killed"), user_module=USER_MODULE,
                      env_extra={"JETSPARK_CLUSTER_SECRET": cluster.secret})


def ok(section: dict):
    assert "error" not in section, section.get("traceback") or section["error"]
    return section["ok"]


# ----------------------------------------------------------------------------------------------- cluster.sh


def test_cluster_script_when_running_then_status_lists_daemons_and_second_start_is_refused(cluster):
    status = cluster.script("status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"spark://127.0.0.1:{cluster.port}" in status.stdout
    assert status.stdout.count(": running, pid") == 3  # master and two workers
    again = cluster.script("start", "--port", str(cluster.port))
    assert again.returncode == 1 and "already running" in again.stderr and "stop" in again.stderr


def test_cluster_script_when_port_in_use_or_nothing_running_then_says_what_it_found(cluster, tmp_path):
    other = Cluster(str(tmp_path / "other"), cluster.port, "")
    taken = other.script("start", "--port", str(cluster.port))
    assert taken.returncode == 1 and f"port {cluster.port}" in taken.stderr and "in use" in taken.stderr
    stop = other.script("stop")
    assert stop.returncode == 0 and "nothing to stop" in stop.stdout
    status = other.script("status")
    assert status.returncode == 3 and "not running" in status.stdout


# ----------------------------------------------------------------------------------------------- jobs


def test_standalone_when_executors_lack_jetspark_then_engine_ships_it_securely(main_run, executor_venv):
    assert main_run["conf"] == {"spark.authenticate": "true", "spark.network.crypto.enabled": "true",
                                "spark.ui.enabled": "false", "spark.executorEnv.PYTHONPATH": None}
    rows = ok(main_run["where"])
    assert [r[0] for r in rows] == list(range(20))
    assert {r[2] for r in rows} == {os.path.join(executor_venv, "bin", "python")}
    # jetspark came from the zip the engine shipped, not from an installation or the driver's path
    assert all("jetspark-packages-" in r[4] and ".zip" in r[4] for r in rows), {r[4] for r in rows}


@pytest.mark.usefixtures("cluster")
def test_standalone_when_word_count_and_tf_idf_then_equal_to_local_mode(main_run, engine):
    import tf_idf
    import word_count

    assert ok(main_run["word_count"]) == word_count.count_words(engine)
    local_index = tf_idf.build_index(engine)
    cluster_index = ok(main_run["tf_idf"])
    assert sorted(cluster_index) == sorted(local_index)
    for word, postings in local_index.items():  # a word's postings come in the order the documents arrived
        expected, got = sorted(postings), sorted(cluster_index[word])
        assert [d for d, _ in got] == [d for d, _ in expected], word
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-12), word


def test_standalone_when_pipelined_then_tasks_on_both_executors_exchange_items_over_links(main_run):
    rows = ok(main_run["pipelined"])  # (receiver executor, origin executor, item)
    assert sorted(r[2] for r in rows) == list(range(400))
    assert len({r[0] for r in rows}) == 2 and len({r[1] for r in rows}) == 2, "tasks did not run on 2 executors"
    assert any(r[0] != r[1] for r in rows), "no item crossed from one executor to the other"
    for receiver in {r[0] for r in rows}:  # a distributed partitioned edge: one receiver per key in the job
        assert len({r[2] for r in rows if r[0] == receiver}) < 400


def test_standalone_when_executors_lack_a_module_then_error_names_it_and_the_python(main_run, executor_venv):
    section = main_run["missing_module"]
    assert "error" in section, "the job needing iniconfig on the executors did not fail"
    error = section["error"]
    assert error.startswith("JobFailedError") and "cannot import module 'iniconfig'" in error, error
    assert os.path.join(executor_venv, "bin", "python") in error and "python_env_archive" in error, error


def test_standalone_when_executor_jvm_killed_in_exactly_once_job_then_restored_exactly(main_run):
    result = ok(main_run["exactly_once"])
    assert result["killed"], "no executor was killed: the test proves nothing"
    assert result["restarts"] >= 1
    assert result["numbers"] == list(range(result["n"]))


def test_standalone_when_only_python_env_archive_then_executors_run_in_it(main_run, cluster):
    assert main_run["archive_python"] == "./environment/bin/python"
    rows = ok(main_run["archive_where"])
    assert [r[0] for r in rows] == list(range(20))
    for _, _, executable, prefix, processors_file in rows:
        # the executor unpacked the archive into its work directory as ./environment and runs its Python
        assert prefix.startswith(cluster.state) and prefix.endswith("/environment"), prefix
        assert executable.startswith(prefix)
        assert "jetspark-packages-" in processors_file


def test_standalone_when_worker_lost_for_good_in_staged_job_then_exact_result(main_run, cluster):
    result = ok(main_run["worker_loss"])
    assert result["killed"], "no worker was killed: the test proves nothing"
    n = 4000
    expected = sorted([k, sum(1 for x in range(n) if (x * x) % 7 == k)] for k in range(7))
    assert result["counts"] == [e for e in expected if e[1]]
    status = cluster.script("status")
    assert "NOT running" in status.stdout, status.stdout  # the killed worker is gone for good
