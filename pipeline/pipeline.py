"""``Pipeline``: a pipeline is plain data (its transforms); ``to_dag()`` lowers it by Jet 4's planner rules.

``p.read_from(source)`` starts a branch: a :class:`~pipeline.stages.BatchStage` for a batch source, or for a
stream source a stage whose only operations choose the timestamps (``with_timestamps``,
``with_native_timestamps``, ``without_timestamps``). ``draw_from`` is the manual's (0.7.1) name for it.

``to_dag()`` first checks that every compute stage has something attached (Jet: "These transforms have
nothing attached to them") and that every stream source had its timestamps chosen, then plans the transforms
in the order they were added (:mod:`pipeline.planner`). It can be called again and gives an equal DAG.

>>> from pipeline import Sinks, TestSources
>>> p = Pipeline.create()
>>> _ = p.read_from(TestSources.items(1, 2, 3)).map(lambda x: x * 10).write_to(Sinks.list("out"))
>>> [v.name for v in p.to_dag().vertices]
['items', 'map', 'listSink(out)']
"""

from __future__ import annotations

from typing import Any

from jetspark_base.errors import DagValidationError
from dag.model import DAG
from pipeline.connectors import BatchSource, as_source
from pipeline.planner import Planner
from pipeline.transforms import SinkTransform, SourceTransform, Transform

__all__ = ["Pipeline"]


class Pipeline:
    """A Jet pipeline: sources, stages and sinks, lowered to a DAG by ``to_dag()``."""

    def __init__(self) -> None:
        self._transforms: list[Transform] = []
        self._downstream: dict[Transform, int] = {}
        self._undecided: list[Any] = []  # stream-source stages still waiting for a timestamp choice
        self._preserve_order: bool | None = None  # None: not set (async services keep order, Jet's default)

    def set_preserve_order(self, value: bool) -> Pipeline:
        """Keep the items' order through stateless stages (Jet 4.4): each takes the local parallelism of the
        stage before it and an isolated edge from it (see :mod:`pipeline.more_stages`); also makes
        ``map_using_service_async`` keep the input order. Returns the pipeline."""
        if not isinstance(value, bool):
            raise TypeError(f"Pipeline.set_preserve_order(value) needs a bool, got {value!r:.80}")
        self._preserve_order = value
        return self

    @property
    def preserve_order(self) -> bool:
        """Whether ``set_preserve_order(True)`` was called."""
        return self._preserve_order is True

    @staticmethod
    def create() -> Pipeline:
        """A new, empty pipeline (same as ``Pipeline()``)."""
        return Pipeline()

    def read_from(self, source: Any) -> Any:
        """A stage reading ``source``: a ``BatchStage``, or for a stream source a stage on which you choose
        the timestamps (``.with_timestamps(fn, lag)``, ``.with_native_timestamps(lag)``,
        ``.without_timestamps()``)."""
        descriptor = as_source(source)
        if isinstance(descriptor, BatchSource):
            from pipeline.stages import BatchStage

            return BatchStage(SourceTransform(self, descriptor.name, descriptor.supplier, descriptor.post_fn))
        from pipeline.stream_stages import StreamSourceStage

        stage = StreamSourceStage(self, descriptor)
        self._undecided.append(stage)
        return stage

    draw_from = read_from

    def _register(self, transform: Transform) -> None:
        self._transforms.append(transform)
        self._downstream[transform] = 0
        for upstream in transform.upstream:
            self._downstream[upstream] += 1

    def _check_complete(self) -> None:
        undecided = [stage for stage in self._undecided if not stage.decided]
        if undecided:
            names = ", ".join(f"'{stage.name}'" for stage in undecided)
            raise DagValidationError(
                f"Stream source stage(s) {names} have no timestamp choice: a stream source must be followed by "
                ".with_timestamps(timestamp_fn, allowed_lag), .with_native_timestamps(allowed_lag) or "
                ".without_timestamps() before anything else")
        dangling = [t for t in self._transforms if self._downstream[t] == 0 and not isinstance(t, SinkTransform)]
        if dangling:
            names = ", ".join(t.name for t in dangling)
            raise DagValidationError(
                f"These transforms have nothing attached to them: [{names}]. Attach a sink to each, e.g. "
                ".write_to(Sinks.list('result')) (or .write_to(Sinks.noop()) to discard the items), or attach "
                "further stages")

    def to_dag(self) -> DAG:
        """The DAG Jet's planner would build for this pipeline (a new, equal DAG on every call)."""
        self._check_complete()
        if not self._transforms:
            raise DagValidationError("This pipeline is empty; start it with p.read_from(Sources...)")
        planner = Planner(self._preserve_order)
        for transform in self._transforms:
            transform.add_to_dag(planner)
        return planner.build()

    def to_dot(self, default_local_parallelism: int | None = -1, default_queue_size: int = 1024) -> str:
        """``to_dag().to_dot(...)``: the DOT text Jet prints at job start."""
        return self.to_dag().to_dot(default_local_parallelism, default_queue_size)

    def _repr_svg_(self) -> str | None:
        """IPython draws the pipeline inline: its DAG's picture (``jetspark render``); None while the pipeline
        cannot be lowered (e.g. a stage without a sink)."""
        from dag.graph import repr_svg

        return repr_svg(self.to_dot)

    def __repr__(self) -> str:
        return f"Pipeline({len(self._transforms)} transforms)"
