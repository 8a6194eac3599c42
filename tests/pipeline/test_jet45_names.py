"""Jet 4.5's names and signatures, engine-free: sources taking the map/list object or its name, the aggregate
operation builder, both forms of aggregate2/aggregate3, service factories, ingestion timestamps, and the
errors for bad arguments (issue 27, part 2)."""

from __future__ import annotations

import pytest

from dag.errors import DagValidationError
from dag.runtime.common.driver_collections import DriverCollections
from pipeline import AggregateOperation, Pipeline, ServiceFactories, Sinks, Sources, TestSources
from processors import ContextFactory, aggregate_operation2, counting, summing, to_list


def _names(p: Pipeline) -> list[str]:
    return [v.name for v in p.to_dag().vertices]


# ------------------------------------------------------------------ sources: the object or its name
def test_sources_when_given_the_driver_objects_then_named_after_them() -> None:
    store = DriverCollections(partition_count=4)
    assert Sources.list(store.get("list", "words")).name == "listSource(words)"
    assert Sources.map(store.get("map", "prices")).name == "mapSource(prices)"
    assert Sources.map_journal(store.get("map", "prices")).name == "mapJournalSource(prices)"
    assert Sources.map("prices").name == "mapSource(prices)"


@pytest.mark.parametrize("factory, owner", [(Sources.map, "Sources.map"), (Sources.list, "Sources.list"),
                                            (Sources.map_journal, "Sources.map_journal")])
def test_sources_when_given_a_plain_big_collection_then_short_error_naming_the_factory(factory, owner) -> None:
    big = {f"key-{i}": i for i in range(10_000)}
    with pytest.raises(DagValidationError) as info:
        factory(big)
    text = str(info.value)
    assert owner in text and "engine.get_" in text and "dict" in text
    assert len(text) < 400 and "key-9999" not in text


def test_map_source_with_predicate_and_projection_when_lowered_then_select_vertex_after_the_source() -> None:
    p = Pipeline.create()
    p.read_from(Sources.map("m", lambda e: e[1] > 1, lambda e: e[0])).write_to(Sinks.list("out"))
    assert _names(p) == ["mapSource(m)", "mapSource(m)-select", "listSink(out)"]
    select = p.to_dag().get_vertex("mapSource(m)-select").meta_supplier
    assert select.get([0])(0).get(1)[0].transform_batch([("a", 1), ("b", 2)]) == ["b"]


# ------------------------------------------------------------------ the aggregate operation builder
class LongAccumulator:
    """Jet's sample accumulator: mutated in place, its methods return None."""

    def __init__(self) -> None:
        self.value = 0

    def add(self, other) -> None:
        self.value += other.value if isinstance(other, LongAccumulator) else other

    def subtract(self, other: LongAccumulator) -> None:
        self.value -= other.value


def test_builder_when_functions_mutate_and_return_none_then_accumulator_kept() -> None:
    op = (AggregateOperation.with_create(LongAccumulator)
          .and_accumulate(lambda acc, item: acc.add(item))
          .and_combine(LongAccumulator.add)
          .and_deduct(LongAccumulator.subtract)
          .and_export_finish(lambda acc: acc.value))
    left, right = op.create(), op.create()
    for x in (1, 2, 3):
        left = op.accumulate(left, x)
    right = op.accumulate(right, 10)
    both = op.combine(left, right)
    assert op.finish(both) == 16 and op.arity == 1
    assert op.export(op.deduct(both, right)) == 6


def test_builder_when_two_inputs_and_export_then_finish_then_arity_two() -> None:
    op = (AggregateOperation.with_create(lambda: [0, 0])
          .and_accumulate0(lambda acc, x: acc.__setitem__(0, acc[0] + x))
          .and_accumulate1(lambda acc, x: acc.__setitem__(1, acc[1] + 1))
          .and_export(tuple).and_finish(lambda acc: f"{acc[0]}/{acc[1]}"))
    acc = op.accumulate(op.accumulate(op.create(), 5, 0), "x", 1)
    assert op.arity == 2 and op.export(acc) == (5, 1) and op.finish(acc) == "5/1"


def test_builder_when_steps_out_of_order_then_errors_say_the_order() -> None:
    with pytest.raises(DagValidationError, match="and_accumulate1"):
        AggregateOperation.with_create(list).and_accumulate1(list.append)
    with pytest.raises(DagValidationError, match="and_accumulate0, and_accumulate1"):
        AggregateOperation.with_create(list).and_accumulate(list.append).and_accumulate1(list.append)
    with pytest.raises(DagValidationError, match="and_export"):
        AggregateOperation.with_create(list).and_accumulate(list.append).and_finish(len)
    with pytest.raises(DagValidationError, match="before any accumulate"):
        AggregateOperation.with_create(list).and_export_finish(len)
    with pytest.raises(DagValidationError, match="callable"):
        AggregateOperation.with_create(list).and_accumulate("append")


# ------------------------------------------------------------------ aggregate2 / aggregate3 forms
def test_aggregate3_when_one_three_input_op_then_accepted_and_lowered_to_co_group() -> None:
    p = Pipeline.create()
    a, b, c = (p.read_from(Sources.list(n)).grouping_key(len) for n in "abc")
    op3 = (AggregateOperation.with_create(lambda: [0, 0, 0]).and_accumulate0(lambda acc, x: None)
           .and_accumulate1(lambda acc, x: None).and_accumulate2(lambda acc, x: None).and_export_finish(tuple))
    a.aggregate3(b, c, op3).write_to(Sinks.list("out"))
    assert "co-group-and-aggregate" in _names(p)


def test_aggregate3_when_wrong_arguments_then_error_lists_both_forms() -> None:
    p = Pipeline.create()
    a, b = p.read_from(Sources.list("a")), p.read_from(Sources.list("b"))
    with pytest.raises(TypeError) as info:
        a.aggregate3(b, counting())
    text = str(info.value)
    assert "stage 'listSource(a)'" in text and "(op0, stage1, op1, stage2, op2)" in text
    assert "(stage1, stage2, op3)" in text and "got (BatchStage, AggregateOperation)" in text


def test_aggregate2_when_multi_input_op_has_wrong_arity_then_error_names_both_arities() -> None:
    p = Pipeline.create()
    a, b = p.read_from(Sources.list("a")), p.read_from(Sources.list("b"))
    with pytest.raises(DagValidationError, match="operation for 2 inputs.*with 1"):
        a.aggregate2(b, counting())
    a.aggregate2(b, aggregate_operation2(counting(), summing())).write_to(Sinks.list("out"))
    a.aggregate2(counting(), b, to_list()).write_to(Sinks.list("out2"))


@pytest.mark.parametrize("keyed", [True, False])
def test_aggregate_when_op_for_more_inputs_then_error(keyed: bool) -> None:
    p = Pipeline.create()
    stage = p.read_from(Sources.list("a"))
    stage = stage.grouping_key(len) if keyed else stage
    with pytest.raises(DagValidationError, match="operation for 2 inputs.*aggregate2"):
        stage.aggregate(aggregate_operation2(counting(), counting()))


# ------------------------------------------------------------------ services
class _Ctx:
    job_id = 7


def test_shared_service_when_three_processors_then_one_service_destroyed_by_the_last() -> None:
    created, destroyed = [], []
    factory = ServiceFactories.shared_service(lambda ctx: created.append(ctx.job_id) or {"n": len(created)},
                                              destroyed.append).to_context_factory()
    handles = [factory.create(_Ctx()) for _ in range(3)]
    assert created == [7] and all(h is handles[0] for h in handles)
    factory.destroy(handles[0]); factory.destroy(handles[1])
    assert destroyed == []
    factory.destroy(handles[2])
    assert destroyed == [{"n": 1}]


def test_non_shared_service_when_two_processors_then_two_services() -> None:
    factory = ServiceFactories.non_shared_service(lambda: object()).to_context_factory()
    one, two = factory.create(_Ctx()), factory.create(_Ctx())
    assert one is not two


def test_using_service_when_lowered_then_jet_vertex_names_and_keyed_form_partitioned() -> None:
    p = Pipeline.create()
    service = ServiceFactories.non_shared_service(lambda: 2).to_non_cooperative()
    (p.read_from(Sources.list("in")).map_using_service(service, lambda s, x: x)
     .filter_using_service(service, lambda s, x: True).grouping_key(str)
     .flat_map_using_service(service, lambda s, k, x: [x]).write_to(Sinks.list("out")))
    dag = p.to_dag()
    assert [v.name for v in dag.vertices] == ["listSource(in)", "map-using-service", "filter-using-service",
                                             "flat-map-using-service", "listSink(out)"]
    edge, = dag.get_inbound_edges("flat-map-using-service")
    assert edge.is_distributed


def test_using_service_when_given_a_context_factory_then_error_points_to_map_using_context() -> None:
    p = Pipeline.create()
    with pytest.raises(TypeError, match="ServiceFactory.*map_using_context"):
        p.read_from(Sources.list("in")).map_using_service(ContextFactory.with_create_fn(lambda: 1), lambda s, x: x)


# ------------------------------------------------------------------ ingestion timestamps
def test_with_ingestion_timestamps_when_lowered_then_timestamps_in_the_source() -> None:
    p = Pipeline.create()
    stage = p.read_from(TestSources.item_stream(10)).with_ingestion_timestamps()
    stage.write_to(Sinks.noop())
    assert _names(p) == ["itemStream", "noop"]
    assert stage._transform.events  # noqa: SLF001 - windows may follow


def test_stream_source_stage_when_operation_before_timestamps_then_error_lists_every_choice() -> None:
    p = Pipeline.create()
    with pytest.raises(AttributeError, match="with_ingestion_timestamps()"):
        p.read_from(TestSources.item_stream(10)).map(str)
    p.read_from(TestSources.item_stream(10)).without_timestamps().write_to(Sinks.noop())


# ------------------------------------------------------------------ JsonUtil, traverse_array
def test_json_util_when_round_trip_then_dicts_lists_and_beans() -> None:
    from dataclasses import dataclass
    from typing import NamedTuple

    from pipeline import JsonUtil
    from processors import traverse_array

    class Person(NamedTuple):
        name: str
        age: int

    @dataclass
    class Team:
        members: list

    text = JsonUtil.to_json(Team([Person("Ann", 30)]))
    assert text == '{"members": [{"name": "Ann", "age": 30}]}'
    assert JsonUtil.map_from(text) == {"members": [{"name": "Ann", "age": 30}]}
    assert JsonUtil.list_from("[1, 2]") == [1, 2]
    assert JsonUtil.bean_from('{"name": "Bo", "age": 5}', Person) == Person("Bo", 5)
    with pytest.raises(DagValidationError, match="Person cannot take the fields \\['height', 'name'\\]"):
        JsonUtil.bean_from('{"name": "Bo", "height": 5}', Person)
    with pytest.raises(ValueError, match="expected a JSON object, got list"):
        JsonUtil.map_from("[1]")
    assert traverse_array((1, None, 2)).to_list() == [1, 2]
