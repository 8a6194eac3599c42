"""Generated tight loops on Spark (EngineConfig.tight_loops): the same results, metrics and lifecycle calls with
the rewrite on and off, shown in explain(), and a failure inside the loop names its vertex."""

from __future__ import annotations

import os
import re
import uuid
from collections import Counter

import pytest

from dag import DAG, Engine, EngineConfig, JobFailedError
from edges import between
from processors import (
    ContextFactory,
    accumulate_by_key_p,
    aggregate_by_key_p,
    combine_by_key_p,
    counting,
    entry_key,
    filter_using_context_p,
    flat_map_p,
    map_p,
    read_list_p,
    summing,
    whole_item,
    write_map_p,
)

pytestmark = pytest.mark.spark

LINES = [f"The quick brown fox {i} jumps over the lazy dog {i % 7}" for i in range(400)] + ["", "# skip me"]
_words = re.compile(r"\w+").findall


def _lifecycle_factory(log: str) -> ContextFactory:
    def create():
        with open(log, "a") as f:
            f.write(f"create {os.getpid()}\n")
        return "#"

    def destroy(ctx):
        with open(log, "a") as f:
            f.write(f"destroy {os.getpid()}\n")

    return ContextFactory.with_create_fn(create).with_destroy_fn(destroy)


def word_count_dag(source: str, sink: str, log: str, explode_on: str | None = None) -> DAG:
    def lower(line):
        if explode_on is not None and explode_on in line:
            raise ValueError(f"cannot lower {line!r}")
        return line.lower()

    dag = DAG()
    src = dag.new_vertex("source", read_list_p(source))
    keep = dag.new_vertex("keep", filter_using_context_p(_lifecycle_factory(log), lambda c, line: not line.startswith(c)))
    low = dag.new_vertex("lower", map_p(lower))
    tok = dag.new_vertex("tokenize", flat_map_p(_words))
    acc = dag.new_vertex("accumulate", accumulate_by_key_p(whole_item, counting()))
    comb = dag.new_vertex("combine", combine_by_key_p(counting()))
    out = dag.new_vertex("sink", write_map_p(sink))
    dag.edge(between(src, keep)).edge(between(keep, low)).edge(between(low, tok))
    dag.edge(between(tok, acc).partitioned(whole_item)).edge(between(acc, comb).partitioned(entry_key).distributed())
    return dag.edge(between(comb, out))


def _run(engine, tight: bool, tmp_path, explode_on=None):
    # equal-count slices of the source, not dealt on demand: the accumulate counts (distinct words per
    # processor) depend on which processor read which lines, and on/off must compare like with like
    eng = Engine(EngineConfig(tight_loops=tight, deal_driver_sources=False), spark=engine.spark)
    source, sink, log = f"lines-{uuid.uuid4().hex}", f"counts-{uuid.uuid4().hex}", str(tmp_path / f"{tight}.log")
    eng.get_list(source).extend(LINES)
    dag = word_count_dag(source, sink, log, explode_on)
    job = eng.new_job(dag)
    job.join()
    return eng.plan(dag).explain(), dict(eng.get_map(sink)), job.metrics(), log


def test_tight_loop_when_on_or_off_then_same_counts_metrics_and_lifecycle(engine, tmp_path):
    plan_on, counts_on, metrics_on, log_on = _run(engine, True, tmp_path)
    plan_off, counts_off, metrics_off, log_off = _run(engine, False, tmp_path)
    expected = Counter(w for line in LINES if not line.startswith("#") for w in _words(line.lower()))
    assert counts_on == counts_off == dict(expected)
    assert "tight loop: 'keep' -> 'lower' -> 'tokenize' -> accumulate into 'accumulate'" in plan_on
    assert "tight loop" not in plan_off and "tight_loops=off" in plan_off
    for vertex in ("source", "keep", "lower", "tokenize", "accumulate", "combine", "sink"):
        for metric in ("receivedCount", "emittedCount"):
            assert metrics_on.total(vertex, metric) == metrics_off.total(vertex, metric), (vertex, metric)
    assert metrics_on.total("keep", "emittedCount") == len(LINES) - 1
    assert metrics_on.total("lower", "emittedCount") == len(LINES) - 1  # "" lower-cases to "": not None, kept
    for log in (log_on, log_off):  # one context per processor, created in init and destroyed in close
        events = Counter(line.split()[0] for line in open(log))
        assert events == {"create": 2, "destroy": 2}


def test_tight_loop_when_user_function_fails_then_job_failed_error_names_its_vertex(engine, tmp_path):
    with pytest.raises(JobFailedError) as info:
        _run(engine, True, tmp_path, explode_on="fox 7 ")
    err = info.value
    assert (err.vertex, err.exc_type) == ("lower", "ValueError")
    assert "cannot lower" in err.exc_message and "in lower" in err.user_traceback


def test_tight_loop_when_aggregate_by_key_is_pre_aggregated_then_same_results(engine):
    results = []
    for tight in (True, False):
        eng = Engine(EngineConfig(tight_loops=tight), spark=engine.spark)
        source, sink = f"nums-{uuid.uuid4().hex}", f"sums-{uuid.uuid4().hex}"
        eng.get_list(source).extend(range(1000))
        dag = DAG()
        src = dag.new_vertex("source", read_list_p(source))
        sq = dag.new_vertex("square", map_p(lambda n: n * n if n % 3 else None))
        key = lambda n: n % 10  # noqa: E731 - the edge's and the aggregation's key: the same function
        agg = dag.new_vertex("sum", aggregate_by_key_p(key, summing(), lambda k, r: (k, r)))
        out = dag.new_vertex("sink", write_map_p(sink))
        dag.edge(between(src, sq)).edge(between(sq, agg).partitioned(key)).edge(between(agg, out))
        assert ("tight loop: 'square'" in eng.plan(dag).explain()) is tight
        eng.new_job(dag).join()
        results.append(dict(eng.get_map(sink)))
    expected: dict = {}
    for n in range(1000):
        if n % 3:
            expected[n * n % 10] = expected.get(n * n % 10, 0) + n * n
    assert results[0] == results[1] == expected
