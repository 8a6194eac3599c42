"""examples/trending_words.py (manual 4.11 and 4.13): the lowered DAGs, and their processors run one after the
other on a small stream of journal events (engine-free, watermarks included)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "examples")]

import trending_words as tw  # noqa: E402

from processors import JournalInitialPosition  # noqa: E402
from edges import RoutingPolicy  # noqa: E402
from pipeline.events import JetEvent  # noqa: E402
from processors import Watermark, verify_processor  # noqa: E402
from processors.io.text_streams import is_stream_source  # noqa: E402
from tests.support import running, wait_for  # noqa: E402


def _run(dag, vertex: str, items: list) -> list:
    seen: list = []
    verify_processor(dag.get_vertex(vertex).supplier).disable_snapshots().disable_progress_assertion() \
        .input(items).assert_output(1, lambda mode, actual: seen.append(actual[0]))
    return seen[0]


def test_trending_words_when_lowered_then_journal_source_with_timestamps_and_two_stage_window() -> None:
    dag = tw.trending_words_pipeline().to_dag()
    assert [v.name for v in dag.vertices] == ["mapJournalSource(tweets)", "flat-map", "filter",
                                              "sliding-window-prepare", "sliding-window", "listSink(trends)"]
    # (no "listSink(trends)-unwrap" vertex: the window's results, read only by the sink, travel plain)
    assert is_stream_source(dag.get_vertex("mapJournalSource(tweets)").meta_supplier)
    edge, = dag.get_inbound_edges("sliding-window")
    assert edge.is_distributed and edge.routing_policy is RoutingPolicy.PARTITIONED


def test_trending_words_when_tweets_flow_through_then_counts_of_the_last_minute() -> None:
    dag = tw.trending_words_pipeline().to_dag()
    tweets = [(1, tw.Tweet(10_000, "Jet is fast")), (2, tw.Tweet(30_500, "jet, jet!")),
              (3, tw.Tweet(75_000, "Spark"))]
    events = [JetEvent(t.timestamp, (i, t)) for i, t in tweets] + [Watermark(61_000)]
    words = _run(dag, "flat-map", events)
    frames = _run(dag, "sliding-window-prepare", _run(dag, "filter", words))
    results = [r for r in _run(dag, "sliding-window", frames) if not isinstance(r, Watermark)]
    by_window = {(r.timestamp, r.key): r.value for r in results}  # stamped with the window's end
    first_full = Counter("jet is fast jet jet".split())
    assert {k: by_window[61_000, k] for k in first_full} == first_full  # window [1000, 61000)
    assert by_window[11_000, "jet"] == 1 and (11_000, "spark") not in by_window
    assert (62_000, "spark") not in by_window  # the window ending at 62 s does not reach 75 s


def test_largest_trade_when_trades_flow_then_the_largest_so_far_after_each() -> None:
    dag = tw.largest_trade_pipeline().to_dag()
    edge, = dag.get_inbound_edges("rolling-aggregate")
    assert edge.is_all_to_one and edge.is_distributed
    assert dag.get_vertex("rolling-aggregate").local_parallelism == 1
    trades = [tw.Trade("A", 10.0, 5), tw.Trade("B", 1.0, 7), tw.Trade("C", 20.0, 3), tw.Trade("D", 2.0, 1)]
    values = _run(dag, "map", [(i, t) for i, t in enumerate(trades)])
    assert _run(dag, "rolling-aggregate", values) == [trades[2] if i >= 2 else trades[0] for i in range(4)]


@pytest.mark.spark
def test_trending_words_when_run_on_the_map_journal_then_the_minutes_counts_arrive(engine) -> None:
    tweets = engine.get_map("tweets")
    tweets.clear()
    tweets.update({1: tw.Tweet(10_000, "Jet is fast"), 2: tw.Tweet(30_500, "jet, jet!"),
                   3: tw.Tweet(200_000, "later")})  # the last one moves the watermark past the first minute
    engine.get_list("trends").clear()
    with running(engine, tw.trending_words_pipeline(), join_timeout=120):
        wait_for(lambda: any(e.timestamp == 61_000 for e in list(engine.get_list("trends"))), 180,
                 "the first minute's counts")
    trends = list(engine.get_list("trends"))
    engine.get_list("trends").clear()
    assert {e.key: e.value for e in trends if e.timestamp == 61_000} == {"jet": 3, "is": 1, "fast": 1}


@pytest.mark.spark
def test_largest_trade_when_run_on_the_map_journal_then_largest_so_far_after_each(engine) -> None:
    trades = engine.get_map("trades")
    trades.clear()
    engine.get_list("largest-trades").clear()
    sample = [tw.Trade("A", 10.0, 5), tw.Trade("B", 1.0, 7), tw.Trade("C", 20.0, 3)]
    for i, trade in enumerate(sample):  # journaled in this order: the oldest position replays them
        trades[i] = trade
    with running(engine, tw.largest_trade_pipeline(JournalInitialPosition.START_FROM_OLDEST), join_timeout=120):
        wait_for(lambda: len(engine.get_list("largest-trades")) >= 3, 180, "a result after each of the 3 trades")
    largest = list(engine.get_list("largest-trades"))
    engine.get_list("largest-trades").clear()
    # the journal keeps the order per key only, so the trades may arrive in any order: after each one the result
    # is the largest so far, so the results never shrink and the last one is the largest trade
    assert len(largest) == 3 and set(largest) <= set(sample)
    assert [t.worth() for t in largest] == sorted(t.worth() for t in largest)
    assert largest[-1] == sample[2]
