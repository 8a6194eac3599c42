from __future__ import annotations

import pytest

from dag import DAG, DagValidationError, Vertex
from processors import ProcessorMetaSupplier
from tests.support.processors import Nop


class Preferring(ProcessorMetaSupplier):
    def __init__(self, preferred):
        self.preferred = preferred

    def preferred_local_parallelism(self):
        return self.preferred

    def get(self, member_indices):
        raise AssertionError("not used")


def test_vertex_when_constructed_then_default_parallelism_and_supplier_kept():
    supplier = lambda: Nop()  # noqa: E731
    v = Vertex("v", supplier)
    assert v.name == "v" and v.local_parallelism is None and v.supplier is supplier
    assert isinstance(v.meta_supplier, ProcessorMetaSupplier)
    assert str(v) == "Vertex v" and repr(Vertex("w", Nop, 3)) == "Vertex('w', local_parallelism=3)"


@pytest.mark.parametrize("value, stored", [(None, None), (-1, None), (1, 1), (16, 16)])
def test_local_parallelism_when_valid_then_stored(value, stored):
    v = Vertex("v", Nop, local_parallelism=value)
    assert v.local_parallelism == stored
    v.local_parallelism = 5
    v.local_parallelism = value
    assert v.local_parallelism == stored


@pytest.mark.parametrize("bad", [0, -5, -2, 1.5, True, "2"])
def test_local_parallelism_when_bad_then_message_names_vertex(bad):
    with pytest.raises(DagValidationError, match=r"Vertex 'tokenize': local_parallelism must be None \(or -1\)"):
        Vertex("tokenize", Nop, local_parallelism=bad)
    v = Vertex("tokenize", Nop, local_parallelism=2)
    with pytest.raises(DagValidationError, match="Vertex 'tokenize'"):
        v.local_parallelism = bad
    assert v.local_parallelism == 2


@pytest.mark.parametrize("bad", ["", None, 3])
def test_vertex_when_bad_name_then_rejected(bad):
    with pytest.raises(DagValidationError, match="vertex name must be a non-empty str"):
        Vertex(bad, Nop)


def test_vertex_when_supplier_none_then_rejected():
    with pytest.raises(DagValidationError, match="Vertex 'v': supplier is None"):
        Vertex("v", None)


def test_vertex_when_supplier_unusable_then_error_names_vertex():
    with pytest.raises(DagValidationError, match="(?i)vertex 'v': int 42 is not a processor supplier"):
        Vertex("v", 42)


@pytest.mark.parametrize(
    "lp, preferred, default, expected",
    [
        (None, None, 4, 4),
        (None, None, None, None),
        (None, None, -1, None),
        (3, None, 4, 3),
        (3, 1, 4, 3),
        (None, 1, 16, 1),
        (None, 8, 4, 4),
        (None, 2, None, 2),
        (None, 2, -1, 2),
        (None, -1, 4, 4),
    ],
)
def test_determine_local_parallelism_when_combinations_then_jet_rule(lp, preferred, default, expected):
    v = Vertex("v", Preferring(preferred), local_parallelism=lp)
    assert v.determine_local_parallelism(default) == expected


@pytest.mark.parametrize("bad", [0, -3, 1.5])
def test_determine_local_parallelism_when_bad_preferred_then_names_vertex_and_supplier(bad):
    v = Vertex("src", Preferring(bad))
    with pytest.raises(DagValidationError, match=r"Vertex 'src': Preferring\.preferred_local_parallelism\(\) returned"):
        v.determine_local_parallelism(4)


def test_determine_local_parallelism_when_bad_default_then_rejected():
    with pytest.raises(DagValidationError, match="^Vertex 'v': default_local_parallelism must be None"):
        Vertex("v", Nop).determine_local_parallelism(0)


def test_new_vertex_when_local_parallelism_given_then_set():
    assert DAG().new_vertex("v", Nop, local_parallelism=2).local_parallelism == 2
