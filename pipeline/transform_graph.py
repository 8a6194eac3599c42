"""The transform graph: what a pipeline is made of, and the base class of its transforms.

A pipeline is plain data: a :class:`TransformGraph` of :class:`Transform` records, each one stage's operation
with the transforms it reads (``upstream``). Three layers sit on it, each importing only the ones below:

1. the **handles** (:mod:`pipeline.stages`): ``BatchStage``, ``StreamStage`` and friends hold one transform
   each; a method checks the handles it is given, calls an operation and wraps the new transform in the
   handle of the right kind. Handles never build transforms themselves.
2. the **operations** (:mod:`pipeline.stateless_ops`, :mod:`pipeline.aggregate_ops`,
   :mod:`pipeline.stateful_ops`, :mod:`pipeline.map_lookups`): free functions that check the user's arguments
   and add one transform to the graph of their upstream transform. They know transforms, never handles.
3. the **transforms** (:mod:`pipeline.transforms`, :mod:`pipeline.timestamps`,
   :mod:`pipeline.more_transforms`, :mod:`pipeline.window_aggregate`): how each operation lowers to vertices
   and edges, by Jet 4's planner rules (:mod:`pipeline.planner`).

``TransformGraph.to_dag()`` checks that every transform has something attached (a sink at the end of every
branch), then lets each transform add itself to a :class:`~pipeline.planner.Planner` in the order they were
added (every transform comes after its upstream ones). ``Pipeline`` (:mod:`pipeline.pipeline`) is the graph
with the user's entry points (``read_from``, ``set_preserve_order``).

>>> graph = TransformGraph()
>>> graph.to_dag()
Traceback (most recent call last):
...
dag.errors.DagValidationError: This pipeline is empty; start it with p.read_from(Sources...)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jetspark_base.errors import DagValidationError
from dag.model import DAG
from pipeline.planner import Planner, PlannerVertex

__all__ = ["Transform", "TransformGraph"]


class Transform:
    """One stage's operation, a node of its ``graph``. ``upstream``: the transforms it reads, in input-ordinal
    order. ``events``: its output items are ``JetEvent`` (a stream stage with timestamps). ``is_sink``: nothing
    may attach to it (the graph does not ask for a downstream stage). ``takes_timestamp_fn``: it can read the
    plain items of a stage with timestamps given their timestamp function (a window), so a stage read only by
    such transforms need not wrap its items in ``JetEvent`` (:func:`pipeline.timestamps.add_timestamps_vertex`)."""

    is_sink = False
    takes_timestamp_fn = False

    def __init__(self, graph: TransformGraph, name: str, upstream: Sequence[Transform] = (), events: bool = False):
        self.graph = graph
        self.name = name
        self.upstream = list(upstream)
        self.local_parallelism: int | None = None
        self.events = events
        graph.add(self)

    def add_to_dag(self, p: Planner) -> None:
        """Add this transform's vertices and inbound edges to ``p`` (each transform kind lowers its own way)."""
        raise NotImplementedError

    def _add_single_vertex(self, p: Planner, supplier: Any, configure: Callable | None = None,
                           local_parallelism: int | None = None) -> PlannerVertex:
        pv = p.add_vertex(self, p.unique_vertex_name(self.name),
                          local_parallelism if local_parallelism is not None else self.local_parallelism,
                          supplier, self.events)
        p.add_edges(self, pv, configure)
        return pv

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class TransformGraph:
    """The transforms of a pipeline, in the order they were added, and how many transforms read each one."""

    def __init__(self) -> None:
        self._transforms: list[Transform] = []
        self._downstream: dict[Transform, int] = {}
        self._preserve_order: bool | None = None  # None: not set (async services keep order, Jet's default)

    def add(self, transform: Transform) -> None:
        """Add ``transform`` (its upstream transforms were added before it); ``Transform()`` calls this."""
        self._transforms.append(transform)
        self._downstream[transform] = 0
        for upstream in transform.upstream:
            self._downstream[upstream] += 1

    def downstream_of(self, transform: Transform) -> list[Transform]:
        """The transforms that read ``transform``'s output, in the order they were added."""
        return [t for t in self._transforms if any(u is transform for u in t.upstream)]

    def _check_attached(self) -> None:
        dangling = [t for t in self._transforms if self._downstream[t] == 0 and not t.is_sink]
        if dangling:
            names = ", ".join(t.name for t in dangling)
            raise DagValidationError(
                f"These transforms have nothing attached to them: [{names}]. Attach a sink to each, e.g. "
                ".write_to(Sinks.list('result')) (or .write_to(Sinks.noop()) to discard the items), or attach "
                "further stages")

    def to_dag(self) -> DAG:
        """The DAG Jet's planner would build for this pipeline (a new, equal DAG on every call)."""
        self._check_attached()
        if not self._transforms:
            raise DagValidationError("This pipeline is empty; start it with p.read_from(Sources...)")
        planner = Planner(self._preserve_order)
        for transform in self._transforms:
            transform.add_to_dag(planner)
        return planner.build()


class TransformHandle:
    """What every stage handle is: a view of one transform of the graph, with its name and its pipeline. The
    stages (``pipeline.stages``) and keyed stages (``pipeline.keyed_stages``) add the operations."""

    def __init__(self, transform: Transform):
        self._transform = transform

    @property
    def transform(self) -> Transform:
        """The transform this handle views (for a keyed stage: the transform of the stage it came from)."""
        return self._transform

    @property
    def name(self) -> str:
        """The transform's name (its vertex name, before ``-2``/``-3`` for repeated names)."""
        return self._transform.name

    @property
    def pipeline(self) -> TransformGraph:
        """The pipeline this stage belongs to."""
        return self._transform.graph
