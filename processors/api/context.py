"""``Context``: what a processor (and its suppliers) know about where they run (Jet's ``Processor.Context``).

One class serves the meta-supplier, supplier and processor contexts: a meta-supplier's context simply has
``member_index``/processor indices 0. Defaults are those of Jet's test contexts: vertex ``"testVertex"``,
``job_id`` 1, indices 0, parallelism 1, one member, processing guarantee NONE and the logger
``logging.getLogger("jetspark.<vertex>#<global index>")``.

``unbounded`` is True only in a PIPELINED job whose DAG has a stream source (set by the runtime): the job may
run for ever, so a sink should make its output visible as items arrive instead of publishing it when the job
ends (``write_file_p`` appends live then). It is False in batch jobs, in bounded DAGs run PIPELINED (they keep
batch semantics) and in tests.

``processing_guarantee`` holds ``dag.config.ProcessingGuarantee`` values; when not given it is
``ProcessingGuarantee.NONE``, looked up lazily so that ``processors`` does not import the DAG layer (the
string ``"NONE"`` if that module is absent).

>>> ctx = Context(vertex_name="tokenize", local_parallelism=2, total_parallelism=4, global_processor_index=3,
...               local_processor_index=1, member_index=1)
>>> ctx.member_count, ctx.logger.name
(2, 'jetspark.tokenize#3')
"""

from __future__ import annotations

import logging
from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = ["Context", "vertex_contexts"]


def _default_guarantee() -> Any:
    try:
        from jetspark_base.guarantee import ProcessingGuarantee
    except ImportError:
        return "NONE"
    return ProcessingGuarantee.NONE


class Context:
    """Read-only facts about one processor (or supplier) of a vertex in a job.

    Constructor keywords have the names of the properties. ``member_count`` defaults to
    ``total_parallelism // local_parallelism`` (which must divide evenly).
    """

    __slots__ = (
        "_vertex_name", "_job_id", "_global_processor_index", "_local_processor_index", "_total_parallelism",
        "_local_parallelism", "_member_index", "_member_count", "_logger", "_processing_guarantee", "_driver",
        "_unbounded",
    )

    def __init__(
        self,
        *,
        vertex_name: str = "testVertex",
        job_id: int = 1,
        global_processor_index: int = 0,
        local_processor_index: int = 0,
        total_parallelism: int = 1,
        local_parallelism: int = 1,
        member_index: int = 0,
        member_count: int | None = None,
        logger: logging.Logger | None = None,
        processing_guarantee: Any = None,
        driver: Any = None,
        unbounded: bool = False,
    ):
        if local_parallelism <= 0 or total_parallelism <= 0:
            raise DagValidationError(
                f"Context parallelism must be > 0, got local_parallelism={local_parallelism}, "
                f"total_parallelism={total_parallelism}"
            )
        if member_count is None:
            if total_parallelism % local_parallelism:
                raise DagValidationError(
                    f"total_parallelism ({total_parallelism}) must be a multiple of local_parallelism "
                    f"({local_parallelism}); pass member_count explicitly otherwise"
                )
            member_count = total_parallelism // local_parallelism
        self._vertex_name = vertex_name
        self._job_id = job_id
        self._global_processor_index = global_processor_index
        self._local_processor_index = local_processor_index
        self._total_parallelism = total_parallelism
        self._local_parallelism = local_parallelism
        self._member_index = member_index
        self._member_count = member_count
        self._logger = logger
        self._processing_guarantee = processing_guarantee
        self._driver = driver
        self._unbounded = bool(unbounded)

    @property
    def vertex_name(self) -> str:
        """The name of the vertex the processor belongs to."""
        return self._vertex_name

    @property
    def job_id(self) -> int:
        """The id of the job."""
        return self._job_id

    @property
    def global_processor_index(self) -> int:
        """Index of the processor among all processors of the vertex in the job, ``0..total_parallelism-1``."""
        return self._global_processor_index

    @property
    def local_processor_index(self) -> int:
        """Index of the processor among the vertex's processors on its member, ``0..local_parallelism-1``."""
        return self._local_processor_index

    @property
    def total_parallelism(self) -> int:
        """The number of processors of the vertex in the whole job (``local_parallelism * member_count``)."""
        return self._total_parallelism

    @property
    def local_parallelism(self) -> int:
        """The number of processors of the vertex on each member."""
        return self._local_parallelism

    @property
    def member_index(self) -> int:
        """The index of the member running the processor, ``0..member_count-1``."""
        return self._member_index

    @property
    def member_count(self) -> int:
        """The number of (logical) members running the job."""
        return self._member_count

    @property
    def logger(self) -> logging.Logger:
        """A logger named ``jetspark.<vertex>#<global index>`` unless one was given."""
        if self._logger is None:
            self._logger = logging.getLogger(f"jetspark.{self._vertex_name}#{self._global_processor_index}")
        return self._logger

    @property
    def processing_guarantee(self) -> Any:
        """The job's ``ProcessingGuarantee`` (NONE unless configured)."""
        if self._processing_guarantee is None:
            self._processing_guarantee = _default_guarantee()
        return self._processing_guarantee

    @property
    def driver(self) -> Any:
        """The job's channel to the driver in an engine job (``None`` elsewhere, e.g. in tests).

        A ``dag.runtime.common.channel.ChannelClient``-like object: ``send(topic, body, as_json=False)`` (one-way) and
        ``request(topic, body, as_json=False, timeout=None)`` (waits for the handler's reply). Handlers are
        registered on the driver with ``DriverChannel.register(topic, fn)`` by the runtime (see
        ``docs/architecture.md``, "Pipelined runtime"). Safe to use from any thread of the task.
        """
        return self._driver

    @property
    def unbounded(self) -> bool:
        """True in a PIPELINED job whose DAG has a stream source: the job may never end, so output should
        become visible as it is produced (see the module docstring); False elsewhere."""
        return self._unbounded

    def replace(self, **changes: Any) -> "Context":
        """A copy with some properties changed, e.g. ``ctx.replace(global_processor_index=3)``."""
        values = {name[1:]: getattr(self, name) for name in self.__slots__}
        if "member_count" not in changes and (
            "total_parallelism" in changes or "local_parallelism" in changes
        ):
            values["member_count"] = None
        if "logger" not in changes and ("vertex_name" in changes or "global_processor_index" in changes):
            values["logger"] = None
        values.update(changes)
        return Context(**values)

    def __getstate__(self):
        return {name: getattr(self, name) for name in self.__slots__ if name not in ("_logger", "_driver")}

    def __setstate__(self, state):
        for name in self.__slots__:
            object.__setattr__(self, name, state.get(name))

    def __repr__(self) -> str:
        return (
            f"Context(vertex_name={self._vertex_name!r}, global_processor_index={self._global_processor_index}, "
            f"local_processor_index={self._local_processor_index}, member_index={self._member_index}, "
            f"local_parallelism={self._local_parallelism}, total_parallelism={self._total_parallelism})"
        )


def vertex_contexts(vertex_name: str, g: int, local_parallelism: int, member_count: int,
                    **job: Any) -> tuple[Context, Context]:
    """The contexts a runtime gives processor ``g`` (global index) of a vertex: its member's
    ``ProcessorSupplier`` context and the processor's own. ``job``: the other ``Context`` keywords, shared by
    both (``job_id``, ``processing_guarantee``, ``driver``, ``unbounded``). Both runtimes build contexts here.

    >>> supplier_ctx, ctx = vertex_contexts("map", 3, 2, 2)
    >>> (supplier_ctx.member_index, ctx.global_processor_index, ctx.local_processor_index, ctx.total_parallelism)
    (1, 3, 1, 4)
    """
    common = dict(vertex_name=vertex_name, total_parallelism=local_parallelism * member_count,
                  local_parallelism=local_parallelism, member_index=g // local_parallelism,
                  member_count=member_count, **job)
    return Context(**common), Context(global_processor_index=g, local_processor_index=g % local_parallelism, **common)
