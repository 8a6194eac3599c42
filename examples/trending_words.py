"""Trending words over a stream of tweets with a sliding window (Jet manual 4.11), and the largest trade so far
with a rolling aggregation (4.13).

Trending words, with the timestamps set right after the source (so the map-journal source applies them)::

    p.read_from(Sources.map_journal("tweets", START_FROM_OLDEST))          # (tweet id, Tweet) entries
     .with_timestamps(lambda e: e[1].timestamp, 5_000)
     .flat_map(lambda e: words of e[1].text)                              # the words keep the tweet's time
     .filter(lambda word: word != "")
     .window(WindowDefinition.sliding(60_000, 1_000))
     .grouping_key(whole_item)
     .aggregate(counting())                                                # TimestampedEntry(end, word, count)
     .write_to(Sinks.list("trends"))

Largest trade so far::

    p.read_from(Sources.map_journal("trades", START_FROM_CURRENT)).without_timestamps()
     .map(entry_value)
     .rolling_aggregate(max_by(Trade.worth))
     .write_to(Sinks.list("largest-trades"))

Both read stream sources, so they run on the pipelined runtime.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pipeline import Pipeline, Sinks, Sources, WindowDefinition
from processors import JournalInitialPosition, counting, entry_value, max_by, whole_item

_NON_WORD = re.compile(r"\W+", re.ASCII)


class Tweet(NamedTuple):
    timestamp: int
    text: str


class Trade(NamedTuple):
    ticker: str
    price: float
    quantity: int

    def worth(self) -> float:
        return self.price * self.quantity


def tweet_words(entry: tuple[int, Tweet]) -> list[str]:
    """The lower-cased words of the tweet of a journal entry (Java's ``split("\\\\W+")``)."""
    return _NON_WORD.split(entry[1].text.lower())


def trending_words_pipeline() -> Pipeline:
    """Word counts over the last minute, updated every second, into the list ``trends``."""
    p = Pipeline.create()
    (p.read_from(Sources.map_journal("tweets", JournalInitialPosition.START_FROM_OLDEST))
     .with_timestamps(lambda e: e[1].timestamp, 5_000)
     .flat_map(tweet_words)
     .filter(lambda word: word != "")
     .window(WindowDefinition.sliding(60_000, 1_000))
     .grouping_key(whole_item)
     .aggregate(counting())
     .write_to(Sinks.list("trends")))
    return p


def largest_trade_pipeline(initial_position: JournalInitialPosition = JournalInitialPosition.START_FROM_CURRENT
                           ) -> Pipeline:
    """After every trade, the largest trade so far (by worth), into the list ``largest-trades``; the manual
    reads the journal from the current position (``START_FROM_OLDEST`` also sees trades put before the job)."""
    p = Pipeline.create()
    (p.read_from(Sources.map_journal("trades", initial_position))
     .without_timestamps()
     .map(entry_value)
     .rolling_aggregate(max_by(Trade.worth))
     .write_to(Sinks.list("largest-trades")))
    return p


def job(largest_trades: bool = False):
    """``jetspark run examples/trending_words.py [--largest-trades]``: the trending-words pipeline (or the
    largest-trade one), a stream job over the map journal ``tweets`` (``trades``) until stopped."""
    return largest_trade_pipeline() if largest_trades else trending_words_pipeline()
