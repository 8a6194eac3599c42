from __future__ import annotations

import pickle

import pytest

from dag.errors import DagValidationError
from processors import Context, ContextFactory, entry, entry_key, entry_value, whole_item


def test_entry_functions():
    e = entry("k", 3)
    assert e == ("k", 3) and entry_key(e) == "k" and entry_value(e) == 3 and whole_item(e) is e


def test_context_defaults_as_jet_test_context():
    ctx = Context()
    assert ctx.vertex_name == "testVertex" and ctx.job_id == 1
    assert ctx.global_processor_index == 0 and ctx.local_processor_index == 0 and ctx.member_index == 0
    assert ctx.total_parallelism == 1 and ctx.local_parallelism == 1 and ctx.member_count == 1
    assert ctx.logger.name == "jetspark.testVertex#0"
    assert str(getattr(ctx.processing_guarantee, "name", ctx.processing_guarantee)) == "NONE"


def test_context_member_count_derived_and_checked():
    assert Context(total_parallelism=6, local_parallelism=2).member_count == 3
    with pytest.raises(DagValidationError, match="multiple"):
        Context(total_parallelism=5, local_parallelism=2)


def test_context_replace_and_pickle():
    ctx = Context(vertex_name="v", local_parallelism=2, total_parallelism=4)
    moved = ctx.replace(global_processor_index=3, local_processor_index=1, member_index=1)
    assert moved.global_processor_index == 3 and moved.member_count == 2 and moved.logger.name == "jetspark.v#3"
    clone = pickle.loads(pickle.dumps(moved))
    assert clone.vertex_name == "v" and clone.global_processor_index == 3 and clone.logger.name == "jetspark.v#3"


def test_context_factory_create_destroy_and_cooperative():
    destroyed = []
    f = ContextFactory.with_create_fn(lambda ctx: {"vertex": ctx.vertex_name}).with_destroy_fn(destroyed.append)
    obj = f.create(Context(vertex_name="v"))
    assert obj == {"vertex": "v"} and f.is_cooperative
    f.destroy(obj)
    assert destroyed == [obj]
    nc = f.non_cooperative()
    assert not nc.is_cooperative and f.is_cooperative and nc.destroy_fn is f.destroy_fn


def test_context_factory_zero_arg_create_fn_accepted():
    assert ContextFactory(lambda: 5).create(Context()) == 5


def test_context_factory_when_not_callable_then_type_error():
    with pytest.raises(TypeError, match="callable"):
        ContextFactory(5)
