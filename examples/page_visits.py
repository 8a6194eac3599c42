"""Correlate page visits and add-to-cart actions per user with a co-group (Jet manual 4.10).

::

    page_visit  = p.read_from(Sources.list("pageVisit")).grouping_key(PageVisit.user_id)
    add_to_cart = p.read_from(Sources.list("addToCart")).grouping_key(AddToCart.user_id)
    page_visit.aggregate2(counting(), add_to_cart, counting(),
                          lambda user_id, visits, adds: (user_id, adds / visits))

User 1 made two visits and added one item to the cart, user 2 one visit and one item, so the result is
``(1, 0.5)`` and ``(2, 1.0)`` as in the manual. :func:`build_builder_pipeline` is the manual's 4.10.2 co-group of
four streams (visits, add-to-carts, payments, deliveries) with the aggregate builder.

Run it: ``python examples/page_visits.py``.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from pipeline import Pipeline, Sinks, Sources
from processors import counting, to_list


class PageVisit(NamedTuple):
    user_id: int


class AddToCart(NamedTuple):
    user_id: int


class Payment(NamedTuple):
    user_id: int
    amount: int


class Delivery(NamedTuple):
    user_id: int


def user_of(event: NamedTuple) -> int:
    return event.user_id


def build_pipeline() -> Pipeline:
    """``(user_id, add-to-carts / visits)`` per user into the list ``result``."""
    p = Pipeline.create()
    page_visit = p.read_from(Sources.list("pageVisit")).grouping_key(user_of)
    add_to_cart = p.read_from(Sources.list("addToCart")).grouping_key(user_of)
    co_aggregated = page_visit.aggregate2(counting(), add_to_cart, counting(),
                                          lambda user_id, visits, adds: (user_id, adds / visits))
    co_aggregated.write_to(Sinks.list("result"))
    return p


def build_builder_pipeline() -> Pipeline:
    """The four-way co-group of manual 4.10.2 with ``aggregate_builder``, one line per user into ``result``."""
    p = Pipeline.create()
    page_visits = p.read_from(Sources.list("pageVisit")).grouping_key(user_of)
    add_to_carts = p.read_from(Sources.list("addToCart")).grouping_key(user_of)
    payments = p.read_from(Sources.list("payment")).grouping_key(user_of)
    deliveries = p.read_from(Sources.list("delivery")).grouping_key(user_of)
    builder = page_visits.aggregate_builder(to_list())
    visit_tag = builder.tag0()
    cart_tag = builder.add(add_to_carts, to_list())
    pay_tag = builder.add(payments, to_list())
    delivery_tag = builder.add(deliveries, to_list())
    co_grouped = builder.build(lambda key, ibt: (
        f"User ID {key}: {len(ibt.get(visit_tag))} visits, {len(ibt.get(cart_tag))} add-to-carts, "
        f"{len(ibt.get(pay_tag))} payments, {len(ibt.get(delivery_tag))} deliveries"))
    co_grouped.write_to(Sinks.list("result"))
    return p


def prepare(engine) -> None:
    """The manual's data: user 1 visits twice and adds one item, user 2 visits once and adds one item."""
    engine.get_list("pageVisit")[:] = [PageVisit(1), PageVisit(1), PageVisit(2)]
    engine.get_list("addToCart")[:] = [AddToCart(1), AddToCart(2)]
    engine.get_list("payment")[:] = [Payment(1, 30), Payment(1, 12)]
    engine.get_list("delivery")[:] = [Delivery(1)]
    engine.get_list("result").clear()


def job(builder: bool = False):
    """``jetspark run examples/page_visits.py [--builder]``: the manual's co-aggregation (``--builder``: the
    four-way ``aggregate_builder`` pipeline) over the sample lists filled in ``prepare``."""
    from jetspark_cli.spec import JobSpec

    return JobSpec(build_builder_pipeline() if builder else build_pipeline(), prepare=prepare,
                   report=lambda engine, _job: print(sorted(engine.get_list("result"))), name="page-visits")


def main() -> int:
    from dag import Engine

    with Engine() as engine:
        prepare(engine)
        engine.new_job(build_pipeline()).join()
        print(sorted(engine.get_list("result")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
