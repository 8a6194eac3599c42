"""A DAG's pipelined tasks run in threads of this process, without Spark and without a driver: what a test of
the task runtime (and ``bench/bench_throughput.py``) builds around ``TaskRunners``.

``in_process_spec(dag, tasks)`` plans ``dag`` for one member and ``tasks`` tasks, opens each vertex's meta
supplier as the driver does (``MetaSuppliers``) and returns the ``WorkerSpec`` every task's ``TaskRunners``
takes: links between the tasks over loopback, guarantee ``NONE``, no snapshots, a channel nobody listens on.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

from dag import DAG, EngineConfig
from dag.config import ProcessingGuarantee
from dag.planner import plan_dag
from dag.runtime.common.meta_suppliers import MetaSuppliers
from dag.runtime.pipelined.layout import make_layout
from dag.runtime.pipelined.worker import WorkerSpec

__all__ = ["in_process_spec"]


def in_process_spec(dag: DAG, tasks: int = 1, config: EngineConfig | None = None) -> WorkerSpec:
    """The spec of ``dag``'s ``tasks`` tasks on one member (``config``: default ``local[tasks]``)."""
    plan = plan_dag(dag, config or EngineConfig(master=f"local[{tasks}]"), 1, tasks)
    metas = MetaSuppliers(job_id=1, job_name="in-process", members=1, guarantee=ProcessingGuarantee.NONE)
    suppliers = {vp.name: metas.open(vp, dag.get_vertex(vp.name).meta_supplier) for vp in plan.vertices.values()}
    return WorkerSpec(job_name="in-process", job_id=1, channel=SimpleNamespace(secret=os.urandom(32)),
                      host="127.0.0.1", layout=make_layout(plan, tasks), suppliers=suppliers,
                      guarantee=ProcessingGuarantee.NONE)
