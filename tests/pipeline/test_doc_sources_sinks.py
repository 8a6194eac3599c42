"""Jet 4.5's ``site/docs/api/sources-sinks.md``, its samples that need no outside system ported to Python
(issue 27): the in-memory data structures (IMap as a source, its event journal, the three updating map sinks,
predicates and projections, IList, the reliable topic), the test sources, observables (observers, futures,
cleanup) and the source and sink builders. ``jet.getMap``/``getList``/``getReliableTopic``/``newObservable``
are the engine's; where a sample logs or prints, the port collects into a list and checks it against plain
Python. Not ported here: the file connectors (``tests/pipeline/test_jet45_files.py``), Hadoop, Avro, Parquet,
S3, Kafka, Kinesis, JMS, Pulsar, JDBC, CDC, Elasticsearch, MongoDB, Redis, Twitter (outside systems)."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from pipeline import Pipeline, Sinks, SimpleEvent, Sources, TestSources
from processors import JournalInitialPosition, SinkBuilder, SourceBuilder, entry
from tests.support import running, unique, wait_for

pytestmark = pytest.mark.spark


class User(NamedTuple):
    name: str
    country: str
    details: str | None = None

    def set_details(self, details: str) -> User:
        return self._replace(details=details)


class Person(NamedTuple):
    name: str
    age: int


USERS = {"u1": User("Ann", "NL"), "u2": User("Bob", "JP"), "u3": User("Cy", "NL")}


def _drain(engine, name: str) -> list:
    items = list(engine.get_list(name))
    engine.get_list(name).clear()
    return items


def test_imap_list_and_updating_map_sink_samples(engine) -> None:
    user_cache_name, details_name = unique("usersCache"), unique("userCacheDetails")
    by_country, user_cache, inputs, output = (unique(n) for n in ("usersByCountry", "userCache", "input", "output"))
    person_cache, input_list, result_list, read, adults = (
        unique(n) for n in ("personCache", "inputList", "resultList", "read", "adults"))
    engine.get_map(user_cache_name).update(USERS)
    engine.get_map(user_cache).update({k: u for k, u in USERS.items() if k != "u3"})
    engine.get_map(details_name).update({"u1": "likes tea", "u3": "new user"})
    engine.get_map(inputs).update({"a": 1, "b": 2})
    engine.get_map(output).update({"a": 10, "b": 20})
    engine.get_map(person_cache).update({1: Person("Ann", 20), 2: Person("Bob", 21), 3: Person("Cy", 40)})
    input_list_obj = engine.get_list(input_list)
    input_list_obj.extend(range(10))

    class IncrementEntryProcessor:
        def process(self, e):
            return e.set_value(e.get_value() + 5)

    p = Pipeline.create()
    # IMap as a batch source
    p.read_from(Sources.map(engine.get_map(user_cache_name))).write_to(Sinks.list(read))
    # mapWithMerging: the users' names per country, concatenated
    (p.read_from(Sources.map(user_cache_name))
     .map(lambda e: entry(e[1].country, e[1]))
     .write_to(Sinks.map_with_merging(by_country, lambda e: e[0], lambda e: e[1].name,
                                      lambda old_value, new_value: old_value + ", " + new_value)))
    # mapWithUpdating: adds the details to a cached user (a user not cached stays absent: None removes)
    (p.read_from(Sources.map(details_name))
     .write_to(Sinks.map_with_updating(user_cache, lambda e: e[0],
                                       lambda old_value, e: old_value.set_details(e[1]) if old_value else None)))
    # mapWithEntryProcessor: +5 to each value of "output" named in "input"
    (p.read_from(Sources.map(inputs))
     .write_to(Sinks.map_with_entry_processor(output, lambda e: e[0], lambda e: IncrementEntryProcessor())))
    # predicates and projections
    (p.read_from(Sources.map(engine.get_map(person_cache), lambda e: e[1].age >= 21, lambda e: e[1].name))
     .write_to(Sinks.list(adults)))
    # IList
    p.read_from(Sources.list(input_list_obj)).map(lambda i: f"item-{i}").write_to(Sinks.list(result_list))
    engine.new_job(p).join(timeout=300)

    assert sorted(_drain(engine, read)) == sorted(USERS.items())
    countries = dict(engine.get_map(by_country))
    assert set(countries) == {"NL", "JP"} and countries["JP"] == "Bob"
    assert sorted(countries["NL"].split(", ")) == ["Ann", "Cy"]  # merged in the order the items came
    assert dict(engine.get_map(user_cache)) == {"u1": USERS["u1"].set_details("likes tea"), "u2": USERS["u2"]}
    assert dict(engine.get_map(output)) == {"a": 15, "b": 25}
    assert sorted(_drain(engine, adults)) == ["Bob", "Cy"]
    assert sorted(_drain(engine, result_list)) == sorted(f"item-{i}" for i in range(10))


def test_event_journal_sample_streams_the_changes(engine) -> None:
    user_cache, out = unique("usersCache"), unique("journal")
    cache = engine.get_map(user_cache)
    cache["u1"] = USERS["u1"]
    p = Pipeline.create()
    (p.read_from(Sources.map_journal(cache, JournalInitialPosition.START_FROM_OLDEST))
     .with_ingestion_timestamps()
     .write_to(Sinks.list(out)))
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(engine.get_list(out)) >= 1, 120, "the existing entry from the journal")
        cache["u2"] = USERS["u2"]
        cache["u1"] = USERS["u1"].set_details("updated")
        del cache["u2"]  # a REMOVED event: not emitted by default
        wait_for(lambda: len(engine.get_list(out)) >= 3, 60, "the added and updated entries")
    assert sorted(_drain(engine, out), key=repr) == sorted(
        [("u1", USERS["u1"]), ("u2", USERS["u2"]), ("u1", USERS["u1"].set_details("updated"))], key=repr)


def test_reliable_topic_sample_listener_gets_each_event_once(engine) -> None:
    name = unique("topic")
    printed: list = []
    engine.get_reliable_topic(name).add_message_listener(lambda message: printed.append(message))
    p = Pipeline.create()
    p.read_from(TestSources.item_stream(100)).with_ingestion_timestamps().write_to(Sinks.reliable_topic(name))
    def sequences() -> set:
        return {message.get_message_object().sequence for message in list(printed)}

    with running(engine, p, join_timeout=120):
        wait_for(lambda: sequences() >= set(range(20)), 120, "the first 20 events at the listener")
    events = [message.get_message_object() for message in printed]
    assert all(isinstance(e, SimpleEvent) for e in events)
    assert len({e.sequence for e in events}) == len(events)  # each message once (the stage may reorder them)


def test_test_sources_samples(engine) -> None:
    batch, stream = unique("items"), unique("stream")
    p = Pipeline.create()
    p.read_from(TestSources.items(1, 2, 3, 4)).write_to(Sinks.list(batch))
    engine.new_job(p).join(timeout=300)
    assert sorted(_drain(engine, batch)) == [1, 2, 3, 4]
    p = Pipeline.create()
    p.read_from(TestSources.item_stream(10)).with_native_timestamps(0).write_to(Sinks.list(stream))
    with running(engine, p, join_timeout=120):
        wait_for(lambda: len(engine.get_list(stream)) >= 3, 120, "3 SimpleEvents")
    events = _drain(engine, stream)
    assert [e.sequence for e in events] == list(range(len(events)))
    assert all(b.timestamp >= a.timestamp for a, b in zip(events, events[1:]))


def test_observable_samples_observer_future_and_cleanup(engine) -> None:
    # the streaming sample: the observer prints on the client while the job runs
    observable = engine.new_observable()
    printed: list = []
    observable.add_observer(lambda e: printed.append(f"Printed from client: {e}"))
    pipeline = Pipeline.create()
    pipeline.read_from(TestSources.item_stream(5)).with_ingestion_timestamps().write_to(Sinks.observable(observable))
    try:
        with running(engine, pipeline, join_timeout=120):
            wait_for(lambda: len(printed) >= 3, 120, "3 lines printed from the client")
    finally:
        observable.destroy()
    assert printed[0].startswith("Printed from client: SimpleEvent(")
    # futures: collect a batch job's results into a list
    observable = engine.new_observable()
    p = Pipeline.create()
    p.read_from(TestSources.items("a", "b", "c", "d")).write_to(Sinks.observable(observable))
    future = observable.to_future(lambda s: list(s))
    engine.new_job(p)
    try:
        results = future.result(timeout=300)
    finally:
        observable.destroy()
    assert sorted(results) == ["a", "b", "c", "d"]
    assert observable not in engine.get_observables()  # cleanup


def test_source_and_sink_builder_samples(engine, tmp_path) -> None:
    (tmp_path / "input.txt").write_text("first line\nsecond line\n")
    output = tmp_path / "output.txt"
    input_path, output_path = str(tmp_path / "input.txt"), str(output)

    def fill_buffer(reader, buf):
        line = reader.readline()
        if line:
            buf.add(line.rstrip("\n"))
        else:
            buf.close()

    file_source = (SourceBuilder.batch("file-source", lambda ctx: open(input_path))  # noqa: SIM115
                   .fill_buffer_fn(fill_buffer).destroy_fn(lambda reader: reader.close()).build())
    sink = (SinkBuilder.sink_builder("file-sink", lambda ctx: open(output_path, "w"))  # noqa: SIM115
            .receive_fn(lambda out, item: out.write(str(item) + "\n"))
            .destroy_fn(lambda out: out.close()).build())
    p = Pipeline.create()
    p.read_from(file_source).map(str.upper).write_to(sink)
    engine.new_job(p).join(timeout=300)
    assert output.read_text().splitlines() == ["FIRST LINE", "SECOND LINE"]
