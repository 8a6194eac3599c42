"""Jet 4.5's ``site/docs/api/more-transforms.md`` ported to Python (issue 27): ``rebalance()`` and
``rebalance(key_fn)``, ``peek()``, ``custom_transform`` with a processor of one's own, and the ``JsonUtil``
samples (``bean_from`` with a class, ``map_from``); results checked against plain Python."""

from __future__ import annotations

import json

import pytest

from pipeline import JsonUtil, Pipeline, Sinks, TestSources
from processors import AbstractProcessor, ProcessorMetaSupplier
from tests.support import unique

pytestmark = pytest.mark.spark


class Person:
    """The page's bean: public fields, built from the JSON object's fields."""

    def __init__(self, name: str, age: int):
        self.name = name
        self.age = age


class Doubler(AbstractProcessor):
    """A processor of one's own for ``custom_transform``: emits every item twice."""

    def __init__(self):
        super().__init__()
        self.twice = self.flat_mapper(lambda item: [item, item])

    def try_process0(self, item):
        return self.twice.try_process(item)


def test_more_transforms_page_samples(engine) -> None:
    names = ["rebalanced", "by_key", "peeked", "custom", "beans", "maps"]
    sinks = {n: unique(n) for n in names}
    words = ["the", "quick", "brown", "fox", "jumps"]
    texts = [json.dumps({"name": n, "age": a}) for n, a in [("Jet", 4), ("Spark", 11)]]
    p = Pipeline.create()
    stage = p.read_from(TestSources.items(words))
    stage.rebalance().map(str.upper).write_to(Sinks.list(sinks["rebalanced"]))
    stage.rebalance(len).map(len).write_to(Sinks.list(sinks["by_key"]))
    stage.peek().write_to(Sinks.list(sinks["peeked"]))
    (stage.custom_transform("doubler", ProcessorMetaSupplier.of(Doubler))
     .write_to(Sinks.list(sinks["custom"])))
    json_stage = p.read_from(TestSources.items(texts))
    (json_stage.map(lambda json_string: JsonUtil.bean_from(json_string, Person))
     .map(lambda person: (person.name, person.age)).write_to(Sinks.list(sinks["beans"])))
    json_stage.map(lambda json_string: JsonUtil.map_from(json_string)).write_to(Sinks.list(sinks["maps"]))
    engine.new_job(p).join(timeout=300)
    got = {n: sorted(engine.get_list(name), key=repr) for n, name in sinks.items()}
    for name in sinks.values():
        engine.get_list(name).clear()
    assert got["rebalanced"] == sorted(w.upper() for w in words)
    assert got["by_key"] == sorted(len(w) for w in words)
    assert got["peeked"] == sorted(words)
    assert got["custom"] == sorted(words * 2)
    assert got["beans"] == [("Jet", 4), ("Spark", 11)]
    assert got["maps"] == sorted((json.loads(t) for t in texts), key=repr)
