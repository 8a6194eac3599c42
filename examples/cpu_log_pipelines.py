"""The pipelines of Jet's 4.0 source/sink tutorials, line for line: the CPU-log producer and consumer, and the
network consumer of the streaming-source tutorial.

Producer (tutorial "Custom Sources and Sinks", steps 5-8)::

    p.readFrom(TestSources.itemStream(10)).withoutTimestamps().writeTo(cpuSink)

whose DOT is the one Jet prints at job start (:data:`TUTORIAL_DOT`). Consumer (step 12)::

    p.readFrom(cpuSource).writeTo(Sinks.logger())

Network consumer (steps 16-17 and the streaming tutorial)::

    p.readFrom(networkSource).withoutTimestamps()  /  .withNativeTimestamps(0)
     .peek().writeTo(Sinks.noop())

The producer and network consumer read stream sources: they run on the pipelined runtime until cancelled.
The consumer is a batch job.
"""

from __future__ import annotations

import os
import socket

from cpu_log_sink import CpuLogWriter
from file_source import build_cpu_log_source
from pipeline import Pipeline, Sinks, TestSources
from processors import SinkBuilder, SourceBuilder

TUTORIAL_DOT = """digraph DAG {
    "itemStream" [localParallelism=1];
    "cpu-sink" [localParallelism=1];
    "itemStream" -> "cpu-sink" [queueSize=1024];
}"""
"""The DOT Jet printed when the tutorial's producer started (Jet indents with 4 spaces, jetspark with a tab)."""


def build_cpu_log_sink(directory: str | os.PathLike = ".", local_parallelism: int = 1):
    """The tutorial's sink with batching (step 8): ``data.<global processor index>.csv`` in ``directory``."""
    directory = os.fspath(directory)
    return (SinkBuilder.sink_builder(
                "cpu-sink", lambda ctx: CpuLogWriter(os.path.join(directory, f"data.{ctx.global_processor_index}.csv")))
            .receive_fn(CpuLogWriter.write)
            .flush_fn(CpuLogWriter.flush)
            .destroy_fn(CpuLogWriter.destroy)
            .preferred_local_parallelism(local_parallelism)
            .build())


def producer_pipeline(directory: str | os.PathLike = ".") -> Pipeline:
    """``CpuLogProducer``: ten test events a second, logged by the CPU-log sink."""
    p = Pipeline.create()
    p.read_from(TestSources.item_stream(10)).without_timestamps().write_to(build_cpu_log_sink(directory))
    return p


def consumer_pipeline(path: str | os.PathLike = "data.0.csv", sink=None) -> Pipeline:
    """``CpuLogConsumer``: the CPU log read back with the file source, into ``sink`` (default: the logger)."""
    p = Pipeline.create()
    p.read_from(build_cpu_log_source(path)).write_to(sink if sink is not None else Sinks.logger())
    return p


class NetworkContext:
    """The network source's state: a server socket that accepted one connection, and its reader."""

    def __init__(self, port: int, logger) -> None:
        self.server = socket.create_server(("127.0.0.1", port))
        logger.info("Waiting for connection on port %d ...", port)
        self.connection, _ = self.server.accept()
        self.reader = self.connection.makefile("r", encoding="utf-8")
        logger.info("Data source connected on port %d.", port)

    def close(self) -> None:
        self.reader.close()
        self.connection.close()
        self.server.close()


def _fill(context: NetworkContext, buf, timestamped: bool) -> None:
    for _ in range(128):
        line = context.reader.readline()
        if not line:
            buf.close()
            return
        line = line.rstrip("\n")
        if timestamped:
            buf.add(line, int(line[:line.index(",")]))
        else:
            buf.add(line)


def build_network_source(timestamped: bool = False, port: int = 11000):
    """The tutorial's network source: a server on ``port`` (+ the global processor index) reading lines."""
    builder = SourceBuilder.timestamped_stream if timestamped else SourceBuilder.stream
    return (builder("network-source",
                    lambda ctx: NetworkContext(port + ctx.global_processor_index, ctx.logger))
            .fill_buffer_fn(lambda context, buf: _fill(context, buf, timestamped))
            .destroy_fn(NetworkContext.close)
            .build())


def network_consumer_pipeline(timestamped: bool = False) -> Pipeline:
    """``NetworkConsumer``: the network source, peeked, into the no-op sink (native timestamps if
    ``timestamped``)."""
    p = Pipeline.create()
    stage = p.read_from(build_network_source(timestamped))
    stage = stage.with_native_timestamps(0) if timestamped else stage.without_timestamps()
    stage.peek().write_to(Sinks.noop())
    return p


def job(pipeline: str = "producer", directory: str = ".", path: str = "data.0.csv", timestamped: bool = False):
    """``jetspark run examples/cpu_log_pipelines.py [--pipeline producer|consumer|network]``: the tutorial's
    ``CpuLogProducer`` (into ``directory``), ``CpuLogConsumer`` (reading ``path``) or ``NetworkConsumer``."""
    pipelines = {"producer": lambda: producer_pipeline(directory), "consumer": lambda: consumer_pipeline(path),
                 "network": lambda: network_consumer_pipeline(timestamped)}
    if pipeline not in pipelines:
        raise ValueError(f"--pipeline {pipeline!r}: expected one of {', '.join(pipelines)}")
    return pipelines[pipeline]()
