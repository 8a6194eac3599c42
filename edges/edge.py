"""Edges: the link from an output ordinal of one vertex to an input ordinal of another.

An edge is built fluently, as in Jet; every setting returns the edge and the last routing call wins::

    between(tokenize, accumulate).partitioned(whole_item)               # ordinal 0 -> ordinal 0
    from_(source, 1).to(sink, 0).broadcast().distributed().priority(-1)

=================================  ===========================================================================
setting                            meaning
=================================  ===========================================================================
``unicast()`` (default)            each item to one processor of the destination
``isolated()``                     upstream processor ``p`` feeds a fixed slice of downstream processors
``broadcast()``                    each item to every processor of the destination
``fanout()``                       each item to every member, one processor on each
``partitioned(key_fn, p=None)``    equal keys to the same processor; ``p`` a :class:`Partitioner`
``all_to_one(key=None)``           every item to one processor (a partitioned edge with a fixed partition)
``local()`` (default)              the candidates are the destination's processors on the same member
``distributed()``                  the candidates are the destination's processors on every member
``distribute_to(member_index)``    every item to one member (partitioned edges only, checked by ``validate``)
``priority(n)``                    inbound edges with a lower number are consumed completely first
``set_config(EdgeConfig(...))``    queue size of the edge
=================================  ===========================================================================

Vertices are duck-typed (anything with a ``name``) so this package does not depend on the DAG model.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from jetspark_base.errors import DagValidationError
from edges.edge_config import DEFAULT_QUEUE_SIZE, EdgeConfig
from edges.partitioner import Partitioner
from edges.routing import RoutingPolicy

__all__ = ["DISTRIBUTE_TO_ALL", "Edge", "between", "from_"]

_RESERVED_PRIORITY = -(2**31)


class _DistributeToAll(Enum):
    DISTRIBUTE_TO_ALL = "all"

    def __repr__(self) -> str:
        return "DISTRIBUTE_TO_ALL"


DISTRIBUTE_TO_ALL = _DistributeToAll.DISTRIBUTE_TO_ALL
"""``edge.distributed_to`` of a ``distributed()`` edge: the items go to the destination's processors on all members."""


def _check_vertex(vertex: Any, role: str, call: str) -> None:
    if not isinstance(getattr(vertex, "name", None), str):
        raise DagValidationError(
            f"{call}: the {role} must be a Vertex (from dag.new_vertex(...)), got {vertex!r}"
        )


def _check_ordinal(ordinal: Any, role: str, call: str) -> None:
    if type(ordinal) is not int or ordinal < 0:
        raise DagValidationError(
            f"{call}: the {role} ordinal must be an int >= 0, got {ordinal!r}"
        )


class Edge:
    """A link from ``source`` at ``source_ordinal`` to ``destination`` at ``dest_ordinal``.

    Create edges with :func:`between` or :func:`from_` and add them with ``dag.edge(...)``.

    >>> from types import SimpleNamespace as V
    >>> e = between(V(name="a"), V(name="b")).partitioned(len).distributed().priority(1)
    >>> str(e)
    'between("a", "b").partitioned(?).distributed().priority(1)'
    >>> e.routing_policy, e.is_distributed, e.get_priority()
    (<RoutingPolicy.PARTITIONED: 'partitioned'>, True, 1)
    """

    __slots__ = (
        "_source",
        "_source_ordinal",
        "_destination",
        "_dest_ordinal",
        "_routing_policy",
        "_key_fn",
        "_partitioner",
        "_all_to_one",
        "_all_to_one_key",
        "_distributed_to",
        "_priority",
        "_config",
    )

    def __init__(self, source: Any, source_ordinal: int = 0):
        _check_vertex(source, "source", "from_()")
        _check_ordinal(source_ordinal, "source", f'from_("{source.name}", {source_ordinal!r})')
        self._source = source
        self._source_ordinal = source_ordinal
        self._destination: Any = None
        self._dest_ordinal = 0
        self._routing_policy = RoutingPolicy.UNICAST
        self._key_fn: Callable[[Any], Any] | None = None
        self._partitioner: Partitioner | None = None
        self._all_to_one = False
        self._all_to_one_key: Any = None
        self._distributed_to: int | _DistributeToAll | None = None
        self._priority = 0
        self._config: EdgeConfig | None = None

    # ---- factories -------------------------------------------------------------------------------------------

    @staticmethod
    def between(source: Any, dest: Any) -> Edge:
        """An edge from ordinal 0 of ``source`` to ordinal 0 of ``dest``."""
        _check_vertex(source, "source", "between()")
        _check_vertex(dest, "destination", "between()")
        return Edge(source).to(dest)

    @staticmethod
    def from_(source: Any, ordinal: int = 0) -> Edge:
        """An edge from output ``ordinal`` of ``source``; finish it with :meth:`to`."""
        return Edge(source, ordinal)

    def to(self, dest: Any, ordinal: int = 0) -> Edge:
        """Set the destination vertex ``dest`` and its input ``ordinal``; allowed once."""
        if self._destination is not None:
            raise DagValidationError(
                f"{self}: destination already set; to() can be called only once per edge, "
                f"create another edge with from_(...).to(...)"
            )
        call = f"{self}.to()"
        _check_vertex(dest, "destination", call)
        _check_ordinal(ordinal, "destination", call)
        self._destination = dest
        self._dest_ordinal = ordinal
        return self

    # ---- routing ---------------------------------------------------------------------------------------------

    def _route(self, policy: RoutingPolicy) -> Edge:
        self._routing_policy = policy
        self._key_fn = None
        self._partitioner = None
        self._all_to_one = False
        self._all_to_one_key = None
        return self

    def unicast(self) -> Edge:
        """Each item goes to one processor of the destination (the default)."""
        return self._route(RoutingPolicy.UNICAST)

    def isolated(self) -> Edge:
        """Each upstream processor feeds its own slice of the downstream processors; local edges only."""
        return self._route(RoutingPolicy.ISOLATED)

    def broadcast(self) -> Edge:
        """Each item goes to every processor of the destination."""
        return self._route(RoutingPolicy.BROADCAST)

    def fanout(self) -> Edge:
        """Each item goes to every member, and to one processor there (on a local edge: as unicast)."""
        return self._route(RoutingPolicy.FANOUT)

    def partitioned(self, key_fn: Callable[[Any], Any], partitioner: Any = None) -> Edge:
        """Items whose ``key_fn(item)`` fall in the same partition go to the same processor.

        ``partitioner``: a :class:`Partitioner` (anything with ``get_partition(key, partition_count)``);
        ``None`` means ``Partitioner.default()``, stable across processes.
        """
        if not callable(key_fn):
            raise DagValidationError(f"{self}.partitioned(): key_fn must be a function item -> key, got {key_fn!r}")
        if partitioner is not None and not callable(getattr(partitioner, "get_partition", None)):
            raise DagValidationError(
                f"{self}.partitioned(): partitioner must have a get_partition(key, partition_count) method, "
                f"got {partitioner!r}; wrap a function with Partitioner.of(fn)"
            )
        self._route(RoutingPolicy.PARTITIONED)
        self._key_fn = key_fn
        self._partitioner = partitioner
        return self

    def all_to_one(self, key: Any = None) -> Edge:
        """Every item goes to the same single processor: a partitioned edge whose partition comes from ``key``."""
        self._route(RoutingPolicy.PARTITIONED)
        self._all_to_one = True
        self._all_to_one_key = key
        return self

    # ---- locality, priority, config --------------------------------------------------------------------------

    def local(self) -> Edge:
        """Send only to the destination's processors on the same member (the default)."""
        self._distributed_to = None
        return self

    def distributed(self) -> Edge:
        """Send to the destination's processors on every member."""
        self._distributed_to = DISTRIBUTE_TO_ALL
        return self

    def distribute_to(self, member_index: int) -> Edge:
        """Send every item to the member with index ``member_index``; the edge must be partitioned."""
        if member_index is DISTRIBUTE_TO_ALL:
            raise DagValidationError(f"{self}.distribute_to(DISTRIBUTE_TO_ALL): use .distributed() instead")
        if type(member_index) is not int or member_index < 0:
            raise DagValidationError(
                f"{self}.distribute_to(): member_index must be an int >= 0 (0 is the first member), "
                f"got {member_index!r}"
            )
        self._distributed_to = member_index
        return self

    def priority(self, n: int) -> Edge:
        """Set the priority ``n`` (default 0): inbound edges with a lower number are consumed completely first.

        Read it back with :meth:`get_priority`.
        """
        if type(n) is not int:
            raise DagValidationError(f"{self}.priority(): priority must be an int, got {n!r}")
        if n == _RESERVED_PRIORITY:
            raise DagValidationError(
                f"{self}.priority(): priority must not be {_RESERVED_PRIORITY} (-2**31, reserved as in Jet); "
                f"use a larger number"
            )
        self._priority = n
        return self

    def set_config(self, config: EdgeConfig | None) -> Edge:
        """Set the edge's :class:`EdgeConfig`; ``None`` means the engine's default."""
        if config is not None and not isinstance(config, EdgeConfig):
            raise DagValidationError(f"{self}.set_config(): expected an EdgeConfig or None, got {config!r}")
        self._config = config
        return self

    # ---- read access -----------------------------------------------------------------------------------------

    @property
    def source(self) -> Any:
        """The source vertex."""
        return self._source

    @property
    def source_name(self) -> str:
        return self._source.name

    @property
    def source_ordinal(self) -> int:
        return self._source_ordinal

    @property
    def destination(self) -> Any:
        """The destination vertex, ``None`` until :meth:`to` is called."""
        return self._destination

    @property
    def dest_name(self) -> str | None:
        return None if self._destination is None else self._destination.name

    @property
    def dest_ordinal(self) -> int:
        return self._dest_ordinal

    @property
    def routing_policy(self) -> RoutingPolicy:
        return self._routing_policy

    @property
    def key_fn(self) -> Callable[[Any], Any] | None:
        """The key function given to :meth:`partitioned` (``None`` otherwise, also for ``all_to_one``)."""
        return self._key_fn

    @property
    def partitioner(self) -> Any:
        """The partitioner given to :meth:`partitioned`; ``None`` means ``Partitioner.default()``."""
        return self._partitioner

    @property
    def is_all_to_one(self) -> bool:
        return self._all_to_one

    @property
    def all_to_one_key(self) -> Any:
        return self._all_to_one_key

    @property
    def distributed_to(self) -> int | _DistributeToAll | None:
        """``None`` (local), ``DISTRIBUTE_TO_ALL`` (``distributed()``) or a member index (``distribute_to``)."""
        return self._distributed_to

    @property
    def is_distributed(self) -> bool:
        """True only for ``distributed()`` (not for ``distribute_to``), as Jet's ``isDistributed``."""
        return self._distributed_to is DISTRIBUTE_TO_ALL

    @property
    def is_local(self) -> bool:
        return self._distributed_to is None

    def get_priority(self) -> int:
        """The edge's priority (default 0); set it with :meth:`priority`."""
        return self._priority

    @property
    def config(self) -> EdgeConfig | None:
        return self._config

    def queue_size(self, default: int = DEFAULT_QUEUE_SIZE) -> int:
        """The configured queue size, or ``default`` when the edge has no :class:`EdgeConfig`."""
        return default if self._config is None else self._config.queue_size

    # ---- partitioning ----------------------------------------------------------------------------------------

    def partition_of(self, item: Any, partition_count: int) -> int:
        """The partition (``0..partition_count-1``) of ``item`` on this partitioned edge.

        >>> from types import SimpleNamespace as V
        >>> e = between(V(name="a"), V(name="b")).partitioned(str.lower)
        >>> e.partition_of("Word", 8) == e.partition_of("word", 8)
        True
        """
        if self._routing_policy is not RoutingPolicy.PARTITIONED:
            raise DagValidationError(
                f"{self}: partition_of() needs a partitioned edge, this one is {self._routing_policy.value}"
            )
        if type(partition_count) is not int or partition_count <= 0:
            raise DagValidationError(f"{self}: partition_count must be an int > 0, got {partition_count!r}")
        if self._all_to_one:
            return Partitioner.default().get_partition(self._all_to_one_key, partition_count)
        partitioner = self._partitioner or Partitioner.default()
        key = self._key_fn(item)  # type: ignore[misc]
        if key is None:
            raise DagValidationError(
                f"Null key from key extractor, edge: {self}; the key function returned None for item {item!r:.100}"
            )
        partition = partitioner.get_partition(key, partition_count)
        if type(partition) is not int or not 0 <= partition < partition_count:
            raise DagValidationError(
                f"{self}: partitioner {partitioner!r} returned {partition!r} for item {item!r}; "
                f"expected an int in 0..{partition_count - 1}"
            )
        return partition

    # ---- text ------------------------------------------------------------------------------------------------

    def __str__(self) -> str:
        src, dst = self._source.name, self.dest_name
        if dst is not None and self._source_ordinal == 0 and self._dest_ordinal == 0:
            text = f'between("{src}", "{dst}")'
        else:
            text = f'from_("{src}"' + (f", {self._source_ordinal})" if self._source_ordinal else ")")
            if dst is not None:
                text += f'.to("{dst}"' + (f", {self._dest_ordinal})" if self._dest_ordinal else ")")
        if self._all_to_one:
            text += ".all_to_one()"
        elif self._routing_policy is RoutingPolicy.PARTITIONED:
            text += ".partitioned(?)"
        elif self._routing_policy is not RoutingPolicy.UNICAST:
            text += f".{self._routing_policy.value}()"
        if self._distributed_to is DISTRIBUTE_TO_ALL:
            text += ".distributed()"
        elif self._distributed_to is not None:
            text += f".distribute_to({self._distributed_to})"
        if self._priority:
            text += f".priority({self._priority})"
        return text

    __repr__ = __str__


between = Edge.between
from_ = Edge.from_
