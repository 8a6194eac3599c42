"""The ``jetspark`` command: run, draw and explain Jet-style DAGs.

::

    jetspark run     TARGET [--master URL] [--members N] [--parallelism L] [--progress] [--seconds N]
                     [--python-env-archive ARCHIVE] [--measured FILE] [--ui] [--ui-port N] [FUNCTION OPTIONS...]
    jetspark dot     TARGET [--plan] [-o FILE] [FUNCTION OPTIONS...]
    jetspark explain TARGET [--master URL] [--members N] [--parallelism L] [FUNCTION OPTIONS...]
    jetspark render  TARGET -o FILE [--format FMT] [--plan] [FUNCTION OPTIONS...]
    jetspark pack-env OUT.tar.gz [--venv DIR] [--force]

``TARGET`` is ``MODULE[:FUNCTION]`` or ``PATH.py[:FUNCTION]``; ``FUNCTION`` defaults to ``job`` and returns a
``DAG`` or a :class:`jetspark_cli.spec.JobSpec` (see :mod:`jetspark_cli.target` for how options reach it).
``dot``, ``explain`` and ``render`` never run the job; ``explain`` plans it without starting Spark when the
master is local. Exit status: 0 on success, 1 when the DAG, the target or the job fails, 2 for a bad command
line, 130 when interrupted. Errors are one paragraph on standard error; ``--traceback`` adds Python's traceback.

A stream job (a DAG with a stream source) runs until Ctrl-C or ``--seconds N``, printing its live results and a
status line (:mod:`jetspark_cli.streaming`); ``explain`` shows its pipelined plan (tasks, links). ``run --ui``
serves the live web page of the job and Prometheus' ``/metrics`` (``dag/runtime/webui``) while it runs and prints
the page's address (with its access token) on standard error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from jetspark_cli.target import DEFAULT_FUNCTION, Target, TargetError, parameter_help, resolve

__all__ = ["main"]

_EPILOG = f"""\
TARGET is MODULE[:FUNCTION] or PATH.py[:FUNCTION]; FUNCTION defaults to `{DEFAULT_FUNCTION}`. It returns a DAG,
or a jetspark_cli.spec.JobSpec(dag, prepare=fn(engine), report=fn(engine, job)). Options after TARGET that
the command does not know go to FUNCTION: --books DIR calls {DEFAULT_FUNCTION}(books="DIR"); a bool parameter
is a flag. `jetspark COMMAND TARGET --help` lists the function's options. Every example under examples/
defines job(), so no example needs :FUNCTION.

examples:
  jetspark run examples/word_count.py --top 20
  jetspark run examples/tf_idf.py --books ../shared/data/books --stopwords ../shared/data/stopwords.txt --search "black suit"
  jetspark render examples/word_count.py -o out/word_count.svg
  jetspark explain examples/tf_idf.py --master local[4]
  jetspark run examples/trade_monitor.py --seconds 20 --measured out/trade_monitor.svg
  jetspark run examples/trade_monitor.py --ui
  jetspark explain examples/trade_monitor.py
"""


class UsageError(Exception):
    """A bad command line (exit status 2)."""


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(
        prog="jetspark",
        allow_abbrev=False,
        description="Run, draw and explain Hazelcast-Jet-style DAGs on Apache Spark.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--traceback", action="store_true", help="on failure, also print Python's traceback")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    subs: dict[str, argparse.ArgumentParser] = {}

    def command(name: str, help_: str, usage: str) -> argparse.ArgumentParser:
        sub = subs[name] = commands.add_parser(
            name, help=help_, description=help_, epilog=_EPILOG, add_help=False, allow_abbrev=False,
            usage=f"jetspark {name} TARGET {usage}[FUNCTION OPTIONS...]",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument("target", metavar="TARGET", nargs="?", help="MODULE[:FUNCTION] or PATH.py[:FUNCTION]")
        sub.add_argument("-h", "--help", action="store_true", help="show this help (and the function's options)")
        return sub

    def engine_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--master", default="local[*]", metavar="URL", help="Spark master URL (default: local[*])")
        sub.add_argument("--members", type=int, metavar="N", help="logical cluster members (default: 1 locally, the executors "
                                                     "on a cluster)")
        sub.add_argument("--parallelism", type=int, metavar="L",
                         help="default local parallelism of vertices (default: Spark's parallelism / members)")

    run = command("run", "Run the job: prepare, run the DAG on Spark, report.",
                  "[--master URL] [--members N] [--parallelism L] [--progress] [--name NAME] [--seconds N] "
                  "[--guarantee G] [--python-env-archive ARCHIVE] [--measured FILE] [--ui] [--ui-port N] ")
    engine_options(run)
    run.add_argument("--progress", action="store_true", help="show a progress line per Spark stage")
    run.add_argument("--name", help="job name (default: the JobSpec's name or the function's)")
    run.add_argument("--seconds", type=float, metavar="N",
                     help="cancel the job after N seconds (a stream job otherwise runs until Ctrl-C)")
    run.add_argument("--guarantee", choices=["none", "at_least_once", "exactly_once"], default="none",
                     help="processing guarantee of a pipelined job: snapshots and restarts (default: none)")
    run.add_argument("--python-env-archive", metavar="ARCHIVE",
                     help="on a cluster: run the executors' Python from this packed environment (jetspark pack-env)")
    run.add_argument("--measured", metavar="FILE",
                     help="write the DAG with measured items and rates on its edges (DOT, or .svg/.png/.pdf)")
    run.add_argument("--ui", action="store_true",
                     help="serve a live web page of the job (and Prometheus' /metrics) and print its address")
    run.add_argument("--ui-port", type=int, default=0, metavar="N",
                     help="the web page's port with --ui (default: any free port)")

    dot = command("dot", "Print the DAG in Jet's DOT format (or the physical plan's with --plan).",
                  "[--plan] [-o FILE] [--master URL] [--members N] [--parallelism L] ")
    dot.add_argument("--plan", action="store_true", help="the Spark plan's graph instead of the DAG")
    dot.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    engine_options(dot)

    explain = command("explain", "Print the Spark plan: stages, vertices with their parallelism, edge lowerings.",
                      "[--master URL] [--members N] [--parallelism L] ")
    engine_options(explain)

    render = command("render", "Draw the DAG (or with --plan the Spark plan) as a picture with graphviz.",
                     "-o FILE [--format FMT] [--plan] [--master URL] [--members N] [--parallelism L] ")
    render.add_argument("-o", "--output", metavar="FILE", help="picture to write; the format follows the suffix")
    render.add_argument("--format", help="graphviz format (svg, png, pdf, ...; default: FILE's suffix or svg)")
    render.add_argument("--plan", action="store_true", help="draw the Spark plan instead of the DAG")
    engine_options(render)

    pack = subs["pack-env"] = commands.add_parser(
        "pack-env", help="Pack the current virtual environment for executors with nothing installed (venv-pack).",
        description="Pack a virtual environment (default: the current one) into OUT with venv-pack, for "
                    "EngineConfig(python_env_archive=OUT) on a cluster.", allow_abbrev=False)
    pack.add_argument("output", metavar="OUT", help="the archive to write: OUT.tar.gz, OUT.tgz or OUT.zip")
    pack.add_argument("--venv", metavar="DIR", help="the virtual environment to pack (default: the current one)")
    pack.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    return parser, subs


# ----------------------------------------------------------------------------------------------- planning


def _local_parallelism(master: str) -> int | None:
    """Spark's default parallelism for a local master, or None for a cluster master."""
    if master == "local":
        return 1
    match = re.fullmatch(r"local\[(\*|\d+)(?:,\s*\d+)?\]", master)
    if match:
        return (os.cpu_count() or 1) if match.group(1) == "*" else int(match.group(1))
    match = re.fullmatch(r"local-cluster\[(\d+),\s*(\d+),\s*\d+\]", master)
    if match:
        return int(match.group(1)) * int(match.group(2))
    return None


def _engine_config(args: argparse.Namespace, **extra: Any):
    from dag.config import EngineConfig

    return EngineConfig(master=args.master, members=args.members, default_local_parallelism=args.parallelism,
                        **extra)


def _plan(args: argparse.Namespace, dag: Any):
    """Plan ``dag`` without Spark for local masters; otherwise ask an engine on ``--master``."""
    config = _engine_config(args)
    spark_parallelism = _local_parallelism(args.master)
    if spark_parallelism is None and args.parallelism is None:
        from dag.runtime.engine import Engine

        with Engine(config) as engine:
            return engine.plan(dag)
    from dag.planner import plan_dag
    from jetspark_cli.streaming import is_stream_dag

    cluster = re.fullmatch(r"local-cluster\[(\d+),.*\]", args.master)
    members = args.members or (int(cluster.group(1)) if cluster else 1)
    parallelism = args.parallelism or max(1, (spark_parallelism or 1) // members)
    if not is_stream_dag(dag):
        return plan_dag(dag, config, members=members, default_parallelism=parallelism)
    from dag.runtime.pipelined.coordinator import task_count
    from dag.runtime.pipelined.layout import make_layout

    # as PipelinedRun.layout_for: every processor runs as written, in T gang-scheduled tasks
    config = config.model_copy(update={"pre_aggregate": False, "fuse_accumulate": False, "deal_driver_sources": False})
    plan = plan_dag(dag, config, members=members, default_parallelism=parallelism)
    plan.pipelined = make_layout(plan, task_count(spark_parallelism or parallelism * members, members))
    return plan


# ----------------------------------------------------------------------------------------------- commands


def _write(text: str, output: str | None) -> None:
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text + "\n", encoding="utf-8")
        print(f"wrote {output}", file=sys.stderr)
    else:
        print(text)


def _cmd_dot(args: argparse.Namespace, spec: Any) -> None:
    _write(_plan(args, spec.dag).to_dot() if args.plan else spec.dag.to_dot(), args.output)


def _cmd_explain(args: argparse.Namespace, spec: Any) -> None:
    print(_plan(args, spec.dag).explain())


def _cmd_render(args: argparse.Namespace, spec: Any) -> None:
    if not args.output:
        raise UsageError("render needs -o FILE (e.g. -o out/dag.svg)")
    output = Path(args.output)
    fmt = args.format or output.suffix.lstrip(".") or "svg"
    output.parent.mkdir(parents=True, exist_ok=True)
    if args.plan:
        from dag.graph import GraphvizNotFoundError, INSTALL_HINT

        import graphviz

        try:
            output.write_bytes(graphviz.pipe("dot", fmt, _plan(args, spec.dag).to_dot().encode("utf-8")))
        except graphviz.ExecutableNotFound as exc:
            raise GraphvizNotFoundError(f"render --plan: Graphviz's `dot` program was not found; {INSTALL_HINT}") from exc
        except ValueError as exc:
            raise UsageError(f"render: unknown format {fmt!r} ({exc}); use --format svg, png or pdf") from exc
    else:
        spec.dag.render(output, format=fmt)
    print(f"wrote {output}", file=sys.stderr)


def _check_before_spark(args: argparse.Namespace, dag: Any) -> None:
    """What ``run`` can check without Spark, in a fraction of Spark's start-up time: the DAG's rules, the plan
    (for local masters, or with ``--parallelism``) and that every user function can be pickled."""
    from dag.runtime.common.shippable import check_shippable

    dag.validate()
    if _local_parallelism(args.master) is not None or args.parallelism is not None:
        _plan(args, dag)
    check_shippable(dag)


def _cmd_run(args: argparse.Namespace, spec: Any, target: Target) -> None:
    from dag.config import JobConfig, ProcessingGuarantee
    from dag.runtime.engine import Engine
    from dag.runtime.common.interrupts import InterruptGuard
    from jetspark_cli.streaming import is_stream_dag, run_stream, write_measured

    _check_before_spark(args, spec.dag)
    name = args.name or spec.name or target.function_name
    ui = {"web_ui_port": args.ui_port} if args.ui else {}
    config = _engine_config(args, progress=args.progress, python_env_archive=args.python_env_archive, **ui)
    with InterruptGuard() as guard, Engine(config) as engine:
        guard.install()  # Spark installed its own SIGINT handler, which prints stack traces
        guard.check()
        if engine.web_ui_url is not None:
            print(f"web UI: {engine.web_ui_url}", file=sys.stderr, flush=True)
        if spec.prepare is not None:
            _call_user(target, "prepare", spec.prepare, engine)
        started = time.perf_counter()
        guarantee = ProcessingGuarantee[args.guarantee.upper()]
        job = engine.new_job(spec.dag, JobConfig(name=name, processing_guarantee=guarantee))
        if is_stream_dag(spec.dag) or args.seconds is not None:
            outcome = run_stream(engine, guard.watch(job), spec.dag, args.seconds, args.measured, guard)
        else:  # Ctrl-C: the job is cancelled and has ended (nothing of it published) before we stop
            guard.join(guard.watch(job))
            outcome = "completed"
            if args.measured:
                write_measured(args.measured, spec.dag, job.metrics(), time.perf_counter() - started)
        elapsed = time.perf_counter() - started
        if spec.report is not None:
            _call_user(target, "report", spec.report, engine, job)
    print(f"job {name!r} {outcome} in {elapsed:.2f} s" if outcome == "completed"
          else f"job {name!r} {outcome} ({elapsed:.2f} s with start-up)", file=sys.stderr)


def _cmd_pack_env(args: argparse.Namespace, rest: list[str]) -> None:
    from jetspark_cli.pack_env import pack_env

    if rest:
        raise UsageError(f"unexpected arguments {' '.join(rest)!r}; usage: jetspark pack-env OUT.tar.gz [--venv DIR]")
    started = time.perf_counter()
    path = pack_env(args.output, venv=args.venv, force=args.force)
    size = os.path.getsize(path) / 2**20
    print(f"packed {args.venv or sys.prefix} into {path} ({size:.1f} MB, {time.perf_counter() - started:.1f} s); "
          f"use EngineConfig(python_env_archive={path!r})", file=sys.stderr)


def _call_user(target: Target, role: str, fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception as exc:
        raise TargetError(f"the {role} function of {target.text} raised {type(exc).__name__}: {exc}") from exc


# ----------------------------------------------------------------------------------------------- main


def _run_command(sub: argparse.ArgumentParser, args: argparse.Namespace, rest: list[str]) -> None:
    if args.help:
        print(sub.format_help())
        if args.target:
            print(parameter_help(resolve(args.target)))
        return
    if not args.target:
        raise UsageError(f"{args.command} needs a TARGET (MODULE[:FUNCTION] or PATH.py[:FUNCTION]); "
                         f"see `jetspark {args.command} --help`")
    target = resolve(args.target)
    spec = target.call(rest)
    if args.command == "run":
        _cmd_run(args, spec, target)
    else:
        {"dot": _cmd_dot, "explain": _cmd_explain, "render": _cmd_render}[args.command](args, spec)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``jetspark`` console script; returns the exit status."""
    parser, subs = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args, rest = parser.parse_known_args(argv)
    except SystemExit as exit_:  # argparse already printed its message (or the help)
        return int(exit_.code or 0)
    from jetspark_base.errors import DagError, JobFailedError

    try:
        if args.command == "pack-env":
            _cmd_pack_env(args, rest)
        else:
            _run_command(subs[args.command], args, rest)
        return 0
    except UsageError as exc:
        return _fail(args, exc, f"jetspark {args.command}: {exc}", 2)
    except TargetError as exc:
        return _fail(args, exc, f"jetspark {args.command}: {exc}", 1)
    except JobFailedError as exc:
        return _fail(args, exc, f"jetspark {args.command}: {_job_failure(exc)}", 1)
    except DagError as exc:
        return _fail(args, exc, f"jetspark {args.command}: {type(exc).__name__}: {exc}", 1)
    except KeyboardInterrupt:
        print("jetspark: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `jetspark dot ... | head`: the reader went away; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (OSError, ValueError) as exc:
        return _fail(args, exc, f"jetspark {args.command}: {type(exc).__name__}: {exc}", 1)


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>.+)$', re.MULTILINE)


def _job_failure(exc: Any) -> str:
    """A failed job in one paragraph: which processor failed with what, and where in the user's code."""
    if exc.vertex is None:
        return "the job failed: " + " ".join(str(exc).split())
    frames = list(_FRAME.finditer(exc.user_traceback or ""))
    where = ""
    if frames:
        last = frames[-1]
        where = f" (at {last['file']}, line {last['line']}, in {last['fn']})"
    message = " ".join((exc.exc_message or "").split())
    return (f"job {exc.job_name!r} failed: {exc.exc_type} in vertex '{exc.vertex}', processor "
            f"#{exc.processor_index}: {message}{where}. Run with --traceback for the user code's traceback")


def _fail(args: argparse.Namespace, exc: BaseException, message: str, status: int) -> int:
    if args.traceback:
        traceback.print_exception(exc)
        user_traceback = getattr(exc, "user_traceback", None)
        if user_traceback:
            print(user_traceback, file=sys.stderr)
    print(message, file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
