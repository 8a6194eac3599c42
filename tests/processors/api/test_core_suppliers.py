from __future__ import annotations

import pytest

from dag.errors import DagValidationError, ProcessorContractError
from processors import Context, Inbox, Processor, ProcessorMetaSupplier, ProcessorSupplier
from processors.api.suppliers import RuntimeBound, to_meta_supplier


class P(Processor):
    def __init__(self, tag="p"):
        self.tag = tag


def test_processor_supplier_of_calls_factory_count_times():
    made = []
    ps = ProcessorSupplier.of(lambda: made.append(1) or P())
    procs = ps.get(3)
    assert len(procs) == 3 and len(made) == 3 and len({id(p) for p in procs}) == 3


def test_processor_supplier_of_when_factory_returns_non_processor_then_error_names_vertex():
    ps = ProcessorSupplier.of(lambda: 42)
    ps.init(Context(vertex_name="tokenize"))
    with pytest.raises(DagValidationError, match="vertex 'tokenize'.*not a Processor"):
        ps.get(1)


def test_meta_supplier_of_uses_same_supplier_everywhere_with_preference():
    ps = ProcessorSupplier.of(P)
    pms = ProcessorMetaSupplier.of(ps, preferred_local_parallelism=3)
    assert pms.preferred_local_parallelism() == 3
    fn = pms.get([0, 1])
    assert fn(0) is ps and fn(1) is ps


def test_meta_supplier_of_minus_one_means_no_preference():
    assert ProcessorMetaSupplier.of(P, -1).preferred_local_parallelism() is None
    assert ProcessorMetaSupplier.of(P).preferred_local_parallelism() is None


def test_prefer_local_parallelism_one():
    assert ProcessorMetaSupplier.prefer_local_parallelism_one(P).preferred_local_parallelism() == 1


def test_force_total_parallelism_one_real_processor_only_on_member_zero():
    pms = ProcessorMetaSupplier.force_total_parallelism_one(lambda: P("real"))
    assert pms.preferred_local_parallelism() == 1
    pms.init(Context(vertex_name="src", local_parallelism=1, total_parallelism=3))
    fn = pms.get([0, 1, 2])
    assert fn(0).get(1)[0].tag == "real"
    other = fn(1).get(1)[0]
    assert not isinstance(other, P)
    assert other.complete()
    with pytest.raises(ProcessorContractError, match="vertex 'src'"):
        other.process(0, Inbox([1]))


def test_force_total_parallelism_one_when_restored_then_stand_in_drops_the_broadcast_state():
    pms = ProcessorMetaSupplier.force_total_parallelism_one(lambda: P("real"))
    pms.init(Context(vertex_name="src", local_parallelism=1, total_parallelism=2))
    stand_in = pms.get([0, 1])(1).get(1)[0]
    restored = Inbox([("offset", 10)])  # the real processor's broadcast state reaches every processor (Jet too)
    stand_in.restore_from_snapshot(restored)
    assert restored.is_empty() and stand_in.finish_snapshot_restore()


def test_force_total_parallelism_one_when_local_parallelism_not_one_then_error_names_vertex():
    pms = ProcessorMetaSupplier.force_total_parallelism_one(P)
    with pytest.raises(DagValidationError, match="Local parallelism of 2 .*vertex 'src'.*must be 1"):
        pms.init(Context(vertex_name="src", local_parallelism=2, total_parallelism=2))


def test_force_total_parallelism_one_when_member_missing_then_error():
    pms = ProcessorMetaSupplier.force_total_parallelism_one(P, member_index=3)
    pms.init(Context(vertex_name="src"))
    with pytest.raises(DagValidationError, match="required member"):
        pms.get([0, 1])


def test_to_meta_supplier_accepts_callable_ps_and_pms():
    pms = ProcessorMetaSupplier.of(P)
    assert to_meta_supplier(pms) is pms
    ps = ProcessorSupplier.of(P)
    assert to_meta_supplier(ps).get([0])(0) is ps
    wrapped = to_meta_supplier(lambda: P("x"))
    assert wrapped.get([0])(0).get(1)[0].tag == "x"
    assert isinstance(to_meta_supplier(P).get([0])(0).get(1)[0], P)


@pytest.mark.parametrize(
    "bad, match",
    [
        (P(), "processor instance P"),
        (42, "not a processor supplier"),
        (lambda a, b: P(), "needs argument"),
    ],
)
def test_to_meta_supplier_when_bad_input_then_error_names_vertex(bad, match):
    with pytest.raises(DagValidationError, match=match) as err:
        to_meta_supplier(bad, vertex_name="v1")
    assert "vertex 'v1'" in str(err.value)


def test_runtime_bound_marker_get_raises():
    class ReadThing(RuntimeBound, ProcessorMetaSupplier):
        runtime_kind = "driver_source"

    r = ReadThing()
    assert isinstance(to_meta_supplier(r), RuntimeBound)
    with pytest.raises(DagValidationError, match="only runs inside an Engine"):
        r.get([0])


@pytest.mark.parametrize("bad", [0, -2, True, 1.5, "2"])
def test_meta_supplier_of_when_bad_preference_then_rejected_naming_supplier(bad):
    with pytest.raises(DagValidationError, match=r"ProcessorMetaSupplier\.of\(.*preferred_local_parallelism"):
        ProcessorMetaSupplier.of(P, bad)


def test_to_meta_supplier_when_supplier_class_instead_of_instance_then_error_suggests_instance():
    class MySupplier(ProcessorSupplier):
        def get(self, count):
            return [P() for _ in range(count)]

    class MyMeta(ProcessorMetaSupplier):
        pass

    for cls, kind in ((MySupplier, "ProcessorSupplier"), (MyMeta, "ProcessorMetaSupplier")):
        with pytest.raises(DagValidationError, match=rf"vertex 'v': got the {kind} class {cls.__name__}; pass an "
                                                     rf"instance: {cls.__name__}\(\.\.\.\)"):
            to_meta_supplier(cls, "v")
