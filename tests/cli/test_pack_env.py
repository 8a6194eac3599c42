"""``jetspark pack-env``: a venv-pack archive of a virtual environment, for EngineConfig.python_env_archive
(``jetspark run --python-env-archive``)."""

from __future__ import annotations

import subprocess
import sys
import tarfile

import pytest

from jetspark_cli.main import main


@pytest.fixture(scope="module")
def small_venv(tmp_path_factory):
    """A virtualenv without pip holding one module, and the hook an editable install of jetspark leaves."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "mymod.py").write_text("X = 1\n")
    (site / "__editable__.jetspark-0.1.0.pth").write_text("import __editable___jetspark_0_1_0_finder\n")
    (site / "__editable___jetspark_0_1_0_finder.py").write_text("MAPPING = {'dag': '/checkout/dag'}\n")
    return venv


def test_pack_env_when_venv_given_then_archive_holds_it_without_jetspark_editable_hooks(small_venv, tmp_path, capsys):
    out = tmp_path / "env.tar.gz"
    assert main(["pack-env", str(out), "--venv", str(small_venv)]) == 0
    names = tarfile.open(out).getnames()
    assert any(n.endswith("site-packages/mymod.py") for n in names)
    assert "bin/python" in names and "pyvenv.cfg" in names
    assert not any("__editable__" in n for n in names), [n for n in names if "editable" in n]
    assert f"python_env_archive='{out}'" in capsys.readouterr().err


def test_pack_env_when_output_exists_or_bad_suffix_or_not_a_venv_then_says_so(small_venv, tmp_path, capsys):
    out = tmp_path / "env.tar.gz"
    out.write_text("old")
    assert main(["pack-env", str(out), "--venv", str(small_venv)]) == 1
    assert "exists; remove it or pass --force" in capsys.readouterr().err
    assert main(["pack-env", str(out), "--venv", str(small_venv), "--force"]) == 0
    assert tarfile.is_tarfile(out)
    assert main(["pack-env", str(tmp_path / "env.rar"), "--venv", str(small_venv)]) == 1
    assert "must end in .tar.gz, .tgz or .zip" in capsys.readouterr().err
    assert main(["pack-env", str(tmp_path / "x.tar.gz"), "--venv", str(tmp_path)]) == 1
    assert "is not a virtual environment (no pyvenv.cfg)" in capsys.readouterr().err
    assert main(["pack-env", str(tmp_path / "x.tar.gz"), "extra"]) == 2


def test_run_when_python_env_archive_on_local_master_then_refused_before_spark_starts(tmp_path):
    archive = tmp_path / "env.tar.gz"
    archive.write_bytes(b"x")
    proc = subprocess.run([sys.executable, "-m", "jetspark_cli.main", "run", "examples/word_count.py",
                           "--master", "local[1]", "--python-env-archive", str(archive)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "python_env_archive is for cluster masters; master 'local[1]'" in proc.stderr, proc.stderr
