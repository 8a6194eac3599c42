"""The public home of jetspark's error hierarchy (see :mod:`jetspark_base.errors`, where it lives).

>>> from dag.errors import DagError, JobFailedError
>>> issubclass(JobFailedError, DagError)
True
"""

from jetspark_base.errors import (CancellationError, CycleError, DagError, DagValidationError, JobFailedError,
                                  ProcessorContractError, RestartableError, WebUIError)

__all__ = ["DagError", "DagValidationError", "CycleError", "ProcessorContractError", "RestartableError",
           "JobFailedError", "CancellationError", "WebUIError"]
