"""jetspark's Pipeline API: Jet's high-level API over the Core DAG (manual chapters 3-4).

A pipeline is plain data: sources, stages and sinks. ``p.to_dag()`` lowers it to a ``DAG`` by Jet 4's planner
rules (see :mod:`pipeline.transforms`), so everything that takes a DAG takes a pipeline too
(``engine.new_job(p)``, ``engine.plan(p)``, ``jetspark run/dot/explain/render``). Engine-free: nothing here
imports pyspark.

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
from pipeline.builders import GroupAggregateBuilder, HashJoinBuilder
from pipeline.connectors import BatchSource, Sink, Sinks, Sources, StreamSource, TestSources
from pipeline.events import SimpleEvent, TimestampedItem
from pipeline.file_sources import FileFormat, FileSources
from pipeline.join import ItemsByTag, JoinClause, Tag
from pipeline.json_util import JsonUtil
from pipeline.pipeline import Pipeline
from pipeline.services import ServiceFactories, ServiceFactory
from pipeline.stages import (
    BatchStage,
    BatchStageWithKey,
    GeneralStage,
    SinkStage,
    StreamStage,
    StreamStageWithKey,
)
from pipeline.windows import WindowDefinition
from processors.aggregate.operation import AggregateOperation

__all__ = [
    "Pipeline", "Sources", "Sinks", "TestSources", "WindowDefinition", "JoinClause", "Tag", "ItemsByTag",
    "TimestampedItem", "SimpleEvent", "BatchSource", "StreamSource", "Sink", "BatchStage", "StreamStage",
    "BatchStageWithKey", "StreamStageWithKey", "GeneralStage", "SinkStage", "HashJoinBuilder",
    "GroupAggregateBuilder", "ServiceFactories", "ServiceFactory", "AggregateOperation",
    "Assertions", "AssertionSinks", "AssertionCompletedException", "JsonUtil",
    "FileSources", "FileFormat",
]
