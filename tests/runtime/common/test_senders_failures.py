"""Worker-side pieces without Spark: edge senders (routes, pre-aggregation) and failure reporting."""

from __future__ import annotations

import time
from collections import Counter
from types import SimpleNamespace

import pytest

from dag import DAG, EngineConfig, JobFailedError
from dag.errors import DagValidationError
from dag.planner import EdgeOp, Route, plan_dag
from dag.runtime.common.failures import decode_failure, encode_failure, mark_origin
from dag.runtime.common.jobchannel import JobChannel
from dag.runtime.common.senders import SenderSpec, send
from edges import Partitioner, between
from processors import accumulate_by_key_p, combine_by_key_p, counting, entry_key, noop_p, whole_item


def spec(route, ls=1, ld=1, members=1, **kw):
    return SenderSpec(op=EdgeOp.PARTITION_BY, route=route, dest_ordinal=0, ls=ls, ld=ld, members=members,
                      partition_count=271, queue_size=1024, **kw)


def targets(records):
    got: dict[int, list] = {}
    for t, (_, batch) in records:
        got.setdefault(t, []).extend(batch)
    return got


def test_send_when_isolated_2_to_4_then_jet_candidates():
    s = spec(Route.ISOLATED, ls=2, ld=4)
    assert set(targets(send(s, 0, [list(range(8))]))) == {0, 2}
    assert set(targets(send(s, 1, [list(range(8))]))) == {1, 3}


def test_send_when_isolated_3_to_2_on_member_1_then_stays_in_member():
    s = spec(Route.ISOLATED, ls=3, ld=2, members=2)
    assert set(targets(send(s, 5, [[1, 2]]))) == {2}  # member 1, local 2 -> local 0 -> global 2
    assert set(targets(send(s, 4, [[1, 2]]))) == {3}


def test_send_when_unicast_member_then_round_robin_within_member():
    got = targets(send(spec(Route.UNICAST_MEMBER, ls=2, ld=3, members=2), 3, [list(range(9))]))
    assert set(got) == {3, 4, 5} and sorted(sum(got.values(), [])) == list(range(9))


def test_send_when_fanout_then_one_copy_per_member():
    got = list(send(spec(Route.FANOUT, ls=1, ld=2, members=3), 0, [[1], [2]]))
    assert [t // 2 for t, _ in got] == [0, 1, 2, 0, 1, 2]


def test_send_when_partitioned_local_distributed_member_then_formula():
    part = Partitioner.default()
    kw = dict(key_fn=whole_item, partitioner=part)
    items = [f"k{i}" for i in range(30)]
    local = targets(send(spec(Route.PARTITIONED_LOCAL, ls=2, ld=3, members=2, **kw), 2, [items]))
    assert all(t == 3 + part.get_partition(k, 271) % 3 for t, ks in local.items() for k in ks)
    dist = targets(send(spec(Route.PARTITIONED_ALL, ls=2, ld=3, members=2, **kw), 2, [items]))
    assert all(t == part.get_partition(k, 271) % 6 for t, ks in dist.items() for k in ks)
    to1 = targets(send(spec(Route.PARTITIONED_MEMBER, ls=2, ld=3, members=2, member=1, **kw), 0, [items]))
    assert all(t == 3 + part.get_partition(k, 271) % 3 for t, ks in to1.items() for k in ks)


def test_send_when_pre_aggregated_counting_then_one_entry_per_key_routed_by_key():
    part = Partitioner.default()
    s = spec(Route.PARTITIONED_ALL, ld=2, key_fn=whole_item, partitioner=part, pre_mode="accumulate",
             operation=counting())
    words = ["a", "b", "a", "c", "a", "b"]
    counts: dict = {}
    got = targets(send(s, 0, [words[:3], words[3:]], counts))
    assert dict(e for es in got.values() for e in es) == Counter(words)
    assert all(t == part.get_partition(k, 271) % 2 for t, es in got.items() for k, _ in es)
    assert counts == {"received": 6, "emitted": 3}


def test_send_when_pre_aggregated_with_hash_code_partitioner_then_routed_by_hash_of_key():
    s = spec(Route.PARTITIONED_ALL, ld=3, key_fn=whole_item, partitioner=Partitioner.HASH_CODE,
             pre_mode="accumulate", operation=counting())
    pairs = [(d, f"w{i % 7}") for d in range(4) for i in range(20)]  # (doc_id, word) keys, as TF-IDF's tf
    got = targets(send(s, 0, [pairs[:30], pairs[30:]]))
    assert dict(e for es in got.values() for e in es) == Counter(pairs)
    assert all(t == hash(k) % 271 % 3 for t, es in got.items() for k, _ in es)


def test_send_when_combine_mode_then_accumulators_merged():
    s = spec(Route.PARTITIONED_ALL, key_fn=entry_key, partitioner=Partitioner.default(), pre_mode="combine",
             operation=counting())
    got = targets(send(s, 0, [[("a", 2), ("b", 1)], [("a", 3)]]))
    assert sorted(got[0]) == [("a", 5), ("b", 1)]


def test_plan_then_senders_built_from_edge_plans():
    from dag.runtime.common.senders import sender_spec

    dag = DAG()
    a = dag.new_vertex("a", noop_p())
    acc = dag.new_vertex("acc", accumulate_by_key_p(whole_item, counting()))
    comb = dag.new_vertex("comb", combine_by_key_p(counting()))
    dag.edge(between(a, acc).partitioned(whole_item)).edge(between(acc, comb).partitioned(entry_key).distributed())
    plan = plan_dag(dag, EngineConfig(), 2, 2)
    out = next(ep for ep in plan.edges if ep.source == "acc")
    s = sender_spec(out, 2, 271)
    assert (s.pre_mode, s.absorbed_vertex, s.ls, s.ld, s.route) == ("accumulate", "acc", 2, 2, Route.PARTITIONED_ALL)


def boom():
    raise ValueError("bad item 7")


def test_failure_when_reported_on_channel_then_decoded_by_id_without_jvm_text():
    stored = []
    channel = JobChannel("local[2]", on_failure=stored.append)
    try:
        try:
            boom()
        except ValueError as exc:
            mark_origin(exc, "tokenize", 3)
            mark_origin(exc, "downstream", 9)  # the innermost runner wins
            failure = encode_failure(exc, ["source", "tokenize"], 3, channel.ref)
        assert "jetspark-failure-id " in str(failure) and "bad item 7" not in str(failure)
        assert [r["vertex"] for r in stored] == ["tokenize"]  # stored (and the job told) before the task raises
        assert failure.record["id"] == stored[0]["id"]  # the task knows the record the driver acknowledged
        assert abs(stored[0]["time"] - time.time()) < 60  # when it was reported: a restart's timeline starts there
        noise = ("py4j.protocol.Py4JJavaError: An error occurred while calling o123.count.\n"
                 "org.apache.spark.SparkException: Job aborted due to stage failure: ... Traceback ...\n"
                 f"dag.runtime.common.failures.TaskFailure: {failure}\n\tat org.apache.spark.api.python.PythonRunner...")
        decoded = decode_failure(RuntimeError(noise), "wc", channel)
        assert isinstance(decoded, JobFailedError)
        assert (decoded.vertex, decoded.processor_index, decoded.exc_type, decoded.exc_message) == \
            ("tokenize", 3, "ValueError", "bad item 7")
        assert "in boom" in decoded.user_traceback and "org.apache" not in str(decoded)
        # a cancelled job group's error names no task: the job's first record explains it
        assert decode_failure(RuntimeError("Job group cancelled"), "wc", channel).vertex == "tokenize"
    finally:
        channel.close()


def test_failure_when_no_channel_or_no_record_then_not_decoded_and_summary_kept():
    try:
        boom()
    except ValueError as exc:
        failure = encode_failure(exc, ["source"], 0, None)
    assert "ValueError in vertex 'source' processor #0: bad item 7" in str(failure)
    assert failure.record is None  # not acknowledged by a driver
    channel = JobChannel("local[2]")
    try:
        unknown = "jetspark-failure-id " + "ab" * 16
        assert decode_failure(RuntimeError(unknown), "wc", channel) is None
        assert decode_failure(RuntimeError("anything"), "wc", None) is None
    finally:
        channel.close()


def test_failure_record_when_malformed_then_refused_and_not_stored():
    channel = JobChannel("local[2]")
    try:
        client = channel.ref.client()
        with pytest.raises(RuntimeError, match="processor_index"):
            client.request("failure", {"id": "x", "vertex": "v", "processor_index": "0", "exc_type": "E",
                                       "exc_message": "m", "user_traceback": ""}, as_json=True)
        assert channel.failure_record(None) is None
    finally:
        channel.close()


def test_summary_when_executor_lost_then_cause_and_exit_code_named_and_spark_error_chained():
    spark = RuntimeError(
        "An error occurred while calling o88.count.\n: org.apache.spark.SparkException: Job aborted due to stage "
        "failure: Task 3 in stage 2.0 failed 4 times, most recent failure: Lost task 3.3 in stage 2.0 (TID 40) "
        "(127.0.0.1 executor 1): ExecutorLostFailure (executor 1 exited caused by one of the running tasks) "
        "Reason: Command exited with code 137\n\tat org.apache.spark...")
    from dag.runtime.common.failures import summarize_spark_error

    err = summarize_spark_error(spark, "wc")
    assert "an executor was lost (exit code 137)" in str(err) and err.__cause__ is spark


def test_summary_when_jvm_out_of_memory_then_setting_to_raise_named():
    from dag.runtime.common.failures import summarize_spark_error

    err = summarize_spark_error(RuntimeError("java.lang.OutOfMemoryError: Java heap space"), "wc")
    assert "ran out of memory" in str(err) and "spark.driver.memory" in str(err)


def test_send_when_key_fn_returns_none_then_null_key_error_names_edge():
    for ld in (1, 3):  # one target (keys only checked) and several
        s = spec(Route.PARTITIONED_ALL, ld=ld, key_fn=lambda x: None if x == 2 else x,
                 partitioner=Partitioner.default(), edge_name='between("a", "b").partitioned(?)')
        with pytest.raises(DagValidationError, match=r'Null key from key extractor, edge: between\("a", "b"\)'
                                                     r'\.partitioned\(\?\); the key function returned None for item 2'):
            list(send(s, 0, [[1, 2, 3]]))


def test_send_when_pre_aggregated_key_is_none_then_null_key_error():
    s = spec(Route.PARTITIONED_ALL, ld=2, key_fn=lambda w: w or None, partitioner=Partitioner.default(),
             pre_mode="accumulate", operation=counting(), edge_name="e")
    with pytest.raises(DagValidationError, match="Null key from key extractor, edge: e"):
        list(send(s, 0, [["a", "", "b"]]))


def test_partition_of_when_key_none_then_null_key_error():
    e = between(SimpleNamespace(name="a"), SimpleNamespace(name="b")).partitioned(lambda x: None)
    with pytest.raises(DagValidationError, match=r'Null key from key extractor, edge: between\("a", "b"\)'):
        e.partition_of("x", 4)


def test_failure_when_infrastructure_then_record_restartable_and_task_index_read_from_spark_words():
    from dag.runtime.common.failures import failed_task_index, mark_infrastructure
    from dag.runtime.pipelined.snapshot_coordinator import is_restartable

    stored = []
    channel = JobChannel("local[2]", on_failure=stored.append)
    try:
        lost = ConnectionError("task 1 (running probe#1) disappeared")
        mark_origin(lost, "probe", 1)
        mark_infrastructure(lost)
        encode_failure(lost, ["<task 0>"], 0, channel.ref)
        user = ValueError("bad item")
        mark_origin(user, "probe", 1)
        encode_failure(user, ["<task 0>"], 0, channel.ref)
    finally:
        channel.close()
    assert [(r["vertex"], r["processor_index"], r.get("restartable")) for r in stored] == \
        [("probe", 1, True), ("probe", 1, None)]
    assert [is_restartable(r) for r in stored] == [True, False]
    spark = RuntimeError("org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage 7.0 "
                         "failed 1 times, most recent failure: Lost task 1.0 in stage 7.0 (TID 15): "
                         "Task 0 in stage 9.9 failed")
    assert failed_task_index(spark) == 1 and failed_task_index(RuntimeError("Job group cancelled")) is None


def test_pipelined_stage_failure_without_record_then_error_names_the_lost_task_processors(monkeypatch):
    from dag.runtime.pipelined import coordinator
    from dag.runtime.pipelined.coordinator import PipelinedRun

    monkeypatch.setattr(coordinator, "PEER_REPORT_WAIT", 0.0)
    run = PipelinedRun.__new__(PipelinedRun)  # only what lost_task reads
    run.job = SimpleNamespace(name="wc", cancelled=False)
    run.layout = SimpleNamespace(tasks=2, processors_of=lambda t: [("src", 0), ("probe", 0)] if t == 0 else
                                 [("probe", 1), ("sink", 1)])
    run.channel = JobChannel("local[2]")
    try:
        spark = RuntimeError("org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage "
                             "7.0 failed 1 times, most recent failure: Lost task 1.0 in stage 7.0 (TID 15): "
                             "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)")
        lost = run.lost_task(spark)
        assert (lost.vertex, lost.processor_index) == ("probe", 1)
        assert "task 1 (running probe#1, sink#1) was lost: a Python worker died" in str(lost)
        assert run.lost_task(RuntimeError("Job group cancelled")) is None  # no task named: Spark's error stays
        run.job.cancelled = True
        assert run.lost_task(spark) is None
    finally:
        run.channel.close()
