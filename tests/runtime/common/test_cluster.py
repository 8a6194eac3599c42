"""The engine's cluster settings without a cluster (dag/runtime/common/cluster.py, session settings): the shipped zip
of jetspark's packages, the executors' Python, python_env_archive, EngineConfig.secure, a master URL nobody
answers, and the sentence for a failing executor Python. No JVM starts here."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import zipfile

import pytest

from dag import DagError, DagValidationError, Engine, EngineConfig
from dag.runtime.common.cluster import (SECRET_ENV, archive_conf, check_master_answers, executor_python,
                                 explain_python_failure, package_zip, security_conf)
from dag.runtime.common.failures import summarize_spark_error
from dag.runtime.common.session import _defaults
from tests.support import free_base_port

STANDALONE = "spark://head:7077"


@pytest.fixture
def archive(tmp_path):
    path = tmp_path / "env.tar.gz"
    path.write_bytes(b"not really a tarball; only its name and existence are checked")
    return str(path)


@pytest.fixture(autouse=True)
def no_ambient_settings(monkeypatch):
    for name in (SECRET_ENV, "PYSPARK_PYTHON", "SPARK_DRIVER_MEMORY"):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------------------------- the zip


def test_package_zip_when_built_then_holds_every_package_and_is_reused_until_content_changes(tmp_path):
    path = package_zip(str(tmp_path))
    names = zipfile.ZipFile(path).namelist()
    for package in ("dag", "edges", "processors", "pipeline", "connectors", "jetspark_cli", "jetspark_base"):
        assert f"{package}/__init__.py" in names
    assert "dag/runtime/common/cluster.py" in names and not any("__pycache__" in n for n in names)
    assert package_zip(str(tmp_path)) == path  # same content: same file, not rebuilt
    assert len(os.listdir(tmp_path)) == 1


def test_package_zip_when_imported_from_zip_then_dag_works(tmp_path):
    path = package_zip(str(tmp_path))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import dag, processors, edges; "
            "assert dag.__file__.startswith(sys.argv[1]), dag.__file__; from dag import DAG; "
            "from processors import noop_p; d = DAG(); d.new_vertex('v', noop_p()); print(len(list(d)))")
    proc = subprocess.run([sys.executable, "-S", "-c", code, path], capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(
                              p for p in sys.path if "site-packages" in p)}, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "1", proc.stderr


# --------------------------------------------------------------------------------------------- executors' Python


def test_executor_python_when_nothing_set_then_python3_never_the_drivers_path():
    assert executor_python(EngineConfig(master=STANDALONE), {}) == "python3"
    assert _defaults(EngineConfig(master=STANDALONE, secure=False))["spark.pyspark.python"] == "python3"


def test_executor_python_when_conf_archive_or_env_then_that_order(archive):
    env = {"PYSPARK_PYTHON": "/opt/py/bin/python"}
    assert executor_python(EngineConfig(master=STANDALONE), env) == "/opt/py/bin/python"
    with_archive = EngineConfig(master=STANDALONE, python_env_archive=archive)
    assert executor_python(with_archive, env) == "./environment/bin/python"
    conf = EngineConfig(master=STANDALONE, spark_conf={"spark.pyspark.python": "/usr/bin/python3.11"})
    assert executor_python(conf, env) == "/usr/bin/python3.11"


def test_defaults_when_cluster_then_no_driver_paths_or_warm_daemon_and_ui_off(archive):
    conf = _defaults(EngineConfig(master=STANDALONE, secure=False, python_env_archive=archive))
    assert conf["spark.archives"] == f"{archive}#environment"
    assert conf["spark.pyspark.python"] == "./environment/bin/python"
    assert conf["spark.ui.enabled"] == "false"
    for key in ("spark.executorEnv.PYTHONPATH", "spark.python.daemon.module", "spark.driver.host"):
        assert key not in conf


def test_defaults_when_local_or_loopback_master_then_driver_python_and_loopback():
    local = _defaults(EngineConfig(master="local[2]"))
    assert local["spark.pyspark.python"] == sys.executable and local["spark.driver.host"] == "127.0.0.1"
    assert "spark.authenticate" not in local  # secure is off in local mode by default
    loopback = _defaults(EngineConfig(master="spark://127.0.0.1:7077", secure=False))
    assert loopback["spark.driver.bindAddress"] == "127.0.0.1" and loopback["spark.pyspark.python"] == "python3"


def test_python_env_archive_when_missing_wrong_kind_clashing_or_local_then_refused(tmp_path, archive):
    with pytest.raises(DagValidationError, match=r"no file .*nope\.tar\.gz.*jetspark pack-env"):
        archive_conf(EngineConfig(master=STANDALONE, python_env_archive=str(tmp_path / "nope.tar.gz")))
    with pytest.raises(DagValidationError, match=r"env\.rar.*not an archive Spark unpacks"):
        archive_conf(EngineConfig(master=STANDALONE, python_env_archive="env.rar"))
    clash = EngineConfig(master=STANDALONE, python_env_archive=archive,
                         spark_conf={"spark.pyspark.python": "/usr/bin/python3"})
    with pytest.raises(DagValidationError, match="spark.pyspark.python"):
        archive_conf(clash)
    with pytest.raises(DagValidationError, match="python_env_archive is for cluster masters"):
        _defaults(EngineConfig(master="local[2]", python_env_archive=archive))
    remote = EngineConfig(master="yarn", python_env_archive="hdfs:///envs/env.tar.gz")
    assert archive_conf(remote) == {"spark.archives": "hdfs:///envs/env.tar.gz#environment"}


# --------------------------------------------------------------------------------------------- secure


def test_secure_when_standalone_without_secret_then_refused_naming_the_fix():
    with pytest.raises(DagValidationError, match=r"spark://head:7077.*spark\.authenticate\.secret.*"
                                                 r"JETSPARK_CLUSTER_SECRET.*secure=False"):
        security_conf(EngineConfig(master=STANDALONE), {})


def test_secure_when_secret_in_env_or_conf_then_authentication_and_encryption_on():
    conf = security_conf(EngineConfig(master=STANDALONE), {SECRET_ENV: "s3cret"})
    assert conf == {"spark.authenticate": "true", "spark.network.crypto.enabled": "true",
                    "spark.authenticate.secret": "s3cret"}
    own = EngineConfig(master=STANDALONE, spark_conf={"spark.authenticate.secret": "mine"})
    assert "spark.authenticate.secret" not in security_conf(own, {SECRET_ENV: "s3cret"})  # spark_conf's wins
    assert security_conf(EngineConfig(master="k8s://https://api:6443"), {}) == {
        "spark.authenticate": "true", "spark.network.crypto.enabled": "true"}  # Kubernetes makes the secret


def test_secure_when_local_modes_then_off_unless_asked_and_local_cluster_gets_a_generated_secret():
    assert security_conf(EngineConfig(master="local[2]"), {}) == {}
    assert security_conf(EngineConfig(master="local-cluster[2,1,1024]"), {}) == {}
    first = security_conf(EngineConfig(master="local-cluster[2,1,1024]", secure=True), {})
    second = security_conf(EngineConfig(master="local-cluster[2,1,1024]", secure=True), {})
    assert len(first["spark.authenticate.secret"]) == 64
    assert first["spark.authenticate.secret"] != second["spark.authenticate.secret"]
    assert security_conf(EngineConfig(master=STANDALONE, secure=False), {}) == {}


# --------------------------------------------------------------------------------------------- master


def test_engine_when_master_url_nobody_answers_then_clear_error_within_seconds():
    port = free_base_port(1)
    url = f"spark://127.0.0.1:{port}"
    started = time.monotonic()
    with pytest.raises(DagError, match=rf"Spark master {url} does not answer .*127\.0\.0\.1:{port}.*refused"):
        Engine(EngineConfig(master=url))
    assert time.monotonic() - started < 30  # probed before a JVM starts; Spark itself would retry for minutes


def test_check_master_answers_when_one_of_several_masters_listens_then_fine():
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        check_master_answers(f"spark://127.0.0.1:{free_base_port(1)},127.0.0.1:{port}", timeout=2)
    with pytest.raises(DagValidationError, match="not host:port"):
        check_master_answers("spark://head")


# --------------------------------------------------------------------------------------------- errors


def test_explain_python_failure_when_module_missing_then_names_module_python_and_fix():
    text = ('org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n'
            '  File "/w/pyspark.zip/pyspark/serializers.py", line 1, in loads\n'
            "ModuleNotFoundError: No module named 'pydot.core'\n")
    error = summarize_spark_error(RuntimeError(text), "wc", python="/opt/env/bin/python")
    assert "(/opt/env/bin/python) cannot import module 'pydot.core'" in str(error)
    assert "install 'pydot'" in str(error) and "python_env_archive" in str(error)


def test_explain_python_failure_when_python_cannot_start_then_names_it():
    text = ('java.io.IOException: Cannot run program "python3.9": error=2, No such file or directory\n'
            '\tat java.base/java.lang.ProcessBuilder.start')
    message = explain_python_failure(text, "python3.9")
    assert message.startswith("the executors' Python 'python3.9' cannot start (No such file or directory)")
    assert explain_python_failure("java.lang.OutOfMemoryError: Java heap space", "python3") is None


class _NoExecutors:
    """Just what ``detect_members`` reads of a SparkContext whose master never gives it an executor."""

    def __init__(self):
        status = type("Status", (), {"size": lambda self: 1})()  # the driver only
        scala_sc = type("ScalaContext", (), {"getExecutorMemoryStatus": lambda self: status,
                                             "isStopped": lambda self: False})()
        self._jsc = type("JavaContext", (), {"sc": lambda self: scala_sc})()

    def getConf(self):  # noqa: N802 - pyspark's name
        return {"spark.driver.host": "10.0.0.5"}


def test_detect_members_when_standalone_master_gives_no_executor_then_error_names_master_and_causes():
    from dag.runtime.common.session import detect_members

    started = time.monotonic()
    with pytest.raises(DagError, match=r"no executor of the Spark master spark://head:7077 registered within 0 s"
                                       r".*spark\.authenticate\.secret.*10\.0\.0\.5"):
        detect_members(_NoExecutors(), STANDALONE, wait_s=0.3)
    assert time.monotonic() - started < 30  # wait_s bounds it (generous for a loaded machine)


def test_cluster_module_docstring_examples_hold():
    import doctest

    import dag.runtime.common.cluster

    result = doctest.testmod(dag.runtime.common.cluster)
    assert result.failed == 0 and result.attempted > 0


def test_engine_config_when_printed_then_secret_settings_masked() -> None:
    config = EngineConfig(spark_conf={"spark.authenticate.secret": "s3cr3t", "spark.ssl.keyPassword": "pw1",
                                      "spark.ui.enabled": "false"})
    assert "s3cr3t" not in repr(config) + str(config) and "pw1" not in repr(config) + str(config)
    assert "spark.ui.enabled': 'false'" in repr(config)
    assert config.spark_conf["spark.authenticate.secret"] == "s3cr3t"  # the value itself is kept
