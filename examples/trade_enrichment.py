"""Trade enrichment with a hash-join (Jet manual 4.7): each trade gets its product and broker.

::

    trades   = p.read_from(Sources.list("trades"))
    products = p.read_from(Sources.map("products"))       # product id -> Product
    brokers  = p.read_from(Sources.map("brokers"))        # broker id -> Broker
    trades.hash_join2(products, JoinClause.join_map_entries(Trade.product_id),
                      brokers,  JoinClause.join_map_entries(Trade.broker_id),
                      lambda trade, product, broker: (trade, product, broker))

The enriching maps are read in full (one lookup table per member, built by the ``hash-join-collector-N``
vertices) before the first trade is joined; a trade whose product or broker is missing gets ``None``.
:func:`build_pipeline_with_builder` is the same join with the hash-join builder (manual 4.7.1), adding markets.

Run it: ``python examples/trade_enrichment.py``.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from pipeline import JoinClause, Pipeline, Sinks, Sources


class Trade(NamedTuple):
    ticker: str
    product_id: int
    broker_id: int
    market_id: int
    quantity: int


class Product(NamedTuple):
    id: int
    name: str


class Broker(NamedTuple):
    id: int
    name: str


TRADES = [Trade("ACME", 1, 10, 100, 50), Trade("GLOBX", 2, 11, 100, 20), Trade("INIT", 3, 10, 101, 70),
          Trade("ACME", 1, 12, 101, 5)]
PRODUCTS = {1: Product(1, "anvil"), 2: Product(2, "rocket")}
BROKERS = {10: Broker(10, "Wile"), 11: Broker(11, "Road Runner"), 12: Broker(12, "Elmer")}
MARKETS = {100: "NYSE", 101: "TSE"}


def product_of(trade: Trade) -> int:
    return trade.product_id


def broker_of(trade: Trade) -> int:
    return trade.broker_id


def market_of(trade: Trade) -> int:
    return trade.market_id


def build_pipeline() -> Pipeline:
    """trades (list) hash-joined with the maps ``products`` and ``brokers`` into the list ``enriched``."""
    p = Pipeline.create()
    trades = p.read_from(Sources.list("trades"))
    products = p.read_from(Sources.map("products"))
    brokers = p.read_from(Sources.map("brokers"))
    joined = trades.hash_join2(products, JoinClause.join_map_entries(product_of),
                               brokers, JoinClause.join_map_entries(broker_of),
                               lambda trade, product, broker: (trade, product, broker))
    joined.write_to(Sinks.list("enriched"))
    return p


def build_pipeline_with_builder() -> Pipeline:
    """The same join with ``hash_join_builder()`` and a third map, ``markets``, into ``enriched``."""
    p = Pipeline.create()
    trades = p.read_from(Sources.list("trades"))
    builder = trades.hash_join_builder()
    product_tag = builder.add(p.read_from(Sources.map("products")), JoinClause.join_map_entries(product_of))
    broker_tag = builder.add(p.read_from(Sources.map("brokers")), JoinClause.join_map_entries(broker_of))
    market_tag = builder.add(p.read_from(Sources.map("markets")), JoinClause.join_map_entries(market_of))
    joined = builder.build(lambda trade, ibt: (trade, ibt.get(product_tag), ibt.get(broker_tag), ibt.get(market_tag)))
    joined.map(lambda t: f"{t[0].ticker}: {t[1]}, {t[2]}, {t[3]}").write_to(Sinks.list("enriched"))
    return p


def prepare(engine) -> None:
    """Fill the sources with the sample trades, products, brokers and markets; empty ``enriched``."""
    engine.get_list("trades")[:] = TRADES
    for name, data in (("products", PRODUCTS), ("brokers", BROKERS), ("markets", MARKETS)):
        engine.get_map(name).clear()
        engine.get_map(name).update(data)
    engine.get_list("enriched").clear()


def report(engine) -> None:
    """Print the enriched trades of :func:`build_pipeline`, one per line."""
    for trade, product, broker in sorted(engine.get_list("enriched")):
        print(f"{trade.ticker:<6} x{trade.quantity:<3} {product and product.name!s:<7} via {broker.name}")


def job(builder: bool = False):
    """``jetspark run examples/trade_enrichment.py [--builder]``: the two-map hash join (``--builder``: the
    three-map ``hash_join_builder`` pipeline) over the sample data filled in ``prepare``."""
    from jetspark_cli.spec import JobSpec

    if builder:
        return JobSpec(build_pipeline_with_builder(), prepare=prepare, name="trade-enrichment",
                       report=lambda engine, _job: print("\n".join(sorted(engine.get_list("enriched")))))
    return JobSpec(build_pipeline(), prepare=prepare, report=lambda engine, _job: report(engine),
                   name="trade-enrichment")


def main() -> int:
    from dag import Engine

    with Engine() as engine:
        prepare(engine)
        engine.new_job(build_pipeline()).join()
        report(engine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
