"""Scale of DAGs on Spark: chains far longer than Python's recursion limit allows for nested generators."""

from __future__ import annotations

import uuid

import pytest

from dag import DAG
from edges import between
from processors import AbstractProcessor, map_p, read_list_p, write_list_p

pytestmark = pytest.mark.spark


class PlusOne(AbstractProcessor):
    """A user processor on the generic inbox/outbox path (the deepest per-vertex nesting)."""

    def try_process0(self, item):
        return self.try_emit(item + 1)


def test_chain_when_600_fused_vertices_then_runs_without_recursion_error(engine):
    """A fused chain of 198 or more vertices used to fail with RecursionError from nested generators."""
    source, sink = f"in-{uuid.uuid4().hex}", f"out-{uuid.uuid4().hex}"
    engine.get_list(source).extend(range(100))
    dag = DAG()
    previous = dag.new_vertex("source", read_list_p(source))
    for i in range(600):
        supplier = PlusOne if i % 2 else map_p(lambda x: x + 1)
        vertex = dag.new_vertex(f"v{i}", supplier)
        dag.edge(between(previous, vertex))
        previous = vertex
    dag.edge(between(previous, dag.new_vertex("sink", write_list_p(sink))))
    engine.new_job(dag).join()
    assert sorted(engine.get_list(sink)) == [x + 600 for x in range(100)]
