"""jetspark's Pipeline API: Jet's high-level API over the Core DAG (manual chapters 3-4).

A pipeline is plain data: sources, stages and sinks. A stage is a thin handle on one transform of the
pipeline's transform graph; its methods call operations (free functions) that add transforms, and
``p.to_dag()`` lowers the graph to a ``DAG`` by Jet 4's planner rules (handle -> operation -> transform ->
planner: see :mod:`pipeline.stages` and :mod:`pipeline.transform_graph`), so everything that takes a DAG takes
a pipeline too (``engine.new_job(p)``, ``engine.plan(p)``, ``jetspark run/dot/explain/render``). Engine-free:
nothing here imports pyspark.

>>> from pipeline import Pipeline, Sources, Sinks
>>> from processors import counting, whole_item
>>> p = Pipeline.create()
>>> (p.read_from(Sources.list("text"))
...   .flat_map(str.split)
...   .grouping_key(whole_item)
...   .aggregate(counting())
...   .write_to(Sinks.map("counts"))).name
'mapSink(counts)'
>>> [v.name for v in p.to_dag().vertices]
['listSource(text)', 'flat-map', 'group-and-aggregate-prepare', 'group-and-aggregate', 'mapSink(counts)']
"""

from __future__ import annotations

from pipeline.assertions import AssertionCompletedException, Assertions, AssertionSinks
from pipeline.connectors import Sinks, Sources, TestSources
from pipeline.descriptors import BatchSource, Sink, StreamSource
from pipeline.events import SimpleEvent, TimestampedItem
from pipeline.file_sources import FileFormat, FileSources
from pipeline.join import ItemsByTag, JoinClause, Tag
from pipeline.json_util import JsonUtil
from pipeline.pipeline import Pipeline
from pipeline.keyed_stages import BatchStageWithKey, GroupAggregateBuilder, StreamStageWithKey
from pipeline.services import ServiceFactories, ServiceFactory
from pipeline.stages import BatchStage, GeneralStage, HashJoinBuilder, SinkStage, StreamStage
from pipeline.window_aggregate import WindowDefinition
from processors.aggregate.operation import AggregateOperation

__all__ = [
    "Pipeline", "Sources", "Sinks", "TestSources", "WindowDefinition", "JoinClause", "Tag", "ItemsByTag",
    "TimestampedItem", "SimpleEvent", "BatchSource", "StreamSource", "Sink", "BatchStage", "StreamStage",
    "BatchStageWithKey", "StreamStageWithKey", "GeneralStage", "SinkStage", "HashJoinBuilder",
    "GroupAggregateBuilder", "ServiceFactories", "ServiceFactory", "AggregateOperation",
    "Assertions", "AssertionSinks", "AssertionCompletedException", "JsonUtil",
    "FileSources", "FileFormat",
]
