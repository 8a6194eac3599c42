"""The one error hierarchy of jetspark.

Every layer (``edges``, ``processors``, the DAG model, the planner and the runtime) raises these, so a user
catches one family::

    DagError(Exception)
    ├── DagValidationError(DagError, ValueError)   bad DAG, edge, vertex or configuration
    │   └── CycleError(DagValidationError)         the DAG has a cycle; ``.cycle`` lists it
    ├── ProcessorContractError(DagError, RuntimeError)
    │                                              a processor broke the Processor/Outbox rules
    ├── RestartableError(DagError, RuntimeError)   raised by a processor: restart the job from the last snapshot
    ├── JobFailedError(DagError, RuntimeError)     a job failed while running
    │   └── CancellationError(JobFailedError)      the job was cancelled (Jet's CancellationException)
    └── WebUIError(DagError, OSError)              the engine's web page could not start (e.g. its port is taken)

This module imports nothing of ours, so every package may import it without a cycle. Its public home is
:mod:`dag.errors` (and ``dag``), which re-exports every name.
"""

from __future__ import annotations

__all__ = [
    "DagError",
    "DagValidationError",
    "CycleError",
    "ProcessorContractError",
    "RestartableError",
    "JobFailedError",
    "CancellationError",
    "WebUIError",
]


class DagError(Exception):
    """Base class of every error jetspark raises on purpose."""


class DagValidationError(DagError, ValueError):
    """A DAG, edge, vertex or configuration is invalid.

    The message names the vertices, edges and ordinals at fault and, where one exists, the fix.
    """


class CycleError(DagValidationError):
    """The DAG contains a cycle.

    ``cycle`` holds the vertex names along the cycle, the first name repeated at the end, e.g.
    ``["a", "b", "c", "a"]`` for the message ``DAG contains a cycle: a -> b -> c -> a``.
    """

    def __init__(self, cycle: list[str]):
        self.cycle = list(cycle)
        super().__init__("DAG contains a cycle: " + " -> ".join(self.cycle))

    def __reduce__(self):  # keep picklable with the custom constructor
        return (type(self), (self.cycle,))


class ProcessorContractError(DagError, RuntimeError):
    """A processor broke the rules of the Processor contract.

    Examples: it emitted ``None``, offered to an ordinal that does not exist, offered a different item after
    ``offer`` returned False, or made no progress. The message names the processor class, the method and the
    rule broken.
    """


class RestartableError(DagError, RuntimeError):
    """Raise it from a processor to ask for a restart (Jet's ``RestartableException``).

    In a PIPELINED job with ``processing_guarantee`` ``EXACTLY_ONCE`` or ``AT_LEAST_ONCE`` the coordinator tears
    the job down and starts it again from the last complete snapshot (at most ``JobConfig.max_restarts``
    times in a row); with ``NONE`` it fails the job like any other exception. Typical use: a connection to an
    external system dropped and the processor cannot recover in place.

    >>> raise RestartableError("broker connection lost")  # doctest: +SKIP
    """


class JobFailedError(DagError, RuntimeError):
    """A job failed while running.

    Attributes (``None`` where unknown): ``job_name``, ``vertex`` (the vertex whose processor failed),
    ``processor_index`` (its global index), ``exc_type`` (name of the original exception's type),
    ``exc_message``, ``user_traceback`` (the traceback of the user's code, without JVM or py4j frames).
    """

    def __init__(
        self,
        message: str,
        *,
        job_name: str | None = None,
        vertex: str | None = None,
        processor_index: int | None = None,
        exc_type: str | None = None,
        exc_message: str | None = None,
        user_traceback: str | None = None,
    ):
        super().__init__(message)
        self.job_name = job_name
        self.vertex = vertex
        self.processor_index = processor_index
        self.exc_type = exc_type
        self.exc_message = exc_message
        self.user_traceback = user_traceback

    def __reduce__(self):
        return (
            _rebuild_job_failed,
            (
                str(self),
                self.job_name,
                self.vertex,
                self.processor_index,
                self.exc_type,
                self.exc_message,
                self.user_traceback,
            ),
        )


def _rebuild_job_failed(message, job_name, vertex, processor_index, exc_type, exc_message, user_traceback):
    return JobFailedError(
        message,
        job_name=job_name,
        vertex=vertex,
        processor_index=processor_index,
        exc_type=exc_type,
        exc_message=exc_message,
        user_traceback=user_traceback,
    )


class CancellationError(JobFailedError):
    """The job was cancelled (``job.cancel()``); ``join()`` raises it and the job ends ``FAILED``."""

    def __reduce__(self):
        return (_rebuild_cancellation, (str(self), self.job_name))


def _rebuild_cancellation(message, job_name):
    return CancellationError(message, job_name=job_name, exc_type="CancellationException", exc_message="cancelled")


class WebUIError(DagError, OSError):
    """The engine's web page (``EngineConfig.web_ui_port``) could not start; the message names the address and
    port and says what to choose instead."""


# Tracebacks, reprs and pickles name the public home, ``dag.errors`` (which re-exports every class here).
for _error in (DagError, DagValidationError, CycleError, ProcessorContractError, RestartableError, JobFailedError,
               CancellationError, WebUIError):
    _error.__module__ = "dag.errors"
del _error
