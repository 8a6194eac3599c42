"""Running on a real cluster: executors on other hosts, where nothing of jetspark is installed.

On a master that is not local (``spark://``, ``yarn``, ``k8s://``, ...) the executors' Python workers run on
other machines. Four things make a job work there, and this module holds them (``session.py`` applies them
when it starts a session, ``engine.py`` when it borrows one):

1. **jetspark ships itself.** :func:`ship_packages` zips jetspark's own packages (``dag``, ``edges``,
   ``processors``, ``pipeline``, ``connectors``, ``jetspark_cli``) into one file named after the hash of its
   content (built once, kept in the temporary directory) and adds it to the SparkContext (``addPyFile``):
   Spark puts it on every Python worker's ``sys.path``. The executors then need only a Python of the
   driver's minor version with jetspark's runtime dependencies (pydantic, networkx, graphviz); pyspark itself
   comes with Spark on each node. Functions and classes of the user's own modules keep travelling by value
   (cloudpickle's ``register_pickle_by_value``, ``session.register_user_modules``).
2. **The executors' Python** (:func:`executor_python`): ``spark.pyspark.python`` of ``spark_conf``, else the
   packed environment of ``EngineConfig.python_env_archive`` (``spark.archives=PATH#environment`` and
   ``./environment/bin/python``: PySpark's documented convention for venv-pack and conda-pack archives,
   ``jetspark pack-env``), else ``PYSPARK_PYTHON``, else ``python3`` on the executors' PATH. The driver's
   own ``sys.executable`` is used only where the executors share its machine (local modes).
3. **Security** (:func:`security_conf`): ``EngineConfig.secure`` (default on a cluster) turns on Spark's RPC
   authentication and encryption. YARN and Kubernetes (and Spark in local mode) generate and distribute a
   secret per application themselves, and for ``local-cluster`` jetspark generates one; a standalone master
   only accepts applications that present the secret it was started with (it drops anyone else's
   connection), so there the secret comes from ``spark.authenticate.secret`` in ``spark_conf`` or the
   ``JETSPARK_CLUSTER_SECRET`` environment variable (which ``scripts/cluster.sh`` reads too), and without
   one the engine refuses to start, saying so. The Spark UI stays off unless ``spark_conf`` turns it on.
4. **A master that answers** (:func:`check_master_answers`): a ``spark://`` master is probed with a TCP
   connection (bounded) before a JVM starts, so a wrong URL fails in seconds naming it instead of Spark
   retrying its registration for a minute and then hanging the job.

:func:`explain_python_failure` turns Spark's error text about the executors' Python (a missing module, an
interpreter that cannot start) into a sentence naming the Python and the fix; it only searches the text.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import secrets
import socket
import sys
import tempfile
import zipfile
from typing import Any

from jetspark_base.errors import DagError, DagValidationError

__all__ = ["SHIPPED_PACKAGES", "SECRET_ENV", "package_zip", "ship_packages", "executor_python", "archive_conf",
           "security_conf", "master_addresses", "check_master_answers", "explain_python_failure", "is_local_master",
           "on_this_machine"]

SHIPPED_PACKAGES = ("dag", "edges", "processors", "pipeline", "connectors", "jetspark_cli", "jetspark_base")
"""jetspark's top-level packages, shipped to the executors of a cluster as one zip."""

SECRET_ENV = "JETSPARK_CLUSTER_SECRET"
"""Environment variable holding a standalone cluster's shared secret (read by the engine and cluster.sh)."""

ENVIRONMENT_ALIAS = "environment"
"""The directory a packed environment is unpacked into on each executor (``spark.archives`` ``#alias``)."""

_USER_SECRET_KEYS = ("spark.authenticate.secret", "spark.authenticate.secret.file",
                     "spark.authenticate.secret.driver.file")
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")


def is_local_master(master: str) -> bool:
    """Whether ``master`` runs everything in one JVM (``local``, ``local[4]``, ``local[*]``, ``local[2,3]``)."""
    return master == "local" or master.startswith("local[")


def on_this_machine(master: str) -> bool:
    """Whether every process of ``master`` runs on this machine (local modes and ``local-cluster``)."""
    return is_local_master(master) or master.startswith("local-cluster[")


def _package_files() -> list[tuple[str, str]]:
    """(path on disk, name in the zip) of every file of :data:`SHIPPED_PACKAGES`, sorted (no caches)."""
    files = []
    for package in SHIPPED_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = list(spec.submodule_search_locations)[0]
        base = os.path.dirname(root)
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                if name.endswith((".py", ".typed", ".json", ".txt")):
                    path = os.path.join(folder, name)
                    files.append((path, os.path.relpath(path, base)))
    return files


def package_zip(directory: str | None = None) -> str:
    """The path of a zip of jetspark's packages as they are now on this machine, named after a hash of its
    content and built only when no such file exists yet (written to a temporary name, then renamed).

    >>> os.path.basename(package_zip()).startswith("jetspark-packages-")
    True
    """
    files = _package_files()
    digest = hashlib.sha256()
    contents = []
    for path, arcname in files:
        with open(path, "rb") as f:
            data = f.read()
        digest.update(arcname.encode() + b"\0" + hashlib.sha256(data).digest())
        contents.append((arcname, data))
    directory = directory or tempfile.gettempdir()
    target = os.path.join(directory, f"jetspark-packages-{digest.hexdigest()[:16]}.zip")
    if not os.path.exists(target):
        fd, tmp = tempfile.mkstemp(dir=directory, prefix="jetspark-packages-", suffix=".tmp")
        with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive:
            for arcname, data in contents:
                info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                archive.writestr(info, data, zipfile.ZIP_DEFLATED)
        os.replace(tmp, target)
    return target


def ship_packages(sc: Any) -> str:
    """Add :func:`package_zip` to the SparkContext ``sc`` unless it already has it; returns the zip's path.

    Spark puts the zip on the ``sys.path`` of every Python worker of the application. ``addPyFile`` also puts
    it on the driver's ``sys.path``; it is taken off again, so the driver keeps importing jetspark from where
    it is installed.
    """
    path = package_zip()
    name = os.path.basename(path)
    if name not in getattr(sc, "_python_includes", []):
        before = list(sys.path)
        sc.addPyFile(path)
        sys.path[:] = [p for p in sys.path if p in before or os.path.basename(p) != name]
    return path


def executor_python(config: Any, environ: dict[str, str] | None = None) -> str:
    """The executors' Python for ``config`` on a cluster master (see the module docstring for the order).

    >>> from dag.config import EngineConfig
    >>> executor_python(EngineConfig(master="spark://h:7077"), {})
    'python3'
    >>> executor_python(EngineConfig(master="yarn", python_env_archive="env.tar.gz"), {})
    './environment/bin/python'
    """
    environ = os.environ if environ is None else environ
    if "spark.pyspark.python" in config.spark_conf:
        return config.spark_conf["spark.pyspark.python"]
    if config.python_env_archive:
        return f"./{ENVIRONMENT_ALIAS}/bin/python"
    return environ.get("PYSPARK_PYTHON") or "python3"


def _is_url(path: str) -> bool:
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path) is not None


def archive_conf(config: Any) -> dict[str, str]:
    """``spark.archives`` for ``EngineConfig.python_env_archive`` (empty without one); checks the archive.

    A local path must name an existing file with a suffix Spark unpacks; a URL (``hdfs://``, ``s3a://``,
    ``https://``) is passed on as it is. An archive given together with ``spark_conf['spark.pyspark.python']``
    or ``spark_conf['spark.archives']`` is refused: the two would disagree on the executors' Python.
    """
    archive = config.python_env_archive
    if not archive:
        return {}
    clash = [k for k in ("spark.pyspark.python", "spark.archives") if k in config.spark_conf]
    if clash:
        raise DagValidationError(
            f"EngineConfig.python_env_archive={archive!r} sets the executors' Python itself, but spark_conf also "
            f"sets {', '.join(clash)}: remove one of them")
    if not archive.lower().endswith(_ARCHIVE_SUFFIXES):
        raise DagValidationError(
            f"EngineConfig.python_env_archive={archive!r} is not an archive Spark unpacks (expected one of "
            f"{', '.join(_ARCHIVE_SUFFIXES)}); make one with 'jetspark pack-env OUT.tar.gz'")
    if not _is_url(archive):
        if not os.path.isfile(archive):
            raise DagValidationError(
                f"EngineConfig.python_env_archive: no file {archive!r} (looked in {os.getcwd()}); make one with "
                "'jetspark pack-env OUT.tar.gz'")
        archive = os.path.abspath(archive)
    return {"spark.archives": f"{archive}#{ENVIRONMENT_ALIAS}"}


def security_conf(config: Any, environ: dict[str, str] | None = None) -> dict[str, str]:
    """Spark settings of ``EngineConfig.secure`` (see the module docstring); raises ``DagValidationError`` when
    a cluster manager needs the application to bring a secret and none is set.

    >>> from dag.config import EngineConfig
    >>> sorted(security_conf(EngineConfig(master="yarn"), {}).items())
    [('spark.authenticate', 'true'), ('spark.network.crypto.enabled', 'true')]
    >>> security_conf(EngineConfig(master="local[2]"), {})
    {}
    """

    environ = os.environ if environ is None else environ
    master = config.master
    if not (config.secure if config.secure is not None else not on_this_machine(master)):
        return {}
    conf = {"spark.authenticate": "true", "spark.network.crypto.enabled": "true"}
    if any(k in config.spark_conf for k in _USER_SECRET_KEYS):
        return conf
    if environ.get(SECRET_ENV):
        conf["spark.authenticate.secret"] = environ[SECRET_ENV]
    elif master.startswith("local-cluster["):  # its master and workers live in the driver's JVM: any secret
        conf["spark.authenticate.secret"] = secrets.token_hex(32)
    elif not (is_local_master(master) or master == "yarn" or master.startswith("k8s://")):
        raise DagValidationError(
            f"EngineConfig.secure is on (the default on a cluster) but no secret is set for master {master!r}: a "
            "standalone master only accepts applications holding the secret it was started with. Pass it as "
            f"spark_conf={{'spark.authenticate.secret': ...}} or in the {SECRET_ENV} environment variable "
            "(scripts/cluster.sh reads the same variable); or EngineConfig(secure=False) for a cluster that runs "
            "without authentication (anyone reaching its ports can then run code on it)")
    return conf  # else Spark generates the secret itself (local modes, YARN, Kubernetes)


def master_addresses(master: str) -> list[tuple[str, int]]:
    """(host, port) of each master of a ``spark://h1:p1,h2:p2`` URL; [] for other masters."""
    if not master.startswith("spark://"):
        return []
    found = []
    for part in master[len("spark://"):].split(","):
        host, _, port = part.strip().rpartition(":")
        if not host or not port.isdigit():
            raise DagValidationError(f"master {master!r}: {part!r} is not host:port (spark://host:7077)")
        found.append((host.strip("[]"), int(port)))
    return found


def check_master_answers(master: str, timeout: float = 5.0) -> None:
    """Raise ``DagError`` naming ``master`` when no master of a ``spark://`` URL accepts a TCP connection
    within ``timeout`` s (other masters are not checked)."""
    problems = []
    for host, port in master_addresses(master):
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            return
        except OSError as exc:
            problems.append(f"{host}:{port}: {exc.strerror or exc}")
    if problems:
        raise DagError(
            f"the Spark master {master} does not answer ({'; '.join(problems)}). Check the URL and that the "
            "master runs (for scripts/cluster.sh: 'scripts/cluster.sh status'), and that this machine can reach "
            "that port")


_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_CANNOT_RUN = re.compile(r'Cannot run program "([^"]+)"[^\n]*?error=\d+, ([^\n]+)')


def explain_python_failure(text: str, python: str | None) -> str | None:
    """A sentence for a failure of the executors' Python found in Spark's error ``text``, naming ``python``
    (the interpreter Spark ran) and the fix; None when the text shows no such failure.

    >>> explain_python_failure("ModuleNotFoundError: No module named 'pydot'", "python3").split(":")[0]
    "the executors' Python (python3) cannot import module 'pydot'"
    """
    missing = _MISSING_MODULE.search(text)
    if missing:
        module = missing.group(1)
        return (f"the executors' Python ({python or 'unknown'}) cannot import module '{module}': install "
                f"'{module.split('.')[0]}' into that Python on every worker, or run the executors in a packed "
                "environment that has it: EngineConfig(python_env_archive=...) with an archive made by "
                "'jetspark pack-env OUT.tar.gz'")
    cannot = _CANNOT_RUN.search(text)
    if cannot:
        return (f"the executors' Python '{cannot.group(1)}' cannot start ({cannot.group(2).strip()}): install "
                "Python there, point spark.pyspark.python (EngineConfig.spark_conf) or PYSPARK_PYTHON at an "
                "existing one, or ship one with EngineConfig(python_env_archive=...)")
    return None
