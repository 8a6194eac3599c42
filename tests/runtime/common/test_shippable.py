"""User functions that cannot be pickled are found on the driver at new_job, naming vertex, function and object."""

from __future__ import annotations

import socket
import threading

import pytest

from dag import DAG
from dag.errors import DagValidationError
from dag.runtime.common.shippable import check_shippable, find_unpicklable
from edges import between
from processors import AbstractProcessor, map_p, noop_p, read_list_p


def locked_dag():
    guard = threading.Lock()

    def guarded(x):
        with guard:
            return x

    dag = DAG()
    source = dag.new_vertex("source", noop_p())
    work = dag.new_vertex("guarded", map_p(guarded))
    return dag.edge(between(source, work))


def test_check_when_builtin_supplier_captures_lock_then_names_vertex_function_and_object():
    with pytest.raises(DagValidationError) as info:
        check_shippable(locked_dag())
    message = str(info.value)
    assert "the processor supplier of vertex 'guarded' cannot be sent to Spark's workers" in message
    assert "map_p(guarded) -> argument #0 (locked_dag.<locals>.guarded) -> captured variable guard" in message
    assert "_thread.lock" in message and "init_processor(context)" in message


class HoldsSocket(AbstractProcessor):
    def __init__(self, sock):
        super().__init__()
        self.sock = sock


def test_check_when_factory_captures_processor_holding_socket_then_attribute_named():
    with socket.socket() as sock:
        processor = HoldsSocket(sock)
        dag = DAG()
        dag.new_vertex("net", lambda: processor)
        with pytest.raises(DagValidationError, match=r"vertex 'net'.* -> attribute sock is socket"):
            check_shippable(dag)


def test_check_when_key_fn_captures_lock_then_edge_named():
    guard = threading.Lock()
    dag = DAG()
    a, b = dag.new_vertex("a", noop_p()), dag.new_vertex("b", noop_p())
    dag.edge(between(a, b).partitioned(lambda x: guard and x))
    with pytest.raises(DagValidationError, match=r'key function of edge between\("a", "b"\)\.partitioned\(\?\)'):
        check_shippable(dag)


def test_check_when_everything_picklable_then_passes():
    dag = DAG()
    source = dag.new_vertex("source", read_list_p("items"))
    dag.edge(between(source, dag.new_vertex("upper", map_p(str.upper))))
    check_shippable(dag)
    assert find_unpicklable(map_p(str.upper)) is None


@pytest.mark.spark
def test_new_job_when_supplier_unpicklable_then_rejected_before_spark_runs(engine):
    jobs_before = len(engine.get_jobs())
    with pytest.raises(DagValidationError, match="vertex 'guarded'.*captured variable guard"):
        engine.new_job(locked_dag())
    assert len(engine.get_jobs()) == jobs_before
