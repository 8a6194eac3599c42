"""Processor suppliers: how a vertex makes its processors (Jet's ``ProcessorSupplier`` and
``ProcessorMetaSupplier``), and ``to_meta_supplier``, which normalises whatever ``new_vertex`` was given.

- A ``ProcessorMetaSupplier`` (one per vertex) is initialised with a context (vertex name, parallelism) and
  ``get(member_indices)`` returns a function ``member_index -> ProcessorSupplier``.
- A ``ProcessorSupplier`` (one per member) returns ``count`` processors from ``get(count)``.
- ``preferred_local_parallelism()`` returns ``None`` for "no preference" (a subclass returning -1 means the same).
- ``ProcessorMetaSupplier.force_total_parallelism_one(s)`` runs the real processor only on member 0 (or the
  given member); every other member gets processors that expect no input. Its vertex must have local
  parallelism 1: ``init`` raises a ``DagValidationError`` naming the vertex otherwise.
- ``MappedMetaSupplier(inner, wrap)`` / ``MappedSupplier(inner, wrap)`` give ``wrap(processor)`` for every
  processor ``inner`` makes (the peek wrappers, a pipeline sink unwrapping events, a source given watermark
  parameters); a wrapped unbounded source stays one.
- ``RuntimeBound`` marks engine-implemented suppliers (``runtime_kind``: ``"driver_source"``,
  ``"driver_sink"``, ``"spark_text_source"``, ``"spark_text_sink"``); their ``get`` raises.

>>> from processors.api.processor import Processor
>>> class P(Processor): pass
>>> ps = ProcessorSupplier.of(P)
>>> [type(p).__name__ for p in ps.get(2)]
['P', 'P']
>>> pms = to_meta_supplier(P)
>>> pms.init(None); type(pms.get([0])(0).get(1)[0]).__name__
'P'
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from jetspark_base.errors import DagValidationError, ProcessorContractError
from processors.api.processor import Processor

__all__ = ["ProcessorSupplier", "ProcessorMetaSupplier", "RuntimeBound", "to_meta_supplier"]


def _vertex_label(vertex_name: str | None) -> str:
    return f"vertex '{vertex_name}'" if vertex_name else "a vertex"


class ProcessorSupplier:
    """Creates the processors of a vertex on one member. Override ``get(count)``; ``init``/``close`` optional."""

    def init(self, context: Any) -> None:
        """Called once before ``get`` with the member's context."""

    def get(self, count: int) -> list[Processor]:
        """Return ``count`` new processors."""
        raise NotImplementedError(f"Missing implementation in {type(self).__qualname__}: override get(count)")

    def close(self, error: BaseException | None) -> None:
        """Called after all processors of this member closed; ``error`` is the job's failure or None."""

    @staticmethod
    def of(factory: Callable[[], Processor]) -> "ProcessorSupplier":
        """A supplier calling the zero-argument ``factory`` once per processor."""
        return _FactorySupplier(factory)


class _FactorySupplier(ProcessorSupplier):
    def __init__(self, factory: Callable[[], Processor], vertex_name: str | None = None):
        if not callable(factory):
            raise DagValidationError(
                f"{_vertex_label(vertex_name)}: processor factory {factory!r} is not callable; pass a zero-argument "
                "callable returning a new Processor, e.g. lambda: MyP()"
            )
        self.factory = factory
        self.vertex_name = vertex_name

    def init(self, context: Any) -> None:
        if self.vertex_name is None and context is not None:
            self.vertex_name = getattr(context, "vertex_name", None)

    def get(self, count: int) -> list[Processor]:
        processors = [self.factory() for _ in range(count)]
        for p in processors:
            if not isinstance(p, Processor):
                raise DagValidationError(
                    f"{_vertex_label(self.vertex_name)}: the processor factory {_describe(self.factory)} returned "
                    f"{type(p).__name__} {p!r:.80}, not a Processor; it must return a new instance of a Processor "
                    "subclass each time it is called"
                )
        return processors

    def __repr__(self) -> str:
        return f"ProcessorSupplier.of({_describe(self.factory)})"


class ProcessorMetaSupplier:
    """Creates one ``ProcessorSupplier`` per member for a vertex. Override ``get(member_indices)``."""

    def preferred_local_parallelism(self) -> int | None:
        """The local parallelism this vertex prefers, or ``None`` for no preference (the default)."""
        return None

    def init(self, context: Any) -> None:
        """Called once before ``get`` with the vertex's context (parallelism, member count, vertex name)."""

    def get(self, member_indices: list[int]) -> Callable[[int], ProcessorSupplier]:
        """Return a function giving the ``ProcessorSupplier`` of each member index in ``member_indices``."""
        raise NotImplementedError(
            f"Missing implementation in {type(self).__qualname__}: override get(member_indices)"
        )

    def close(self, error: BaseException | None) -> None:
        """Called when the job ends; ``error`` is the failure or None."""

    @staticmethod
    def of(supplier: Any, preferred_local_parallelism: int | None = None) -> "ProcessorMetaSupplier":
        """A meta-supplier using the same ``supplier`` (a ``ProcessorSupplier`` or a zero-argument callable
        returning a new ``Processor``) on every member.
        """
        return _SameEverywhere(_as_processor_supplier(supplier), preferred_local_parallelism)

    @staticmethod
    def prefer_local_parallelism_one(supplier: Any) -> "ProcessorMetaSupplier":
        """``of(supplier, preferred_local_parallelism=1)``."""
        return ProcessorMetaSupplier.of(supplier, 1)

    @staticmethod
    def force_total_parallelism_one(supplier: Any, member_index: int = 0) -> "ProcessorMetaSupplier":
        """One processor in the whole job, on member ``member_index``; other members get processors that expect
        no input. The vertex's local parallelism must be 1 (checked in ``init``).
        """
        return _TotalParallelismOne(_as_processor_supplier(supplier), member_index)


class _SameEverywhere(ProcessorMetaSupplier):
    def __init__(self, supplier: ProcessorSupplier, preferred: int | None):
        if preferred is not None and (type(preferred) is not int or (preferred <= 0 and preferred != -1)):
            raise DagValidationError(
                f"ProcessorMetaSupplier.of({supplier!r}): preferred_local_parallelism must be None (or -1) for no "
                f"preference, or an int > 0; got {preferred!r}"
            )
        self.supplier = supplier
        self.preferred = None if preferred == -1 else preferred

    def preferred_local_parallelism(self) -> int | None:
        return self.preferred

    def get(self, member_indices: list[int]) -> Callable[[int], ProcessorSupplier]:
        supplier = self.supplier
        return lambda member_index: supplier

    def __repr__(self) -> str:
        return f"ProcessorMetaSupplier.of({self.supplier!r}, preferred_local_parallelism={self.preferred})"


class _ExpectNothingP(Processor):
    """Stands in for a total-parallelism-one processor on the other members; fails if it receives input, ignores
    restored state (as Jet's does)."""

    def __init__(self, vertex_name: str | None, member_index: int):
        self.vertex_name = vertex_name
        self.member_index = member_index

    def process(self, ordinal: int, inbox: Any) -> None:
        raise ProcessorContractError(
            f"{_vertex_label(self.vertex_name)} runs only one processor in the whole job, on member "
            f"{self.member_index}, but a processor on another member received {len(inbox)} item(s) on inbound "
            f"ordinal {ordinal}; route its inbound edges there with all_to_one() plus distribute_to("
            f"{self.member_index}) or a distributed partitioned edge"
        )

    def restore_from_snapshot(self, inbox: Any) -> None:
        """Drop restored entries: the real processor's broadcast state reaches every processor of the vertex."""
        inbox.clear()


class _ExpectNothingSupplier(ProcessorSupplier):
    def __init__(self, vertex_name: str | None, member_index: int):
        self.vertex_name = vertex_name
        self.member_index = member_index

    def get(self, count: int) -> list[Processor]:
        return [_ExpectNothingP(self.vertex_name, self.member_index) for _ in range(count)]


class _TotalParallelismOne(ProcessorMetaSupplier):
    def __init__(self, supplier: ProcessorSupplier, member_index: int):
        if not isinstance(member_index, int) or member_index < 0:
            raise DagValidationError(
                f"force_total_parallelism_one: member_index must be an int >= 0, got {member_index!r}"
            )
        self.supplier = supplier
        self.member_index = member_index
        self.vertex_name: str | None = None

    def preferred_local_parallelism(self) -> int | None:
        return 1

    def init(self, context: Any) -> None:
        self.vertex_name = getattr(context, "vertex_name", None)
        lp = getattr(context, "local_parallelism", 1)
        if lp != 1:
            raise DagValidationError(
                f"Local parallelism of {lp} was requested for {_vertex_label(self.vertex_name)}, which supports "
                "only total parallelism of 1 (force_total_parallelism_one). Local parallelism must be 1: create "
                "the vertex with local_parallelism=1 or leave it at the default"
            )

    def get(self, member_indices: list[int]) -> Callable[[int], ProcessorSupplier]:
        if self.member_index not in member_indices:
            raise DagValidationError(
                f"Cluster does not contain the required member: {_vertex_label(self.vertex_name)} must run on "
                f"member {self.member_index}, but the members are {list(member_indices)}"
            )
        real = self.supplier
        target = self.member_index
        other = _ExpectNothingSupplier(self.vertex_name, target)
        return lambda member_index: real if member_index == target else other

    def __repr__(self) -> str:
        return f"ProcessorMetaSupplier.force_total_parallelism_one({self.supplier!r}, member_index={self.member_index})"


class MappedMetaSupplier(ProcessorMetaSupplier):
    """A meta-supplier whose processors are ``wrap(processor)`` of those ``inner`` makes; ``wrap`` must be
    picklable (a module-level function or a callable object). A wrapped stream source is still one."""

    def __init__(self, inner: Any, wrap: Callable[[Processor], Processor]):
        self.inner = to_meta_supplier(inner)
        self.wrap = wrap
        if getattr(inner, "is_stream_source", False) is True:  # still an unbounded source (pipelined runtime)
            self.is_stream_source = True

    def preferred_local_parallelism(self) -> int | None:
        return self.inner.preferred_local_parallelism()

    def init(self, context: Any) -> None:
        self.inner.init(context)

    def get(self, member_indices: list[int]) -> Callable[[int], ProcessorSupplier]:
        return _MappedBy(self.inner.get(member_indices), self.wrap)

    def close(self, error: Any) -> None:
        self.inner.close(error)

    def __repr__(self) -> str:
        return f"MappedMetaSupplier({self.inner!r})"


class _MappedBy:
    """Picklable ``member_index -> MappedSupplier``."""

    def __init__(self, by_member: Callable[[int], ProcessorSupplier], wrap: Callable[[Processor], Processor]):
        self.by_member = by_member
        self.wrap = wrap

    def __call__(self, member: int) -> ProcessorSupplier:
        return MappedSupplier(self.by_member(member), self.wrap)


class MappedSupplier(ProcessorSupplier):
    """A supplier whose processors are ``wrap(processor)`` of those ``inner`` makes."""

    def __init__(self, inner: ProcessorSupplier, wrap: Callable[[Processor], Processor]):
        self.inner = inner
        self.wrap = wrap

    def init(self, context: Any) -> None:
        self.inner.init(context)

    def get(self, count: int) -> list[Processor]:
        return [self.wrap(p) for p in self.inner.get(count)]

    def close(self, error: Any) -> None:
        self.inner.close(error)


class RuntimeBound:
    """Marker base of suppliers the engine implements itself with Spark operations (see docs/architecture.md).

    Subclasses (also ``ProcessorMetaSupplier`` subclasses, listing ``RuntimeBound`` first) set ``runtime_kind``.
    """

    runtime_kind: str = ""

    def get(self, member_indices: list[int]) -> Callable[[int], ProcessorSupplier]:
        raise DagValidationError(
            f"{type(self).__name__} ({self.runtime_kind}) has no processors of its own: the engine implements it "
            "with Spark operations, so it only runs inside an Engine job (it cannot be used with "
            "verify_processor or the processor driver)"
        )


def _describe(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _check_zero_arg(fn: Callable, vertex_name: str | None) -> None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    required = [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if required:
        raise DagValidationError(
            f"{_vertex_label(vertex_name)}: the processor factory {_describe(fn)} needs argument(s) "
            f"{', '.join(required)}, but it is called without arguments; pass a zero-argument callable, "
            "e.g. lambda: MyP(...)"
        )


def _as_processor_supplier(obj: Any, vertex_name: str | None = None) -> ProcessorSupplier:
    if isinstance(obj, ProcessorSupplier):
        return obj
    if isinstance(obj, Processor):
        raise DagValidationError(
            f"{_vertex_label(vertex_name)}: got the processor instance {type(obj).__name__}; a vertex needs a "
            f"supplier that creates a new processor for each parallel instance: pass {type(obj).__name__} (the "
            f"class) or lambda: {type(obj).__name__}(...)"
        )
    if isinstance(obj, type) and issubclass(obj, (ProcessorSupplier, ProcessorMetaSupplier)):
        kind = "ProcessorMetaSupplier" if issubclass(obj, ProcessorMetaSupplier) else "ProcessorSupplier"
        raise DagValidationError(
            f"{_vertex_label(vertex_name)}: got the {kind} class {obj.__name__}; pass an instance: {obj.__name__}(...)"
        )
    if callable(obj):
        _check_zero_arg(obj, vertex_name)
        return _FactorySupplier(obj, vertex_name)
    raise DagValidationError(
        f"{_vertex_label(vertex_name)}: {type(obj).__name__} {obj!r:.80} is not a processor supplier; pass a "
        "zero-argument callable returning a new Processor, a ProcessorSupplier or a ProcessorMetaSupplier"
    )


def to_meta_supplier(obj: Any, vertex_name: str | None = None) -> ProcessorMetaSupplier:
    """Normalise what a vertex was given: a ``ProcessorMetaSupplier`` (including builder products and
    runtime-bound suppliers) as is, a ``ProcessorSupplier`` or a zero-argument callable returning a new
    ``Processor`` wrapped with ``ProcessorMetaSupplier.of``. Anything else is a ``DagValidationError``
    naming ``vertex_name``.
    """
    if isinstance(obj, ProcessorMetaSupplier):
        return obj
    return _SameEverywhere(_as_processor_supplier(obj, vertex_name), None)
