"""jetspark's DAG: the model (vertices, edges, validation, DOT) and running it on Spark.

Names are exported lazily, so ``import dag`` is cheap and never starts a JVM; only creating an
:class:`Engine` does.

>>> from dag import DAG
>>> from processors import noop_p
>>> d = DAG()
>>> v = d.new_vertex("v", noop_p())
>>> [x.name for x in d]
['v']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jetspark_base.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    # errors
    "DagError": "dag.errors",
    "DagValidationError": "dag.errors",
    "CycleError": "dag.errors",
    "ProcessorContractError": "dag.errors",
    "JobFailedError": "dag.errors",
    "CancellationError": "dag.errors",
    "RestartableError": "dag.errors",
    # model
    "DAG": "dag.model",
    "Vertex": "dag.vertex",
    "DagDescription": "dag.describe",
    # configuration
    "EngineConfig": "dag.config",
    "JobConfig": "dag.config",
    "ProcessingGuarantee": "dag.config",
    "ExecutionMode": "dag.config",
    # runtime
    "Engine": "dag.runtime.engine",
    "Job": "dag.runtime.job",
    "JobStatus": "dag.runtime.common.status",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("dag", _EXPORTS, globals())


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from dag.config import EngineConfig, ExecutionMode, JobConfig, ProcessingGuarantee
    from dag.describe import DagDescription
    from dag.errors import (CancellationError, CycleError, DagError, DagValidationError, JobFailedError,
                            ProcessorContractError, RestartableError)
    from dag.model import DAG
    from dag.runtime.engine import Engine
    from dag.runtime.common.status import JobStatus
    from dag.runtime.job import Job
    from dag.vertex import Vertex
