"""Vertices: a named step of the DAG, backed by a processor supplier and a local parallelism.

Local parallelism is the number of processors of the vertex on each member. ``None`` (or Jet's ``-1``) means
"the default": the engine's default parallelism, lowered to the supplier's preferred parallelism if it has one
(Jet's ``determineLocalParallelism``).

>>> from processors import noop_p
>>> v = Vertex("tokenize", noop_p(), local_parallelism=2)
>>> v.name, v.local_parallelism
('tokenize', 2)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jetspark_base.errors import DagValidationError

if TYPE_CHECKING:  # pragma: no cover
    from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["Vertex", "check_default_local_parallelism"]


def _is_default(value: Any) -> bool:
    return value is None or (type(value) is int and value == -1)


def check_default_local_parallelism(value: Any, where: str) -> int | None:
    """``value`` as a default local parallelism: ``None`` (or -1) for unknown, else a positive int."""
    if _is_default(value):
        return None
    if type(value) is not int or value <= 0:
        raise DagValidationError(
            f"{where}: default_local_parallelism must be None (or -1) when unknown, or a positive int; got {value!r}"
        )
    return value


class Vertex:
    """A vertex of a DAG. Usually created with ``dag.new_vertex(name, supplier)``.

    ``supplier``: a zero-argument callable returning a new ``Processor``, a ``ProcessorSupplier``, a
    ``ProcessorMetaSupplier`` or a ``SourceBuilder``/``SinkBuilder`` product. ``local_parallelism``: ``None`` (or
    ``-1``) for the default, otherwise a positive int.
    """

    def __init__(self, name: str, supplier: Any, local_parallelism: int | None = None):
        if not isinstance(name, str) or not name:
            raise DagValidationError(f"A vertex name must be a non-empty str, got {name!r}")
        if supplier is None:
            raise DagValidationError(
                f"Vertex '{name}': supplier is None; pass a processor supplier such as map_p(fn) "
                f"or a zero-argument function returning a Processor"
            )
        from processors.api.suppliers import to_meta_supplier  # lazy: processors may be loading concurrently

        self._name = name
        self._supplier = supplier
        self._meta_supplier = to_meta_supplier(supplier, name)  # rejects unusable suppliers, naming the vertex
        self._local_parallelism: int | None = None
        self.local_parallelism = local_parallelism

    @property
    def name(self) -> str:
        return self._name

    @property
    def supplier(self) -> Any:
        """The supplier exactly as given."""
        return self._supplier

    @property
    def meta_supplier(self) -> ProcessorMetaSupplier:
        """The supplier normalised to a ``ProcessorMetaSupplier``."""
        return self._meta_supplier

    @property
    def description(self) -> str | None:
        """What the supplier says it computes (its ``description`` str, e.g. a windowing processor's
        ``sliding window 1000 by 100``), shown by ``to_dot``, ``describe`` and ``explain``; None for most."""
        text = getattr(self._supplier, "description", None)
        return text if isinstance(text, str) and text else None

    @property
    def local_parallelism(self) -> int | None:
        """Processors per member: ``None`` for the default, else a positive int. Assigning ``-1`` means ``None``."""
        return self._local_parallelism

    @local_parallelism.setter
    def local_parallelism(self, value: int | None) -> None:
        if _is_default(value):
            self._local_parallelism = None
        elif type(value) is int and value > 0:
            self._local_parallelism = value
        else:
            raise DagValidationError(
                f"Vertex '{self._name}': local_parallelism must be None (or -1) for the default, or a positive "
                f"int; got {value!r}"
            )

    def preferred_local_parallelism(self) -> int | None:
        """The meta-supplier's preferred local parallelism, ``None`` for no preference."""
        preferred = self._meta_supplier.preferred_local_parallelism()
        if _is_default(preferred):
            return None
        if type(preferred) is not int or preferred <= 0:
            raise DagValidationError(
                f"Vertex '{self._name}': {type(self._meta_supplier).__name__}.preferred_local_parallelism() "
                f"returned {preferred!r}; it must return None for no preference or a positive int"
            )
        return preferred

    def determine_local_parallelism(self, default: int | None) -> int | None:
        """The local parallelism the vertex runs with when the engine's default is ``default``.

        Jet's rule: the vertex's own setting if any; else the supplier's preferred parallelism, capped by
        ``default`` when that is known; else ``default``. ``None`` (or ``-1``) as ``default`` means unknown, and
        the result is ``None`` when nothing determines it.

        >>> from processors import noop_p
        >>> Vertex("v", noop_p()).determine_local_parallelism(4)
        4
        """
        if self._local_parallelism is not None:
            return self._local_parallelism
        known_default = check_default_local_parallelism(default, f"Vertex '{self._name}'")
        preferred = self.preferred_local_parallelism()
        if preferred is None:
            return known_default
        return preferred if known_default is None else min(preferred, known_default)

    def __str__(self) -> str:
        return f"Vertex {self._name}"

    def __repr__(self) -> str:
        lp = "" if self._local_parallelism is None else f", local_parallelism={self._local_parallelism}"
        return f"Vertex({self._name!r}{lp})"
