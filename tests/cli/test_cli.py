"""The ``jetspark`` command line: targets, options, dot/explain/render, exit codes and messages.

All but the last test call ``main(argv)`` in-process and never start Spark; the last runs the real console
script on the bundled sample in a subprocess (its own JVM).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jetspark_cli.main import main
from jetspark_cli.target import TargetError, resolve

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "examples")]
WORD_COUNT = str(REPO / "examples" / "word_count.py")
TF_IDF = str(REPO / "examples" / "tf_idf.py")


@pytest.fixture()
def job_file(tmp_path: Path) -> Path:
    """A small target file: ``job`` (with options), ``bare`` (a DAG), ``cyclic``, ``broken`` and ``not_a_dag``."""
    path = tmp_path / "cli_target_jobs.py"
    path.write_text(textwrap.dedent('''
        from dag import DAG
        from edges import between
        from processors import noop_p
        from jetspark_cli.spec import JobSpec

        def _dag(width):
            dag = DAG()
            source = dag.new_vertex("source", noop_p())
            sink = dag.new_vertex("sink", noop_p(), local_parallelism=width)
            return dag.edge(between(source, sink))

        def job(width: int = 1, label: str = "x", loud: bool = False):
            """A job with three options."""
            print(f"job width={width!r} label={label!r} loud={loud!r}")
            return JobSpec(_dag(width), name="tiny")

        def bare():
            return _dag(2)

        def cyclic():
            dag = DAG()
            a = dag.new_vertex("a", noop_p())
            b = dag.new_vertex("b", noop_p())
            return dag.edge(between(a, b)).edge(between(b, a))

        def broken():
            raise RuntimeError("the books are gone")

        def not_a_dag():
            return 42

        def a_pipeline():
            from pipeline import Pipeline, Sinks, Sources
            p = Pipeline.create()
            p.read_from(Sources.list("in")).map(str.upper).write_to(Sinks.list("out"))
            return p

        def dangling_pipeline():
            from pipeline import Pipeline, Sources
            p = Pipeline.create()
            p.read_from(Sources.list("in")).map(str.upper)
            return p

        def pipeline_spec():
            return JobSpec(a_pipeline(), name="pipe")
    '''))
    return path


def test_cli_when_dot_of_bare_dag_then_prints_jet_dot(job_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dot", f"{job_file}:bare"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("digraph DAG {") and '"source" -> "sink"' in out


def test_cli_when_function_options_given_then_converted_by_default_type(
    job_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dot", str(job_file), "--width", "3", "--label=hello", "--loud"]) == 0
    out = capsys.readouterr().out
    assert "job width=3 label='hello' loud=True" in out
    assert "localParallelism=3" in out


def test_cli_when_negated_flag_then_false(job_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dot", str(job_file), "--no-loud"]) == 0
    assert "loud=False" in capsys.readouterr().out


def test_cli_when_unknown_option_then_exit_1_listing_options(job_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dot", str(job_file), "--colour", "red"]) == 1
    err = capsys.readouterr().err
    assert "no parameter 'colour'" in err and "--width INT" in err and "Traceback" not in err


def test_cli_when_option_value_has_wrong_type_then_exit_1(job_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dot", str(job_file), "--width", "wide"]) == 1
    assert "--width" in capsys.readouterr().err


def test_cli_when_file_missing_then_exit_1_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dot", str(tmp_path / "nope.py")]) == 1
    err = capsys.readouterr().err
    assert "nope.py" in err and "MODULE[:FUNCTION]" in err and "Traceback" not in err


def test_cli_when_module_missing_then_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "no_such_module_xyz:job"]) == 1
    assert "no module named 'no_such_module_xyz'" in capsys.readouterr().err


def test_cli_when_function_missing_then_lists_functions(job_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dot", f"{job_file}:nope"]) == 1
    err = capsys.readouterr().err
    assert "has no function 'nope'" in err and "bare" in err and "cyclic" in err


def test_cli_when_function_raises_then_one_paragraph_without_traceback(
    job_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["render", f"{job_file}:broken", "-o", "x.svg"]) == 1
    err = capsys.readouterr().err
    assert "broken() of" in err and "RuntimeError: the books are gone" in err and "Traceback" not in err


def test_cli_when_traceback_flag_then_traceback_printed(job_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--traceback", "dot", f"{job_file}:broken"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_cli_when_function_returns_no_dag_then_exit_1(job_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dot", f"{job_file}:not_a_dag"]) == 1
    assert "returned int, expected a DAG, a pipeline or a jetspark_cli.spec.JobSpec" in capsys.readouterr().err


def test_cli_when_function_returns_pipeline_then_dot_of_its_dag(job_file: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dot", f"{job_file}:a_pipeline"]) == 0
    out = capsys.readouterr().out
    assert '"listSource(in)" -> "map"' in out and '"map" -> "listSink(out)"' in out
    assert main(["dot", f"{job_file}:pipeline_spec"]) == 0
    assert capsys.readouterr().out == out


def test_cli_when_pipeline_has_dangling_stage_then_exit_1_naming_it(job_file: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", f"{job_file}:dangling_pipeline"]) == 1
    assert "nothing attached to them: [map]" in capsys.readouterr().err


def test_cli_when_dag_has_cycle_then_exit_1_naming_cycle(job_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", f"{job_file}:cyclic"]) == 1
    err = capsys.readouterr().err
    assert "DAG contains a cycle" in err and "Traceback" not in err


def test_cli_when_no_target_then_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dot"]) == 2
    assert "needs a TARGET" in capsys.readouterr().err


def test_cli_when_unknown_command_then_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["draw", "x.py"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_cli_when_render_without_output_then_exit_2(job_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", f"{job_file}:bare"]) == 2
    assert "-o FILE" in capsys.readouterr().err


def test_cli_when_help_then_commands_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("run", "dot", "explain", "render"):
        assert command in out
    assert "MODULE[:FUNCTION]" in out


def test_cli_when_help_after_target_then_function_options_listed(
    job_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(job_file), "--help"]) == 0
    out = capsys.readouterr().out
    assert "--master" in out and "--width INT" in out and "(default: 1)" in out and "A job with three options." in out


def test_target_when_module_name_then_imported(capsys: pytest.CaptureFixture[str]) -> None:
    target = resolve("jetspark_cli.spec:JobSpec")
    assert target.function_name == "JobSpec"


def test_target_when_required_parameter_missing_then_error(tmp_path: Path) -> None:
    path = tmp_path / "cli_target_required.py"
    path.write_text("def job(books):\n    return books\n")
    with pytest.raises(TargetError, match="needs --books"):
        resolve(str(path)).call([])
    with pytest.raises(TargetError, match="returned str"):
        resolve(str(path)).call(["some/dir"])


# ------------------------------------------------------------------------------------------ the examples


def test_cli_when_dot_of_word_count_then_equals_model_dot(capsys: pytest.CaptureFixture[str]) -> None:
    import word_count

    assert main(["dot", WORD_COUNT]) == 0
    assert capsys.readouterr().out == word_count.build_dag().to_dot() + "\n"


def test_cli_when_render_word_count_then_svg_written(tmp_path: Path) -> None:
    output = tmp_path / "pictures" / "word_count.svg"
    assert main(["render", WORD_COUNT, "-o", str(output)]) == 0
    svg = output.read_text()
    assert "<svg" in svg and "tokenize" in svg and "accumulate" in svg


def test_cli_when_render_plan_png_then_png_written(tmp_path: Path) -> None:
    output = tmp_path / "plan.png"
    assert main(["render", TF_IDF, "--plan", "-o", str(output), "--master", "local[2]"]) == 0
    assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_when_explain_tf_idf_then_every_vertex_shown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", TF_IDF, "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    for vertex in ("stopword-source", "doc-source", "doc-count", "tf", "tf-idf", "sink"):
        assert vertex in out


def test_cli_when_explain_local_master_then_parallelism_from_master(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", WORD_COUNT, "--master", "local[5]"]) == 0
    assert "default local parallelism=5" in capsys.readouterr().out
    assert main(["explain", WORD_COUNT, "--master", "local-cluster[3,2,1024]"]) == 0
    assert "members=3, default local parallelism=2" in capsys.readouterr().out


def test_cli_when_run_with_missing_books_then_fails_before_spark(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", WORD_COUNT, "--books", "/no/such/books"]) == 1
    err = capsys.readouterr().err
    assert "--books /no/such/books: no such directory" in err and "Traceback" not in err


@pytest.mark.spark
@pytest.mark.slow
def test_cli_when_run_word_count_on_sample_then_top_words_printed() -> None:
    jetspark = Path(sys.executable).parent / "jetspark"
    done = subprocess.run(
        [str(jetspark), "run", WORD_COUNT, "--master", "local[2]", "--top", "3"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )
    from tests.support import reference

    counts = reference.word_counts(REPO / "examples" / "data" / "books")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{len(counts):,} distinct words" in done.stdout
    (top_word, top_count), = counts.most_common(1)
    assert f"{top_count:>12,}  {top_word}" in done.stdout.splitlines()
    assert "job 'word-count' completed" in done.stderr


def test_cli_when_run_invalid_dag_then_fails_before_spark_starts(
    job_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dag.runtime import engine as engines

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark was started before the DAG was validated")

    monkeypatch.setattr(engines.Engine, "__init__", no_spark)
    assert main(["run", f"{job_file}:cyclic"]) == 1
    err = capsys.readouterr().err
    assert "DAG contains a cycle" in err and "Spark was started" not in err


def test_cli_when_run_unpicklable_function_then_fails_before_spark_naming_vertex(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dag.runtime import engine as engines

    monkeypatch.setattr(engines.Engine, "__init__", lambda *a, **k: pytest.fail("Spark was started"))
    path = tmp_path / "cli_locked_job.py"
    path.write_text(textwrap.dedent('''
        import threading
        from dag import DAG
        from processors import map_p

        def job():
            guard = threading.Lock()
            def guarded(x):
                with guard:
                    return x
            dag = DAG()
            dag.new_vertex("guarded", map_p(guarded))
            return dag
    '''))
    assert main(["run", str(path)]) == 1
    err = capsys.readouterr().err
    assert "vertex 'guarded'" in err and "captured variable guard" in err and "_thread.lock" in err
