"""Sources and sinks of the Pipeline API: ``Sources``, ``Sinks``, ``TestSources`` (Jet's ``pipeline.Sources``...).

Each factory returns a descriptor (:mod:`pipeline.descriptors`): a ``BatchSource``, ``StreamSource`` or
``Sink``, holding the vertex name Jet 4 gives it and the processor supplier that runs it.
``SourceBuilder``/``SinkBuilder`` products from ``processors`` are accepted by ``read_from``/``write_to`` as
they are (:func:`as_source`, :func:`as_sink`).

==================================================  =====================  =====================================
factory                                             vertex name            runs
==================================================  =====================  =====================================
``Sources.list(name)``                              ``listSource(NAME)``   ``read_list_p`` (driver-side list)
``Sources.map(name)``                               ``mapSource(NAME)``    ``read_map_p`` (``(key, value)``)
``Sources.files(directory, glob, shared_fs, enc)``  ``filesSource(DIR)``   ``read_files_p`` (lines)
``Sources.batch_from_processor(name, supplier)``    ``NAME``               the supplier
``TestSources.items(*items)``                       ``items``              one processor emitting the items
``Sinks.list(name)`` / ``Sinks.map(name)``          ``listSink(NAME)`` ... ``write_list_p`` / ``write_map_p``
``Sinks.files(directory, to_string_fn)``            ``filesSink(DIR)``     ``write_file_p``
``Sinks.logger(to_string_fn)``                      ``loggerSink``         ``write_logger_p``
``Sinks.noop()``                                    ``noop``               ``noop_p``
``Sinks.from_processor(name, supplier)``            ``NAME``               the supplier
``Sinks.map_with_merging/updating/...``             ``mapWith...Sink(M)``  ``processors.io.map_updating`` (driver)
``Sinks.observable(o)``, ``reliable_topic(t)``      ``observableSink(O)``  ``processors.io.observable_sinks``
``Sources.jdbc(connect, query_or_fn)``              ``jdbcSource``         ``read_jdbc_p`` (``pipeline.jdbc_factories``)
``Sinks.jdbc(query, connect)``, ``jdbc_builder()``  ``jdbcSink``           ``write_jdbc_p`` (``pipeline.jdbc_factories``)
==================================================  =====================  =====================================

The stream sources (``Sources.socket`` -> ``socketSource(HOST:PORT)``, ``Sources.map_journal`` ->
``mapJournalSource(NAME)``, ``Sources.stream_from_processor``, ``TestSources.item_stream`` -> ``itemStream``)
are in :mod:`pipeline.stream_factories`; ``Sources`` and ``TestSources`` expose them.

>>> Sources.list("text").name
'listSource(text)'
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError
from pipeline.descriptors import BatchSource, Sink, StreamSource, collection_name
from pipeline.file_sources import FilesBuilder, file_watcher_source, json_sink, json_source, json_watcher_source
from pipeline.jdbc_factories import JdbcSinkBuilder, jdbc_sink, jdbc_source
from pipeline.rolling_files import FileSinkBuilder
from pipeline.socket_sink import socket_sink
from pipeline.stream_factories import (
    builder_stream_source,
    item_stream_source,
    map_journal_source,
    processor_stream_source,
    socket_source,
)
from processors.io.connector_builders import BatchSource as BuiltBatch
from processors.io.connector_builders import BuiltSink
from processors.io.connector_builders import StreamSource as BuiltStream
from processors.io.collections import read_list_p, read_map_p, write_list_p, write_map_p
from processors.library.diagnostic import write_logger_p
from processors.io.event_journal import JournalInitialPosition
from processors.io.files import read_files_p, write_file_p
from processors.api.inbox import Inbox
from processors.api.processor import Processor
from processors.library.stateless import noop_p
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["BatchSource", "StreamSource", "Sink", "Sources", "Sinks", "TestSources", "as_source", "as_sink"]


def _name(owner: str, name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise DagValidationError(f"{owner}: the name must be a non-empty str, got {name!r}")
    return name


class _SelectEntries:
    """``Sources.map``'s predicate and projection as one function: ``None`` drops the entry."""

    def __init__(self, predicate_fn: Callable | None, projection_fn: Callable | None):
        self.predicate_fn = predicate_fn
        self.projection_fn = projection_fn

    def __call__(self, entry: Any) -> Any:
        if self.predicate_fn is not None and not self.predicate_fn(entry):
            return None
        return entry if self.projection_fn is None else self.projection_fn(entry)


class _ItemsP(Processor):
    """Emits the given items from ``complete()`` (the processor of ``TestSources.items``)."""

    def __init__(self, items: tuple):
        self.items = items
        self._position = 0
        self._outbox: Any = None

    def init(self, outbox: Any, context: Any) -> None:
        self._outbox = outbox

    def process(self, ordinal: int, inbox: Inbox) -> None:  # pragma: no cover - a source has no input
        inbox.clear()

    def complete(self) -> bool:
        self._position = self._outbox.offer_many(self.items, self._position)
        return self._position == len(self.items)


class _ItemsFactory:
    def __init__(self, items: tuple):
        self.items = items

    def __call__(self) -> _ItemsP:
        return _ItemsP(self.items)


class Sources:
    """Factories of pipeline sources (Jet's ``Sources``)."""

    @staticmethod
    def list(list_or_name: Any) -> BatchSource:
        """The items of the driver-side list ``engine.get_list(name)``: the list or its name (Jet 4.5).

        >>> Sources.list("text").name
        'listSource(text)'
        """
        name = collection_name("Sources.list", list_or_name, "list")
        return BatchSource(f"listSource({name})", read_list_p(name))

    @staticmethod
    def map(map_or_name: Any, predicate_fn: Callable[[Any], Any] | None = None,
            projection_fn: Callable[[Any], Any] | None = None) -> BatchSource:
        """The ``(key, value)`` entries of the driver-side map ``engine.get_map(name)`` (the map or its name).

        With ``predicate_fn(entry)`` only the entries it accepts; with ``projection_fn(entry)`` its results
        instead of the entries (``None`` results are dropped), as Jet's ``Sources.map(map, predicate,
        projection)``; both run where the entries are read.

        >>> Sources.map("prices", lambda e: e[1] > 10, lambda e: e[0]).name
        'mapSource(prices)'
        """
        name = collection_name("Sources.map", map_or_name, "map")
        for label, fn in (("predicate_fn", predicate_fn), ("projection_fn", projection_fn)):
            if fn is not None and not callable(fn):
                raise DagValidationError(f"Sources.map({name!r}): {label} must be callable, got {fn!r:.80}")
        post = None if predicate_fn is None and projection_fn is None else _SelectEntries(predicate_fn,
                                                                                          projection_fn)
        return BatchSource(f"mapSource({name})", read_map_p(name), post)

    @staticmethod
    def files(directory: str | os.PathLike, glob: str = "*", shared_fs: bool = False,
              encoding: str = "utf-8") -> BatchSource:
        """The lines of the files in ``directory`` matching ``glob`` (``shared_fs`` as ``read_files_p``)."""
        directory = os.fspath(directory)
        return BatchSource(f"filesSource({directory})",
                           read_files_p(directory, glob, shared_fs, encoding=encoding))

    @staticmethod
    def batch_from_processor(name: str, meta_supplier: Any) -> BatchSource:
        """A bounded source running the processors of ``meta_supplier`` in a vertex named ``name``."""
        return BatchSource(_name("Sources.batch_from_processor", name), meta_supplier)

    @staticmethod
    def json(directory: str | os.PathLike, cls: type | None = None) -> BatchSource:
        """The objects of the JSON Lines files in ``directory``: dicts, or ``cls(**obj)`` (Jet 4.5)."""
        return json_source(directory, cls)

    @staticmethod
    def files_builder(directory: str | os.PathLike) -> FilesBuilder:
        """Jet's ``Sources.filesBuilder``: ``.glob(g).shared_file_system(b).charset(c).build(map_output_fn)``."""
        return FilesBuilder(directory)

    @staticmethod
    def file_watcher(directory: str | os.PathLike) -> StreamSource:
        """A stream of the lines appended to (or written into new) files of ``directory`` after the job
        starts (as ``stream_files_p``)."""
        return file_watcher_source(directory)

    @staticmethod
    def json_watcher(directory: str | os.PathLike, cls: type | None = None) -> StreamSource:
        """As ``file_watcher``, each line a JSON object: a dict, or ``cls(**obj)``."""
        return json_watcher_source(directory, cls)

    @staticmethod
    def socket(host: str, port: int, encoding: str = "utf-8") -> StreamSource:
        """The lines a TCP server sends (a client connection, as ``stream_socket_p``); a stream source."""
        return socket_source(host, port, encoding)

    @staticmethod
    def map_journal(map_or_name: Any, initial_position: JournalInitialPosition = JournalInitialPosition.START_FROM_OLDEST,
                    predicate_fn: Callable | None = None, projection_fn: Callable | None = None) -> StreamSource:
        """The event journal of the driver-side map (the map or its name; as ``stream_map_p``); a stream source."""
        name = collection_name("Sources.map_journal", map_or_name, "map")
        return map_journal_source(name, initial_position, predicate_fn, projection_fn)

    @staticmethod
    def stream_from_processor(name: str, meta_supplier: Any) -> StreamSource:
        """An unbounded source running the processors of ``meta_supplier`` in a vertex named ``name``."""
        return processor_stream_source(_name("Sources.stream_from_processor", name), meta_supplier)

    @staticmethod
    def jdbc(new_connection_fn: Callable[[], Any], query_or_result_set_fn: Any,
             create_output_fn: Callable[[Any], Any] | None = None) -> BatchSource:
        """Database rows through DB-API (``read_jdbc_p``): an SQL string runs once in one processor;
        ``result_set_fn(connection, parallelism, index)`` gives every processor its share; vertex ``jdbcSource``."""
        return jdbc_source(new_connection_fn, query_or_result_set_fn, create_output_fn)


class TestSources:
    """Sources for tests (Jet's ``pipeline.test.TestSources``)."""

    __test__ = False  # not a pytest test class

    @staticmethod
    def items(*items: Any) -> BatchSource:
        """A batch source emitting ``items`` from one processor (a single ``list`` argument: its items, as Jet's
        ``items(Collection)``; anything else, a tuple included, is one item).

        >>> TestSources.items(1, 2, 3).name
        'items'
        """
        if len(items) == 1 and isinstance(items[0], list):
            items = tuple(items[0])
        if any(item is None for item in items):
            raise DagValidationError("TestSources.items(): items must not be None (a pipeline never carries None)")
        supplier = ProcessorMetaSupplier.force_total_parallelism_one(_ItemsFactory(tuple(items)))
        return BatchSource("items", supplier)

    @staticmethod
    def item_stream(items_per_second: int, generator_fn: Callable[[int, int], Any] | None = None) -> StreamSource:
        """A stream of ``SimpleEvent(timestamp, sequence)`` (or ``generator_fn(timestamp, sequence)``) at
        ``items_per_second``, with native timestamps; its vertex is ``itemStream``."""
        return item_stream_source(items_per_second, generator_fn)


class Sinks:
    """Factories of pipeline sinks (Jet's ``Sinks``)."""

    @staticmethod
    def list(name: str) -> Sink:
        """Appends the items to the driver-side list ``engine.get_list(name)``."""
        return Sink(f"listSink({_name('Sinks.list', name)})", write_list_p(name))

    @staticmethod
    def map(name: str) -> Sink:
        """Puts ``(key, value)`` entries into the driver-side map ``engine.get_map(name)``."""
        return Sink(f"mapSink({_name('Sinks.map', name)})", write_map_p(name))

    @staticmethod
    def files(directory: str | os.PathLike, to_string_fn: Callable[[Any], str] = str) -> Sink:
        """One file per processor in ``directory``, a line ``to_string_fn(item)`` per item (``write_file_p``)."""
        directory = os.fspath(directory)
        return Sink(f"filesSink({directory})", write_file_p(directory, to_string_fn))

    @staticmethod
    def logger(to_string_fn: Callable[[Any], Any] = str) -> Sink:
        """Logs every item at INFO (``write_logger_p``)."""
        return Sink("loggerSink", write_logger_p(to_string_fn))

    @staticmethod
    def noop() -> Sink:
        """Discards the items."""
        return Sink("noop", noop_p())

    @staticmethod
    def from_processor(name: str, meta_supplier: Any) -> Sink:
        """A sink running the processors of ``meta_supplier`` in a vertex named ``name``."""
        return Sink(_name("Sinks.from_processor", name), meta_supplier)

    @staticmethod
    def jdbc(update_query: str, new_connection_fn: Callable[[], Any],
             bind_fn: Callable[[Any], Any] | None = None) -> Sink:
        """Runs ``update_query`` per item in batches through DB-API (``write_jdbc_p``); vertex ``jdbcSink``."""
        return jdbc_sink(update_query, new_connection_fn, bind_fn)

    @staticmethod
    def jdbc_builder() -> JdbcSinkBuilder:
        """A ``JdbcSinkBuilder``: ``.update_query(q).connection_fn(fn)[.bind_fn(fn).exactly_once(b)
        .batch_limit(n)].build()``."""
        return JdbcSinkBuilder()

    @staticmethod
    def files_builder(directory: str | os.PathLike) -> FileSinkBuilder:
        """Jet's ``Sinks.filesBuilder``: ``.to_string_fn(fn).roll_by_date(pattern).roll_by_file_size(max_bytes)
        .exactly_once(b).build()`` (see :mod:`pipeline.rolling_files`)."""
        return FileSinkBuilder(directory)

    @staticmethod
    def socket(host: str, port: int, to_string_fn: Callable[[Any], Any] = str) -> Sink:
        """Each item as a line ``to_string_fn(item)`` to the TCP server at ``host:port`` (one connection per
        processor; Jet 4.5)."""
        return socket_sink(host, port, to_string_fn)

    @staticmethod
    def map_with_merging(map_or_name: Any, key_fn: Callable[[Any], Any], value_fn: Callable[[Any], Any],
                         merge_fn: Callable[[Any, Any], Any]) -> Sink:
        """Jet's ``Sinks.mapWithMerging``: puts ``value_fn(item)`` under ``key_fn(item)`` in the driver map, or
        ``merge_fn(old, value)`` when the key is there (a ``None`` result removes the key); applied on the
        driver (``processors.io.map_updating``). Vertex ``mapWithMergingSink(NAME)``.

        >>> Sinks.map_with_merging("counts", str.lower, lambda w: 1, lambda old, new: old + new).name
        'mapWithMergingSink(counts)'
        """
        from processors.io.map_updating import merge_map_p

        name = collection_name("Sinks.map_with_merging", map_or_name, "map")
        return Sink(f"mapWithMergingSink({name})", merge_map_p(name, key_fn, value_fn, merge_fn))

    @staticmethod
    def map_with_updating(map_or_name: Any, key_fn: Callable[[Any], Any],
                          update_fn: Callable[[Any, Any], Any]) -> Sink:
        """Jet's ``Sinks.mapWithUpdating``: puts ``update_fn(old_value_or_None, item)`` under ``key_fn(item)``
        (a ``None`` result removes the key). Vertex ``mapWithUpdatingSink(NAME)``."""
        from processors.io.map_updating import update_map_p

        name = collection_name("Sinks.map_with_updating", map_or_name, "map")
        return Sink(f"mapWithUpdatingSink({name})", update_map_p(name, key_fn, update_fn))

    @staticmethod
    def map_with_entry_processor(map_or_name: Any, key_fn: Callable[[Any], Any],
                                 processor_fn: Callable[[Any], Any]) -> Sink:
        """Jet's ``Sinks.mapWithEntryProcessor``: ``processor_fn(item).process(entry)`` on the entry of
        ``key_fn(item)``; the entry has ``get_key()``, ``get_value()`` and ``set_value(v)`` (``None`` removes the
        key). Vertex ``mapWithEntryProcessorSink(NAME)``."""
        from processors.io.map_updating import update_map_with_entry_processor_p

        name = collection_name("Sinks.map_with_entry_processor", map_or_name, "map")
        return Sink(f"mapWithEntryProcessorSink({name})",
                    update_map_with_entry_processor_p(name, key_fn, processor_fn))

    @staticmethod
    def observable(observable_or_name: Any) -> Sink:
        """Jet's ``Sinks.observable``: publishes the items to ``engine.get_observable(name)`` (or the observable
        given), whose observers get them as they come and ``on_complete``/``on_error`` when the job ends. Vertex
        ``observableSink(NAME)``.

        >>> Sinks.observable("results").name
        'observableSink(results)'
        """
        from processors.io.observable_sinks import write_observable_p

        name = collection_name("Sinks.observable", observable_or_name, "observable")
        return Sink(f"observableSink({name})", write_observable_p(name))

    @staticmethod
    def reliable_topic(topic_or_name: Any) -> Sink:
        """Jet's ``Sinks.reliableTopic``: every item a message of ``engine.get_reliable_topic(name)``, each
        listener getting each message once, in order. Vertex ``reliableTopicSink(NAME)``."""
        from processors.io.observable_sinks import write_reliable_topic_p

        name = collection_name("Sinks.reliable_topic", topic_or_name, "reliable_topic")
        return Sink(f"reliableTopicSink({name})", write_reliable_topic_p(name))

    @staticmethod
    def json(directory: str | os.PathLike) -> Sink:
        """One JSON object per line (``JsonUtil.to_json(item)``), one file per processor in ``directory``."""
        return json_sink(directory)


def as_source(source: Any) -> BatchSource | StreamSource:
    """``source`` as a descriptor: pipeline sources as they are, ``SourceBuilder`` products wrapped."""
    if isinstance(source, (BatchSource, StreamSource)):
        return source
    if isinstance(source, BuiltBatch):
        return BatchSource(source.name, source)
    if isinstance(source, BuiltStream):
        return builder_stream_source(source)
    raise TypeError(
        f"read_from(source): expected a source from Sources/TestSources or a SourceBuilder product, got "
        f"{source!r:.80} ({type(source).__name__}); e.g. p.read_from(Sources.list('input'))")


def as_sink(sink: Any) -> Sink:
    """``sink`` as a descriptor: pipeline sinks as they are, ``SinkBuilder`` products wrapped."""
    if isinstance(sink, Sink):
        return sink
    if isinstance(sink, BuiltSink):
        return Sink(sink.name, sink)
    raise TypeError(
        f"write_to(sink): expected a sink from Sinks or a SinkBuilder product, got {sink!r:.80} "
        f"({type(sink).__name__}); e.g. stage.write_to(Sinks.list('result'))")
