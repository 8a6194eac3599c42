"""Jet 4.5's ``site/docs/api/stateless-transforms.md``, its samples ported to Python (issue 27, part 6).

Kafka topics become ``TestSources.items``; the page's ``ProductService`` is a small class here. Each sample
writes to its own list; the expected results are computed by plain Python from the same data; the ``products``
IMap and ReplicatedMap are the engine's driver maps of that name. Not ported: ``mapUsingPython`` (jetspark is
Python)."""

from __future__ import annotations

import re
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple

import pytest

from pipeline import JoinClause, Pipeline, ServiceFactories, Sinks, TestSources
from processors import traverse_array
from tests.support import unique

pytestmark = pytest.mark.spark

NAMES = ["Ann", "", "BOB", "Cy"]
SENTENCES = ["to be, or not", "to be"]
NYC, TOKYO = ["t1", "t2"], ["t3"]


class Order(NamedTuple):
    order_id: int
    product_id: int


class ProductDetails(NamedTuple):
    product_id: int
    name: str


class OrderDetails(NamedTuple):
    order: Order
    details: ProductDetails | None


CATALOG = {1: "pen", 2: "ink"}
ORDERS = [Order(10, 1), Order(11, 2), Order(12, 3)]


class ProductService:
    """The page's ``ProductService``: blocking, async and batched lookups in a catalog."""

    def __init__(self, url: str):
        self.url = url
        self.pool = ThreadPoolExecutor(2)

    def get_details(self, product_id: int) -> ProductDetails:
        return ProductDetails(product_id, CATALOG.get(product_id, "?"))

    def get_details_async(self, product_id: int) -> Future:
        return self.pool.submit(self.get_details, product_id)

    def get_all_details_async(self, product_ids: list) -> Future:
        return self.pool.submit(lambda: [self.get_details(i) for i in product_ids])


def _then_apply(future: Future, fn) -> Future:
    """Java's ``CompletableFuture.thenApply``."""
    out: Future = Future()
    future.add_done_callback(lambda f: out.set_exception(f.exception()) if f.exception() else
                             out.set_result(fn(f.result())))
    return out


def test_stateless_transforms_page_samples(engine) -> None:
    p = Pipeline.create()
    sinks = {k: unique(k) for k in ("map", "filter", "flat_map", "merge", "service", "async", "batched",
                                    "hash_join", "inner", "imap", "replicated")}
    products = unique("products")
    for target in (engine.get_map(products), engine.get_replicated_map(products)):
        target.update({i: ProductDetails(i, n) for i, n in CATALOG.items()})
    stage = p.read_from(TestSources.items(NAMES))
    # map / filter
    stage.map(lambda name: name.lower()).write_to(Sinks.list(sinks["map"]))
    stage.filter(lambda name: name != "").write_to(Sinks.list(sinks["filter"]))
    # flatMap
    (p.read_from(TestSources.items(SENTENCES))
     .flat_map(lambda sentence: traverse_array([w for w in re.split(r"\W+", sentence) if w]))
     .write_to(Sinks.list(sinks["flat_map"])))
    # merge
    trades_new_york = p.read_from(TestSources.items(NYC))
    trades_tokyo = p.read_from(TestSources.items(TOKYO))
    trades_new_york.merge(trades_tokyo).write_to(Sinks.list(sinks["merge"]))
    orders = p.read_from(TestSources.items(ORDERS))
    # mapUsingIMap / mapUsingReplicatedMap
    orders.map_using_imap(products, lambda order: order.product_id,
                          lambda order, product: OrderDetails(order, product)).write_to(Sinks.list(sinks["imap"]))
    orders.map_using_replicated_map(products, lambda order: order.product_id,
                                    lambda order, product: OrderDetails(order, product)) \
        .write_to(Sinks.list(sinks["replicated"]))
    # mapUsingService
    product_service = ServiceFactories.shared_service(lambda ctx: ProductService("http://catalog")) \
        .to_non_cooperative()
    orders.map_using_service(product_service, lambda service, order: OrderDetails(
        order, service.get_details(order.product_id))).write_to(Sinks.list(sinks["service"]))
    # mapUsingServiceAsync
    async_service = ServiceFactories.shared_service(lambda ctx: ProductService("http://catalog"))
    orders.map_using_service_async(async_service, lambda service, order: _then_apply(
        service.get_details_async(order.product_id), lambda details: OrderDetails(order, details))) \
        .write_to(Sinks.list(sinks["async"]))
    # mapUsingServiceAsyncBatched
    orders.map_using_service_async_batched(async_service, 16, lambda service, order_list: _then_apply(
        service.get_all_details_async([o.product_id for o in order_list]),
        lambda details_list: [OrderDetails(o, d) for o, d in zip(order_list, details_list)])) \
        .write_to(Sinks.list(sinks["batched"]))
    # hashJoin and innerHashJoin
    product_details = p.read_from(TestSources.items([ProductDetails(i, n) for i, n in CATALOG.items()]))
    clause = JoinClause.on_keys(lambda order: order.product_id, lambda product: product.product_id)
    orders.hash_join(product_details, clause, lambda order, product: OrderDetails(order, product)) \
        .write_to(Sinks.list(sinks["hash_join"]))
    orders.inner_hash_join(product_details, clause, lambda order, product: OrderDetails(order, product)) \
        .write_to(Sinks.list(sinks["inner"]))

    engine.new_job(p).join(timeout=300)
    got = {k: sorted(engine.get_list(name), key=repr) for k, name in sinks.items()}
    for name in sinks.values():
        engine.get_list(name).clear()

    def details(order: Order) -> OrderDetails:
        return OrderDetails(order, ProductDetails(order.product_id, CATALOG.get(order.product_id, "?")))

    assert got["map"] == sorted(n.lower() for n in NAMES)
    assert got["filter"] == sorted(n for n in NAMES if n)
    assert got["flat_map"] == sorted(w for s in SENTENCES for w in re.split(r"\W+", s) if w)
    assert got["merge"] == sorted(NYC + TOKYO)
    assert got["service"] == got["async"] == got["batched"] == sorted(map(details, ORDERS), key=repr)
    joined = [OrderDetails(o, ProductDetails(o.product_id, CATALOG[o.product_id]) if o.product_id in CATALOG
                           else None) for o in ORDERS]
    assert got["hash_join"] == got["imap"] == got["replicated"] == sorted(joined, key=repr)
    assert got["inner"] == sorted((j for j in joined if j.details is not None), key=repr)
