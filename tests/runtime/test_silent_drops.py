"""Jobs fail loudly where Jet does instead of dropping items: a flat_map_p function returning None (Jet's null
traverser) and a partitioned edge's key function returning None ("Null key from key extractor")."""

from __future__ import annotations

import pytest

from dag import DAG, JobFailedError
from edges import between
from processors import flat_map_p, read_list_p, write_list_p
from tests.support import numbers, unique

pytestmark = pytest.mark.spark


def explode(x):
    return None if x == 3 else [x, x]


def test_job_when_flat_map_fn_returns_none_then_fails_naming_vertex_and_function(engine):
    dag = DAG()
    source = dag.new_vertex("numbers", read_list_p(numbers(engine, 6)), local_parallelism=1)
    twice = dag.new_vertex("twice", flat_map_p(explode), local_parallelism=1)
    sink = dag.new_vertex("sink", write_list_p(unique("out")))
    dag.edge(between(source, twice)).edge(between(twice, sink))
    with pytest.raises(JobFailedError) as info:
        engine.new_job(dag).join()
    assert (info.value.vertex, info.value.exc_type) == ("twice", "ProcessorContractError")
    assert "the function explode returned None" in info.value.exc_message


@pytest.mark.parametrize("sink_parallelism", [1, 2])
def test_job_when_key_fn_returns_none_then_null_key_error_names_edge(engine, sink_parallelism):
    dag = DAG()
    source = dag.new_vertex("numbers", read_list_p(numbers(engine, 6)), local_parallelism=1)
    sink = dag.new_vertex("sink", write_list_p(unique("out")), local_parallelism=sink_parallelism)
    dag.edge(between(source, sink).partitioned(lambda x: None if x == 4 else x))
    with pytest.raises(JobFailedError) as info:
        engine.new_job(dag).join()
    assert info.value.vertex == "numbers"
    assert 'Null key from key extractor, edge: between("numbers", "sink").partitioned(?)' in info.value.exc_message
