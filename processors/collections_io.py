"""Driver-side collection sources and sinks, Jet's ``readMapP``/``readListP``/``writeMapP``/``writeListP``.

The collections are the engine's named driver-side maps and lists (``engine.get_map(name)``,
``engine.get_list(name)``), Jet's IMap/IList stand-ins. These suppliers are *runtime-bound* markers: the
engine implements them with Spark operations instead of processors (``docs/architecture.md``):

- ``read_map_p(name)`` / ``read_list_p(name)`` (``runtime_kind = "driver_source"``): the collection's items
  (a map as ``(key, value)`` entries) are sliced into the vertex's P partitions with ``parallelize``, one
  contiguous slice per processor, and emitted to every outbound ordinal;
- ``write_map_p(name)`` / ``write_list_p(name)`` (``runtime_kind = "driver_sink"``): the vertex's input is
  brought to the driver with ``toLocalIterator`` and stored (a map takes ``(key, value)`` entries). Like Jet's,
  they prefer local parallelism 1.

Use them for small data: everything passes through the driver.

>>> src = read_list_p("lines"); src.runtime_kind, src.collection
('driver_source', ('list', 'lines'))
"""

from __future__ import annotations

from processors.suppliers import ProcessorMetaSupplier, RuntimeBound

__all__ = ["read_map_p", "read_list_p", "write_map_p", "write_list_p", "DriverCollectionSource",
           "DriverCollectionSink"]


def _checked_name(factory: str, name: object) -> str:
    if not isinstance(name, str) or not name:
        from dag.errors import DagValidationError

        raise DagValidationError(f"{factory}: the collection name must be a non-empty str, got {name!r}")
    return name


class DriverCollectionSource(RuntimeBound, ProcessorMetaSupplier):
    """The meta-supplier of :func:`read_map_p` / :func:`read_list_p`; ``collection`` is ``(kind, name)``."""

    runtime_kind = "driver_source"

    def __init__(self, kind: str, name: str):
        self.collection = (kind, name)

    def __repr__(self) -> str:
        return f"read_{self.collection[0]}_p({self.collection[1]!r})"


class DriverCollectionSink(RuntimeBound, ProcessorMetaSupplier):
    """The meta-supplier of :func:`write_map_p` / :func:`write_list_p`; ``collection`` is ``(kind, name)``."""

    runtime_kind = "driver_sink"

    def __init__(self, kind: str, name: str):
        self.collection = (kind, name)

    def preferred_local_parallelism(self) -> int | None:
        return 1

    def __repr__(self) -> str:
        return f"write_{self.collection[0]}_p({self.collection[1]!r})"


def read_map_p(name: str) -> DriverCollectionSource:
    """A source emitting the ``(key, value)`` entries of the engine's map ``name``."""
    return DriverCollectionSource("map", _checked_name("read_map_p", name))


def read_list_p(name: str) -> DriverCollectionSource:
    """A source emitting the items of the engine's list ``name``, sliced across the processors."""
    return DriverCollectionSource("list", _checked_name("read_list_p", name))


def write_map_p(name: str) -> DriverCollectionSink:
    """A sink putting ``(key, value)`` entries into the engine's map ``name``."""
    return DriverCollectionSink("map", _checked_name("write_map_p", name))


def write_list_p(name: str) -> DriverCollectionSink:
    """A sink appending items to the engine's list ``name``."""
    return DriverCollectionSink("list", _checked_name("write_list_p", name))
