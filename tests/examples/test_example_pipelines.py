"""The manual's chapter-4 pipeline examples run end to end: trade enrichment with a hash-join (4.7, 4.7.1)
and the page-visit / add-to-cart co-group (4.10, 4.10.2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "examples")]

import page_visits  # noqa: E402
import trade_enrichment as te  # noqa: E402

pytestmark = pytest.mark.spark


def test_trade_enrichment_when_hash_join2_then_every_trade_gets_its_product_and_broker(engine) -> None:
    te.prepare(engine)
    engine.new_job(te.build_pipeline()).join(timeout=300)
    expected = [(t, te.PRODUCTS.get(t.product_id), te.BROKERS[t.broker_id]) for t in te.TRADES]
    assert sorted(engine.get_list("enriched")) == sorted(expected)
    assert (te.Trade("INIT", 3, 10, 101, 70), None, te.BROKERS[10]) in engine.get_list("enriched")


def test_trade_enrichment_when_builder_then_three_tags_resolved(engine) -> None:
    te.prepare(engine)
    engine.new_job(te.build_pipeline_with_builder()).join(timeout=300)
    assert sorted(engine.get_list("enriched")) == sorted([
        "ACME: Product(id=1, name='anvil'), Broker(id=10, name='Wile'), NYSE",
        "GLOBX: Product(id=2, name='rocket'), Broker(id=11, name='Road Runner'), NYSE",
        "INIT: None, Broker(id=10, name='Wile'), TSE",
        "ACME: Product(id=1, name='anvil'), Broker(id=12, name='Elmer'), TSE",
    ])


def test_page_visits_when_co_grouped_then_the_manuals_ratios(engine) -> None:
    page_visits.prepare(engine)
    engine.new_job(page_visits.build_pipeline()).join(timeout=300)
    assert sorted(engine.get_list("result")) == [(1, 0.5), (2, 1.0)]


def test_page_visits_when_aggregate_builder_then_four_inputs_per_user(engine) -> None:
    page_visits.prepare(engine)
    engine.new_job(page_visits.build_builder_pipeline()).join(timeout=300)
    assert sorted(engine.get_list("result")) == [
        "User ID 1: 2 visits, 1 add-to-carts, 2 payments, 1 deliveries",
        "User ID 2: 1 visits, 1 add-to-carts, 0 payments, 0 deliveries",
    ]
