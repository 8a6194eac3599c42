"""``Pipeline``: a pipeline is plain data, a graph of transforms (:mod:`pipeline.transform_graph`) with the
user's entry points; ``to_dag()`` lowers it by Jet 4's planner rules.

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

from typing import Any, overload

from jetspark_base.errors import DagValidationError
from dag.model import DAG
from pipeline.connectors import as_source
from pipeline.descriptors import BatchSource, StreamSource
from pipeline.stages import BatchStage
from pipeline.stream_source_stage import StreamSourceStage
from pipeline.transform_graph import TransformGraph
from pipeline.transforms import SourceTransform

__all__ = ["Pipeline"]


class Pipeline(TransformGraph):
    """A Jet pipeline: sources, stages and sinks, lowered to a DAG by ``to_dag()``."""

    def __init__(self) -> None:
        super().__init__()
        self._undecided: list[StreamSourceStage] = []  # stream-source stages still waiting for a timestamp choice

    def set_preserve_order(self, value: bool) -> Pipeline:
        """Keep the items' order through stateless stages (Jet 4.4): each takes the local parallelism of the
        stage before it and an isolated edge from it (see :mod:`pipeline.more_transforms`); also makes
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

    @overload
    def read_from(self, source: BatchSource) -> BatchStage: ...

    @overload
    def read_from(self, source: StreamSource) -> StreamSourceStage: ...

    @overload
    def read_from(self, source: Any) -> BatchStage | StreamSourceStage: ...

    def read_from(self, source: Any) -> BatchStage | StreamSourceStage:
        """A stage reading ``source``: a ``BatchStage``, or for a stream source a stage on which you choose
        the timestamps (``.with_timestamps(fn, lag)``, ``.with_native_timestamps(lag)``,
        ``.without_timestamps()``)."""
        descriptor = as_source(source)
        if isinstance(descriptor, BatchSource):
            return BatchStage(SourceTransform(self, descriptor.name, descriptor.supplier, descriptor.post_fn))
        stage = StreamSourceStage(self, descriptor)
        self._undecided.append(stage)
        return stage

    draw_from = read_from

    def to_dag(self) -> DAG:
        """The DAG Jet's planner would build for this pipeline (a new, equal DAG on every call)."""
        undecided = [stage for stage in self._undecided if not stage.decided]
        if undecided:
            names = ", ".join(f"'{stage.name}'" for stage in undecided)
            raise DagValidationError(
                f"Stream source stage(s) {names} have no timestamp choice: a stream source must be followed by "
                ".with_timestamps(timestamp_fn, allowed_lag), .with_native_timestamps(allowed_lag) or "
                ".without_timestamps() before anything else")
        return super().to_dag()

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
