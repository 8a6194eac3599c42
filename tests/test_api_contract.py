"""The public API contract (``../shared/docs/api-contract.md``), name by name.

Every name the contract lists must import from the package the contract names, with the documented parameters
(in the documented order, with the documented defaults; extra parameters must be optional). Behaviour checks here
cover contract sentences that the module tests (tests/edges, tests/dag, tests/processors) do not already pin down.
No Spark: the running names are checked by signature and configuration defaults only (tests/runtime runs them).
"""

from __future__ import annotations

import importlib
import inspect
import math
from types import SimpleNamespace

import pydantic
import pytest

import dag as dag_package
import edges as edges_package
import processors as processors_package
from tests.support.processors import Nop

# ---- helpers -------------------------------------------------------------------------------------------------

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def check_params(fn, /, *names: str, **defaults) -> None:
    """``fn`` takes ``names`` (``"*ops"`` for a var-positional) as its leading parameters, in that order, with
    ``defaults`` (compared with ``is`` for callables, ``==`` otherwise); any further parameter is optional.
    """
    params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    label = getattr(fn, "__qualname__", repr(fn))
    actual = [("*" + p.name) if p.kind is p.VAR_POSITIONAL else p.name for p in params]
    assert actual[: len(names)] == list(names), f"{label}{inspect.signature(fn)}: expected leading {names}"
    by_name = {p.name: p for p in params}
    for name, default in defaults.items():
        got = by_name[name].default
        if callable(default):
            assert got is default, f"{label}: {name} defaults to {got!r}, expected {default!r}"
        else:
            assert got == default and type(got) is type(default), f"{label}: {name}={got!r}, expected {default!r}"
    for p in params[len(names):]:
        assert p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty, (
            f"{label}: extra parameter {p.name} must be optional so the documented call works"
        )


def check_property(cls, *names: str) -> None:
    for name in names:
        assert isinstance(inspect.getattr_static(cls, name), property), f"{cls.__name__}.{name} is not a property"


def check_methods(cls, **signatures: tuple | int) -> None:
    """``signatures``: method name -> the parameter names the contract gives (defaults checked separately), or
    the number of positional arguments where the contract shows the call without naming them.
    """
    for name, params in signatures.items():
        method = getattr(cls, name, None)
        assert callable(method), f"{cls.__name__}.{name} is missing"
        if isinstance(params, tuple):
            check_params(method, *params)
            continue
        positional = [p for p in inspect.signature(method).parameters.values()
                      if p.name != "self" and p.kind in _POSITIONAL]
        required = [p for p in positional if p.default is p.empty]
        assert len(required) <= params <= len(positional), f"{cls.__name__}.{name} must take {params} argument(s)"


# ---- names: every contract name imports from its package ------------------------------------------------------

EDGES_NAMES = ["Edge", "RoutingPolicy", "Partitioner", "EdgeConfig", "between", "from_"]
DAG_MODEL_NAMES = ["DAG", "Vertex", "DagValidationError", "CycleError"]
DAG_RUNNING_NAMES = ["Engine", "EngineConfig", "JobConfig", "Job", "JobStatus", "JobFailedError", "ProcessingGuarantee"]
PROCESSORS_CORE = [
    "Processor", "AbstractProcessor", "Inbox", "Outbox", "Context", "ProcessorSupplier", "ProcessorMetaSupplier",
    "Watermark", "Traverser", "FlatMapper", "ContextFactory",
]
TRAVERSERS_AND_FUNCTIONS = ["traverse_iterable", "traverse_items", "lazy", "empty", "whole_item", "entry_key",
                            "entry_value", "entry"]
FACTORIES = [
    "noop_p", "map_p", "filter_p", "flat_map_p", "map_using_context_p", "filter_using_context_p",
    "flat_map_using_context_p", "aggregate_p", "accumulate_p", "combine_p", "aggregate_by_key_p",
    "accumulate_by_key_p", "combine_by_key_p", "sort_p", "peek_input_p", "peek_output_p", "peek_snapshot_p",
    "write_logger_p",
]
SOURCES = ["read_map_p", "read_list_p", "read_files_p", "read_text_p", "SourceBuilder"]
SINKS = ["write_map_p", "write_list_p", "write_file_p", "write_text_p", "write_buffered_p", "SinkBuilder"]
AGGREGATIONS = [
    "AggregateOperation", "counting", "summing", "averaging", "min_by", "max_by", "to_list", "to_set", "to_map",
    "all_of", "mapping", "reducing", "pick_any", "sorting", "concatenating", "grouping_by", "top_n", "bottom_n",
]
TESTING = ["verify_processor", "SAME_ITEMS_ANY_ORDER"]
EVENT_TIME = [
    "MIN_WATERMARK", "BroadcastKey", "broadcast_key", "SlidingWindowPolicy", "sliding_win_policy",
    "tumbling_win_policy", "TimestampKind", "TimestampedEntry", "WindowResult", "limiting_lag",
    "limiting_lag_and_delay", "limiting_lag_and_lull", "limiting_timestamp_and_wall_clock_lag",
    "WatermarkEmissionPolicy", "no_throttling", "emit_by_min_step", "emit_by_frame", "wm_gen_params",
    "no_watermarks", "insert_watermarks_p", "accumulate_by_frame_p", "combine_to_sliding_window_p",
    "aggregate_to_sliding_window_p", "aggregate_to_session_window_p",
]

CONTRACT_NAMES = (
    [("edges", n) for n in EDGES_NAMES]
    + [("dag", n) for n in DAG_MODEL_NAMES + DAG_RUNNING_NAMES]
    + [
        ("processors", n)
        for n in PROCESSORS_CORE + TRAVERSERS_AND_FUNCTIONS + FACTORIES + SOURCES + SINKS + AGGREGATIONS + TESTING
        + EVENT_TIME
    ]
)


@pytest.mark.parametrize("package, name", CONTRACT_NAMES, ids=[f"{p}.{n}" for p, n in CONTRACT_NAMES])
def test_contract_name_when_imported_from_its_package_then_present(package, name):
    namespace: dict = {}
    exec(f"from {package} import {name}", namespace)  # the exact statement a user writes
    assert namespace[name] is getattr(importlib.import_module(package), name)


# ---- edges ---------------------------------------------------------------------------------------------------


def test_edges_signatures_when_inspected_then_as_contract():
    from edges import Edge, Partitioner, between, from_

    check_params(between, "source", "dest")
    check_params(from_, "source", "ordinal", ordinal=0)
    assert Edge.between is between and Edge.from_ is from_
    check_params(Edge.to, "dest", "ordinal", ordinal=0)
    check_methods(Edge, unicast=(), isolated=(), broadcast=(), fanout=(), local=(), distributed=(),
                  partitioned=("key_fn", "partitioner"), all_to_one=("key",), distribute_to=("member_index",),
                  priority=("n",), set_config=1)
    check_params(Edge.partitioned, "key_fn", "partitioner", partitioner=None)
    check_params(Edge.all_to_one, "key", key=None)
    check_params(Partitioner.get_partition, "key", "partition_count")
    assert callable(Partitioner.default) and hasattr(Partitioner.HASH_CODE, "get_partition")


def test_edge_fluent_settings_when_chained_then_each_returns_the_edge():
    from edges import EdgeConfig, between

    e = between(SimpleNamespace(name="a"), SimpleNamespace(name="b"))
    for setting in (e.unicast, e.isolated, e.broadcast, e.fanout, e.local, e.distributed, lambda: e.all_to_one(),
                    lambda: e.partitioned(len), lambda: e.distribute_to(0), lambda: e.priority(2),
                    lambda: e.set_config(EdgeConfig(queue_size=4))):
        assert setting() is e


def test_edge_all_to_one_when_no_key_then_key_none_and_every_item_in_one_partition():
    from edges import Partitioner, RoutingPolicy, between

    e = between(SimpleNamespace(name="a"), SimpleNamespace(name="b")).all_to_one()
    assert e.routing_policy is RoutingPolicy.PARTITIONED and e.is_all_to_one and e.all_to_one_key is None
    assert {e.partition_of(item, 271) for item in ("x", 1, (2, 3))} == {Partitioner.default().get_partition(None, 271)}


def test_edge_partitioned_when_duck_typed_partitioner_then_used():
    from edges import between

    class Modulo:  # "anything with get_partition(key, partition_count)": no Partitioner base class
        def get_partition(self, key, partition_count):
            return key % partition_count

    e = between(SimpleNamespace(name="a"), SimpleNamespace(name="b")).partitioned(lambda item: item * 10, Modulo())
    assert e.partition_of(3, 7) == 30 % 7


def test_partitioner_hash_code_when_documented_then_mentions_pinned_hash_seed():
    from edges import Partitioner

    assert "PYTHONHASHSEED" in inspect.getdoc(type(Partitioner.HASH_CODE))
    assert Partitioner.HASH_CODE.get_partition(13, 271) == 13


def test_edge_config_when_inspected_then_frozen_pydantic_with_forbidden_extras():
    from edges import EdgeConfig

    assert issubclass(EdgeConfig, pydantic.BaseModel)
    assert EdgeConfig.model_config.get("frozen") and EdgeConfig.model_config.get("extra") == "forbid"
    assert EdgeConfig.model_fields["queue_size"].default == 1024


# ---- dag: the model ------------------------------------------------------------------------------------------


def test_dag_model_signatures_when_inspected_then_as_contract():
    from dag import DAG, CycleError, DagValidationError, Vertex

    assert issubclass(CycleError, DagValidationError) and issubclass(DagValidationError, ValueError)
    check_params(DAG)
    check_params(DAG.new_vertex, "name", "supplier", "local_parallelism", local_parallelism=None)
    check_methods(DAG, vertex=("v",), new_unique_vertex=("prefix", "supplier"), get_vertex=("name",),
                  get_inbound_edges=("name",), get_outbound_edges=("name",), edge=("edge",), validate=(),
                  to_networkx=(), describe=())
    check_params(DAG.to_dot, "default_local_parallelism", "default_queue_size", default_local_parallelism=-1,
                 default_queue_size=1024)
    check_params(DAG.render, "path", "format", format="svg")
    assert callable(DAG.__iter__)
    check_property(Vertex, "name", "local_parallelism")
    assert inspect.getattr_static(Vertex, "local_parallelism").fset is not None  # read/write


def test_new_vertex_when_each_supplier_kind_then_accepted():
    from dag import DAG
    from processors import ProcessorMetaSupplier, ProcessorSupplier, SinkBuilder, SourceBuilder

    dag = DAG()
    source = SourceBuilder.batch("source", lambda ctx: None).fill_buffer_fn(lambda state, buf: buf.close()).build()
    sink = SinkBuilder.sink_builder("sink", lambda ctx: []).receive_fn(lambda state, item: None).build()
    dag.new_vertex("callable", lambda: Nop())
    dag.new_vertex("class", Nop)
    dag.new_vertex("ps", ProcessorSupplier.of(Nop))
    dag.new_vertex("pms", ProcessorMetaSupplier.of(Nop))
    assert dag.new_vertex(source.name, source).name == "source"
    assert dag.new_vertex(sink.name, sink).meta_supplier is sink
    assert [v.name for v in dag] == ["callable", "class", "ps", "pms", "source", "sink"]


def test_vertex_local_parallelism_when_assigned_then_none_or_minus_one_default_else_positive():
    from dag import DAG, DagValidationError

    v = DAG().new_vertex("v", Nop)
    v.local_parallelism = 3
    assert v.local_parallelism == 3
    v.local_parallelism = -1
    assert v.local_parallelism is None
    with pytest.raises(DagValidationError, match="'v'"):
        v.local_parallelism = 0


# ---- dag: running on Spark (names, signatures and configuration only; tests/runtime runs them) ---------------


def test_engine_and_job_signatures_when_inspected_then_as_contract():
    from dag import Engine, Job

    check_params(Engine, "config", "spark", config=None, spark=None)
    check_methods(Engine, close=(), get_map=("name",), get_list=("name",), plan=("dag",), new_job=("dag", "config"),
                  get_jobs=(), get_job=("name",))
    check_params(Engine.new_job, "dag", "config", config=None)
    assert callable(Engine.__enter__) and callable(Engine.__exit__)
    check_params(Job.join, "timeout", timeout=None)
    check_methods(Job, cancel=(), metrics=())
    check_property(Job, "status", "name", "id", "submission_time")


def test_job_status_and_processing_guarantee_when_listed_then_contract_members():
    from dag import JobStatus, ProcessingGuarantee

    assert {"NOT_RUNNING", "STARTING", "RUNNING", "COMPLETING", "FAILED", "COMPLETED"} <= set(JobStatus.__members__)
    assert set(ProcessingGuarantee.__members__) == {"NONE", "AT_LEAST_ONCE", "EXACTLY_ONCE"}


def test_engine_config_when_default_then_contract_defaults():
    from dag import EngineConfig

    config = EngineConfig()
    assert config.master == "local[*]" and isinstance(config.app_name, str)
    assert config.members is None and config.default_local_parallelism is None  # None: derived by the engine
    assert config.partition_count == 271 and config.spark_conf == {} and config.progress is False
    with pytest.raises(pydantic.ValidationError):
        EngineConfig(no_such_field=1)


def test_job_config_when_default_then_contract_fields():
    from dag import JobConfig, ProcessingGuarantee

    config = JobConfig()
    assert config.name is None and config.processing_guarantee is ProcessingGuarantee.NONE
    assert isinstance(config.snapshot_interval_ms, int)
    assert JobConfig(name="j", processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE).name == "j"


def test_job_failed_error_when_built_then_names_vertex_index_type_message_and_traceback():
    from dag import JobFailedError

    err = JobFailedError("boom", vertex="tokenize", processor_index=3, exc_type="ValueError", exc_message="bad",
                         user_traceback="Traceback ...", job_name="wc")
    assert (err.vertex, err.processor_index, err.exc_type, err.exc_message) == ("tokenize", 3, "ValueError", "bad")
    assert err.user_traceback == "Traceback ..." and err.job_name == "wc"


# ---- processors: core ----------------------------------------------------------------------------------------


def test_processor_methods_when_inspected_then_as_contract():
    from processors import Processor

    check_methods(
        Processor, is_cooperative=(), init=("outbox", "context"), process=("ordinal", "inbox"),
        try_process_watermark=("watermark",), try_process=(), complete_edge=("ordinal",), complete=(),
        save_to_snapshot=(), restore_from_snapshot=("inbox",), finish_snapshot_restore=(), close=(),
    )


def test_abstract_processor_methods_when_inspected_then_as_contract():
    from processors import AbstractProcessor

    check_methods(AbstractProcessor, try_process0=("item",), try_process1=("item",), try_process2=("item",),
                  try_process3=("item",), try_process4=("item",), try_process_any=("ordinal", "item"),
                  try_emit_to_snapshot=("key", "value"), emit_from_traverser_to_snapshot=("traverser",))
    check_params(AbstractProcessor.try_emit, "item", "ordinal", ordinal=-1)
    check_params(AbstractProcessor.emit_from_traverser, "traverser", "ordinal", ordinal=-1)
    check_params(AbstractProcessor.flat_mapper, "fn", "ordinal", ordinal=-1)


def test_outbox_inbox_context_when_inspected_then_as_contract():
    from processors import Context, Inbox, Outbox

    check_params(Outbox.offer, "item", "ordinal", ordinal=-1)
    check_methods(Outbox, offer_to_snapshot=("key", "value"), bucket_count=(), has_unfinished_item=())
    check_methods(Inbox, is_empty=(), peek=(), poll=(), remove=(), len=(), clear=(), drain=("consumer",))
    check_params(Inbox.drain_to, "target", "limit", limit=None)
    assert callable(Inbox.__iter__) and callable(Inbox.__len__)
    check_property(Context, "global_processor_index", "local_processor_index", "total_parallelism",
                   "local_parallelism", "member_index", "member_count", "vertex_name", "job_id", "logger",
                   "processing_guarantee")


def test_suppliers_when_inspected_then_as_contract():
    from processors import ProcessorMetaSupplier, ProcessorSupplier

    check_methods(ProcessorSupplier, init=("context",), get=("count",), close=("error",), of=("factory",))
    check_methods(ProcessorMetaSupplier, preferred_local_parallelism=(), init=("context",), get=("member_indices",),
                  close=("error",))
    for factory in ("of", "prefer_local_parallelism_one", "force_total_parallelism_one"):
        assert isinstance(inspect.getattr_static(ProcessorMetaSupplier, factory), staticmethod), factory


def test_traverser_when_inspected_then_as_contract():
    from processors import Traverser, empty, lazy, traverse_items, traverse_iterable

    check_methods(Traverser, next=(), map=1, filter=1, flat_map=1, append=1, prepend=1, take_while=1,
                  drop_while=1, peek=1, on_first_null=1)
    check_params(traverse_iterable, "iterable")
    check_params(traverse_items, "*items")
    check_params(lazy, "supplier")
    check_params(empty)


def test_functions_when_called_then_entries_are_two_tuples():
    from processors import entry, entry_key, entry_value, whole_item

    check_params(entry, "key", "value")
    e = entry("k", 1)
    assert type(e) is tuple and len(e) == 2 and (entry_key(e), entry_value(e), whole_item(e)) == ("k", 1, e)


def test_outbox_bucket_count_and_unfinished_item_when_refused_then_reported():
    from processors import Outbox

    box = Outbox([1, 1])
    assert box.bucket_count() == 2 and not box.has_unfinished_item()
    assert box.offer("a", 0) and not box.offer("b", 0)
    assert box.has_unfinished_item()
    box.drain(0)
    box.reset()
    assert box.offer("b", 0) and not box.has_unfinished_item()


def test_inbox_len_and_iteration_when_read_then_items_stay():
    from processors import Inbox

    inbox = Inbox(["a", "b"])
    assert len(inbox) == inbox.len() == 2 and list(inbox) == ["a", "b"] and list(inbox) == ["a", "b"]
    inbox.clear()
    assert inbox.is_empty() and inbox.len() == 0


def test_abstract_processor_when_ordinal_is_a_list_then_emits_to_those_ordinals_only():
    from processors import AbstractProcessor, Context, Outbox, traverse_items

    class P(AbstractProcessor):
        pass

    p = P()
    box = Outbox([5, 5, 5])
    p.init(box, Context())
    assert p.emit_from_traverser(traverse_items(1, 2), [0, 2])
    fm = p.flat_mapper(lambda x: [x, -x], [1])
    assert fm.try_process(3)
    assert (box.drain(0), box.drain(1), box.drain(2)) == ([1, 2], [3, -3], [1, 2])


# ---- processors: factories, sources, sinks, aggregations -----------------------------------------------------


def test_processor_factories_when_inspected_then_as_contract():
    from processors import entry

    p = processors_package
    check_params(p.noop_p)
    check_params(p.map_p, "fn")
    check_params(p.filter_p, "pred")
    check_params(p.flat_map_p, "fn")
    check_params(p.map_using_context_p, "factory", "fn")
    for name in ("filter_using_context_p", "flat_map_using_context_p"):  # listed without parameters: as map's
        assert list(inspect.signature(getattr(p, name)).parameters)[:1] == ["factory"], name
        assert len(inspect.signature(getattr(p, name)).parameters) == 2, name
    for name in ("aggregate_p", "accumulate_p", "combine_p"):
        check_params(getattr(p, name), "op")
    check_params(p.aggregate_by_key_p, "key_fns", "op", "map_to_output_fn", map_to_output_fn=entry)
    check_params(p.accumulate_by_key_p, "key_fns", "op")
    check_params(p.combine_by_key_p, "op", "map_to_output_fn", map_to_output_fn=entry)
    check_params(p.sort_p, "key", key=None)
    check_params(p.peek_input_p, "supplier")
    check_params(p.peek_output_p, "supplier")
    check_params(p.peek_snapshot_p, "supplier")
    check_params(p.write_logger_p, "to_string_fn", to_string_fn=str)


def test_sources_and_sinks_when_inspected_then_as_contract():
    p = processors_package
    for name in ("read_map_p", "read_list_p", "write_map_p", "write_list_p"):
        check_params(getattr(p, name), "name")
    check_params(p.read_files_p, "directory", "glob", "shared_fs", "map_output_fn", "encoding", glob="*",
                 shared_fs=False, map_output_fn=None, encoding="utf-8")
    check_params(p.read_text_p, "path")
    check_params(p.write_text_p, "path")
    check_params(p.write_file_p, "directory", "to_string_fn", to_string_fn=str)
    check_params(p.write_buffered_p, "create_fn", "on_receive_fn", "flush_fn", "destroy_fn")


def test_every_factory_when_given_to_new_vertex_then_accepted(tmp_path):
    from dag import DAG
    from processors import ContextFactory, counting

    p = processors_package
    factory = ContextFactory.with_create_fn(lambda: None)
    suppliers = {
        "noop": p.noop_p(), "map": p.map_p(str), "filter": p.filter_p(bool), "flat_map": p.flat_map_p(list),
        "map_ctx": p.map_using_context_p(factory, lambda c, x: x),
        "filter_ctx": p.filter_using_context_p(factory, lambda c, x: True),
        "flat_map_ctx": p.flat_map_using_context_p(factory, lambda c, x: [x]),
        "aggregate": p.aggregate_p(counting()), "accumulate": p.accumulate_p(counting()),
        "combine": p.combine_p(counting()), "aggregate_by_key": p.aggregate_by_key_p([str], counting()),
        "accumulate_by_key": p.accumulate_by_key_p([str], counting()),
        "combine_by_key": p.combine_by_key_p(counting()), "sort": p.sort_p(),
        "peek_in": p.peek_input_p(p.map_p(str)), "peek_out": p.peek_output_p(p.map_p(str)),
        "logger": p.write_logger_p(), "read_map": p.read_map_p("m"), "read_list": p.read_list_p("l"),
        "read_files": p.read_files_p(str(tmp_path)), "read_text": p.read_text_p(str(tmp_path / "in.txt")),
        "write_map": p.write_map_p("m"), "write_list": p.write_list_p("l"),
        "write_file": p.write_file_p(str(tmp_path / "out")), "write_text": p.write_text_p(str(tmp_path / "t")),
        "buffered": p.write_buffered_p(lambda ctx: [], lambda buf, item: buf.append(item), lambda buf: None,
                                       lambda buf: None),
    }
    dag = DAG()
    for name, supplier in suppliers.items():
        dag.new_vertex(name, supplier)
    assert len(dag.vertices) == len(suppliers)


def test_aggregations_when_inspected_then_as_contract():
    p = processors_package
    check_params(p.AggregateOperation, "create_fn", "accumulate_fn", "combine_fn", "deduct_fn", "export_fn",
                 "finish_fn", combine_fn=None, deduct_fn=None)
    for name in ("counting", "to_list", "to_set", "pick_any"):
        check_params(getattr(p, name))
    check_params(p.summing, "fn", fn=None)
    check_params(p.averaging, "fn", fn=None)
    check_params(p.min_by, "key", key=None)
    check_params(p.max_by, "key", key=None)
    check_params(p.to_map, "key_fn", "value_fn", "merge_fn", merge_fn=None)
    check_params(p.all_of, "*ops")
    check_params(p.mapping, "fn", "op")
    check_params(p.reducing, "identity", "fn", "combine_fn", "deduct_fn", deduct_fn=None)
    check_params(p.sorting, "key", key=None)
    check_params(p.concatenating, "delimiter", "prefix", "suffix", delimiter="", prefix="", suffix="")
    check_params(p.grouping_by, "key_fn", "op", op=None)
    check_params(p.top_n, "n", "key", key=None)
    check_params(p.bottom_n, "n", "key", key=None)


def test_aggregate_p_when_int_accumulator_returned_by_functions_then_works_and_empty_results_as_jet():
    from processors import AggregateOperation, aggregate_p, averaging, max_by, verify_processor

    total = AggregateOperation(create_fn=lambda: 0, accumulate_fn=lambda acc, item: acc + item,
                               combine_fn=lambda a, b: a + b)
    verify_processor(aggregate_p(total)).input([1, 2, 3]).expect_output([6])
    verify_processor(aggregate_p(max_by())).input([]).disable_snapshots().expect_output([])  # None: nothing emitted
    nan = []
    verify_processor(aggregate_p(averaging())).input([]).disable_snapshots().assert_output(
        1, lambda mode, actual: nan.append(actual[0]))
    assert nan and all(len(out) == 1 and math.isnan(out[0]) for out in nan)


# ---- processors: testing -------------------------------------------------------------------------------------


def test_verify_processor_options_when_chained_then_each_returns_the_verifier():
    from processors import SAME_ITEMS_ANY_ORDER, map_p, verify_processor

    v = verify_processor(map_p(str))
    for option in (v.disable_snapshots, v.disable_complete_call, v.disable_progress_assertion, v.disable_logging,
                   lambda: v.cooperative_timeout(100), lambda: v.output_checker(SAME_ITEMS_ANY_ORDER),
                   lambda: v.input([1, 2])):
        assert option() is v
    assert v.expect_output(["2", "1"]) is None
    check_params(verify_processor, "supplier")
    check_params(type(v).expect_output, "items")
    check_params(type(v).cooperative_timeout, "ms")
    check_params(type(v).output_checker, "fn")


def test_verify_processor_when_disable_logging_then_items_not_logged(caplog):
    from processors import map_p, verify_processor

    with caplog.at_level("INFO", logger="jetspark.verify_processor"):
        verify_processor(map_p(str)).disable_logging().input(["secret-item"]).expect_output(["secret-item"])
    assert "secret-item" not in caplog.text


# ---- processors: builders ------------------------------------------------------------------------------------


def test_source_builder_batch_when_inspected_then_as_contract():
    from processors import SourceBuilder

    check_params(SourceBuilder.batch, "name", "create_fn")
    builder = SourceBuilder.batch("s", lambda ctx: None)
    check_methods(type(builder), fill_buffer_fn=1, destroy_fn=1, distributed=("local_parallelism",),
                  create_snapshot_fn=1, restore_snapshot_fn=1, build=())


@pytest.mark.parametrize("kind", ["stream", "timestamped_stream"])
def test_source_builder_stream_when_requested_then_builder_with_contract_methods(kind):
    from processors import SourceBuilder

    factory = getattr(SourceBuilder, kind)
    check_params(factory, "name", "create_fn")
    builder = factory("s", lambda ctx: None)  # the contract lists .stream(...) and .timestamped_stream(...)
    for method in ("fill_buffer_fn", "destroy_fn", "distributed", "create_snapshot_fn", "restore_snapshot_fn",
                   "build"):
        assert callable(getattr(builder, method, None)), f"SourceBuilder.{kind}(...).{method} is missing"


def test_batch_source_when_run_then_create_fn_gets_context_and_buffer_close_ends_the_data():
    from processors import Context, SourceBuilder, verify_processor

    contexts = []

    def create(ctx):
        contexts.append(ctx)
        return iter(range(5))

    def fill(it, buf):
        for item in it:
            buf.add(item)
            if item % 2:
                return
        buf.close()

    source = SourceBuilder.batch("numbers", create).fill_buffer_fn(fill).build()
    assert source.name == "numbers"
    verify_processor(source).disable_snapshots().expect_output([0, 1, 2, 3, 4])
    assert contexts and all(isinstance(ctx, Context) for ctx in contexts)


def test_batch_source_when_not_distributed_then_one_processor_in_the_whole_job():
    from processors import Context, SourceBuilder
    from processors.execution.staged import drive

    source = SourceBuilder.batch("one", lambda ctx: None).fill_buffer_fn(
        lambda state, buf: (buf.add("x"), buf.close())).build()
    assert source.preferred_local_parallelism() == 1
    source.init(Context(local_parallelism=1, total_parallelism=2))
    get_supplier = source.get([0, 1])
    outputs = []
    for member in (0, 1):
        (processor,) = get_supplier(member).get(1)
        ctx = Context(local_parallelism=1, total_parallelism=2, member_index=member, global_processor_index=member)
        outputs.append([item for _, batch in drive(processor, ctx, inbound=[], inbound_priorities={},
                                                   outbound_capacities=[8]) for item in batch])
    assert outputs == [["x"], []]
    distributed = SourceBuilder.batch("many", lambda ctx: None).fill_buffer_fn(lambda s, b: b.close()).distributed(3)
    assert distributed.build().preferred_local_parallelism() == 3


def test_sink_builder_when_inspected_then_as_contract_with_default_parallelism_one():
    from processors import SinkBuilder

    check_params(SinkBuilder.sink_builder, "name", "create_fn")
    builder = SinkBuilder.sink_builder("sink", lambda ctx: [])
    check_methods(type(builder), receive_fn=1, flush_fn=1, destroy_fn=1, preferred_local_parallelism=1, build=())
    built = builder.receive_fn(lambda state, item: state.append(item)).build()
    assert built.name == "sink" and built.preferred_local_parallelism() == 1


def test_sink_builder_preferred_local_parallelism_when_inspected_then_parameter_named_n():
    from processors import SinkBuilder

    check_params(SinkBuilder.preferred_local_parallelism, "n")  # the contract: .preferred_local_parallelism(n)


# ---- streaming: event time and windows ------------------------------------------------------------------------


def test_event_time_signatures_when_inspected_then_as_contract():
    p = processors_package
    check_params(p.sliding_win_policy, "window_size", "slide_by")
    check_params(p.tumbling_win_policy, "window_size")
    check_property(p.SlidingWindowPolicy, "frame_size", "frame_offset", "window_size")
    check_methods(p.SlidingWindowPolicy, is_tumbling=(), floor_frame_ts=1, higher_frame_ts=1,
                  with_offset=("offset",), to_tumbling_by_frame=())
    check_params(p.TimestampedEntry.from_window_result, "start", "end", "key", "value")
    check_params(p.limiting_lag, "lag")
    check_params(p.limiting_lag_and_delay, "lag", "max_delay_ms")
    check_params(p.limiting_lag_and_lull, "lag", "max_lull_ms")
    check_params(p.limiting_timestamp_and_wall_clock_lag, "timestamp_lag", "wall_clock_lag")
    check_methods(p.WatermarkEmissionPolicy, throttle_wm=("current_wm", "last_emitted_wm"))
    check_params(p.emit_by_min_step, "min_step")
    check_params(p.emit_by_frame, "win_policy")
    check_params(p.wm_gen_params, "timestamp_fn", "new_wm_policy_fn", "wm_emit_policy", "idle_timeout_ms",
                 "wrap_fn", idle_timeout_ms=60000, wrap_fn=None)
    check_params(p.insert_watermarks_p, "wm_gen_params")
    assert p.MIN_WATERMARK == -(2**63)


def test_window_processor_factories_when_inspected_then_as_contract():
    p = processors_package
    from_window_result = p.TimestampedEntry.from_window_result
    check_params(p.accumulate_by_frame_p, "key_fns", "timestamp_fns", "timestamp_kind", "win_policy", "aggr_op")
    check_params(p.combine_to_sliding_window_p, "win_policy", "aggr_op", "map_to_output_fn",
                 map_to_output_fn=from_window_result)
    check_params(p.aggregate_to_sliding_window_p, "key_fns", "timestamp_fns", "timestamp_kind", "win_policy",
                 "aggr_op", "map_to_output_fn", map_to_output_fn=from_window_result)
    check_params(p.aggregate_to_session_window_p, "session_timeout", "timestamp_fns", "key_fns", "aggr_op",
                 "map_to_output_fn", map_to_output_fn=p.WindowResult)
    policy = p.sliding_win_policy(4, 2)
    dag = dag_package.DAG()
    for name, supplier in [
        ("s1", p.accumulate_by_frame_p([p.entry_key], [p.entry_value], p.TimestampKind.EVENT, policy, p.counting())),
        ("s2", p.combine_to_sliding_window_p(policy, p.counting())),
        ("one", p.aggregate_to_sliding_window_p(p.entry_key, p.entry_value, p.TimestampKind.EVENT, policy,
                                                p.counting())),
        ("session", p.aggregate_to_session_window_p(10, p.entry_value, p.entry_key, p.counting())),
        ("wm", p.insert_watermarks_p(p.wm_gen_params(p.entry_value, p.limiting_lag(1), p.no_throttling()))),
    ]:
        dag.new_vertex(name, supplier)


def test_windowing_processor_when_watermark_given_then_window_results_and_watermark_forwarded():
    p = processors_package
    supplier = p.aggregate_to_sliding_window_p(p.entry_key, p.entry_value, p.TimestampKind.EVENT,
                                               p.tumbling_win_policy(2), p.counting(), p.WindowResult)
    p.verify_processor(supplier).input([("a", 0), ("a", 1), p.Watermark(2)]).expect_output(
        [p.WindowResult(0, 2, "a", 2), p.Watermark(2)])


def test_watermark_policy_factories_when_called_then_fresh_policy_objects_with_contract_methods():
    p = processors_package
    for factory in (p.limiting_lag(1), p.limiting_lag_and_delay(1, 10), p.limiting_lag_and_lull(1, 10),
                    p.limiting_timestamp_and_wall_clock_lag(1, 10)):
        first, second = factory(), factory()
        assert first is not second
        check_methods(type(first), report_event=1, get_current_watermark=0)


def test_window_items_when_built_then_entries_with_attributes():
    p = processors_package
    te = p.TimestampedEntry(4, "k", 1)
    wr = p.WindowResult(0, 4, "k", 1)
    assert (p.entry_key(te), p.entry_value(te), te.timestamp) == ("k", 1, 4)
    assert (p.entry_key(wr), p.entry_value(wr), wr.start, wr.end) == ("k", 1, 0, 4)
    assert [k.name for k in p.TimestampKind] == ["EVENT", "FRAME"]
    with pytest.raises(ValueError, match="slide_by"):
        p.sliding_win_policy(4, 0)


def test_timestamped_source_builder_when_inspected_then_allowed_lag_and_idle_timeout():
    builder = processors_package.SourceBuilder.timestamped_stream("s", lambda ctx: None)
    check_methods(type(builder), allowed_lag=("ms",), idle_timeout=("ms",))


# ---- the packages stay engine-free ---------------------------------------------------------------------------


def test_packages_when_listed_then_all_contract_names_exported():
    exported = set(edges_package.__all__) | set(dag_package.__all__) | set(processors_package.__all__)
    missing = [f"{p}.{n}" for p, n in CONTRACT_NAMES if n not in exported]
    assert not missing, f"contract names missing from __all__: {missing}"
