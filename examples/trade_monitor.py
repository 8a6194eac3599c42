"""The manual's trade monitor (section 8.2.2, "Unbounded Stream DAG"): trades per ticker in a sliding window.

::

    trade-source -> sliding-stage-1 -> sliding-stage-2 -> format-output -> sink
      (partitioned by ticker)  (distributed, partitioned by key)

- **trade-source**: ``stream_map_p`` over the driver-side map ``trades`` (``engine.get_map``), which a
  :class:`TradeGenerator` thread keeps updating with random trades (the manual's "some other process
  continuously updates this map"): key = ticker, value = the trade ``(ticker, timestamp_ms, price, quantity)``,
  so every trade is a put or update event in the map's journal and the map stays one entry per ticker. Watermarks
  as the manual sets them: ``limiting_lag(3000)``, ``emit_by_frame(win_policy)``, idle timeout 3 s.
- **sliding-stage-1** ``accumulate_by_frame_p`` (edge partitioned by ticker) counts each frame;
  **sliding-stage-2** ``combine_to_sliding_window_p`` (distributed edge partitioned by ``entry_key``) combines
  frames into windows of ``--window-ms`` (1000) sliding by ``--slide-ms`` (100; the manual's sample slides by 10,
  a hundred lines a second per ticker).
- **format-output** ``map_using_context_p`` with a time formatter created on the worker, lines in the manual's
  format ``"%s %5s %4d"``: window end as ``HH:MM:SS.mmm`` (local time), ticker, count, e.g.
  ``14:02:17.300  AAPL   42``.
- **sink**: ``write_file_p(OUTPUT_DIR)``, as in the manual: in a stream job it appends the lines to
  ``OUTPUT_DIR/<processor index>`` as they come, flushed when its inbox drains (the manual's "endless stream
  of data accumulating on the disk"); the files of an earlier run are replaced when the job starts.
  ``build_dag(..., exactly_once=True)`` (``--exactly-once``) makes it ``write_file_p(..., exactly_once=True)``
  for a job run with :func:`exactly_once_config` (``EXACTLY_ONCE``, a snapshot every 200 ms): the lines are
  published per snapshot (two-phase commit), and the job survives failures (a restart replays the map's journal
  from the saved positions, the windows restore their frames) without losing or doubling a window line.

A window is emitted once the watermark (highest trade timestamp - 3 s) passes its end, so results trail the
trades by about 3 s. Run it::

    python examples/trade_monitor.py --seconds 10 [--output stock-exchange] [--rate 1000] [--tickers 20]
    jetspark run examples/trade_monitor.py --seconds 10       # with live rates and watermark lag
    jetspark render examples/trade_monitor.py -o docs/img/trade_monitor.svg
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import sys
import time
from pathlib import Path

from dag import DAG
from edges import between
from generator_thread import GeneratorThread
from processors import (ContextFactory, JournalInitialPosition, TimestampKind, accumulate_by_frame_p,
                        combine_to_sliding_window_p, counting, emit_by_frame, entry_key, limiting_lag,
                        map_using_context_p, sliding_win_policy, stream_map_p, wm_gen_params, write_file_p)

TRADES_MAP = "trades"
OUTPUT_DIR = "stock-exchange"
WINDOW_MS = 1000
SLIDE_MS = 100
LAG_MS = 3000
IDLE_TIMEOUT_MS = 3000
TICKERS = ("AAPL", "AMZN", "GOOG", "MSFT", "NFLX", "NVDA", "ORCL", "SAP", "TSLA", "IBM",
           "INTC", "CSCO", "ADBE", "CRM", "AMD", "QCOM", "TXN", "AVGO", "PYPL", "UBER")


# ------------------------------------------------------------------------------------------------ trades
def trade_ticker(trade: tuple) -> str:
    """A trade is ``(ticker, timestamp_ms, price, quantity)``."""
    return trade[0]


def trade_timestamp(trade: tuple) -> int:
    return trade[1]


def new_value(event) -> tuple:
    """The journal event's new value: the trade (Jet's ``EventJournalMapEvent::getNewValue``)."""
    return event.new_value


class TradeGenerator(GeneratorThread):
    """A thread putting ``rate`` random trades a second into ``trades`` (a driver-side map), timestamped with
    the wall clock; every trade it made is kept in :attr:`generated` (for checking the windows).

    >>> trades = {}
    >>> with TradeGenerator(trades, rate=200, tickers=("A", "B")) as gen:
    ...     time.sleep(0.1)
    >>> len(gen.generated) > 0 and set(trades) <= {"A", "B"}
    True
    """

    def __init__(self, trades: dict, rate: int = 1000, tickers: tuple[str, ...] = TICKERS, seed: int | None = None):
        super().__init__("trade-generator")
        self.trades, self.rate, self.tickers = trades, rate, tickers
        self._random = random.Random(seed)

    def _run(self) -> None:
        period = 0.01
        due = 0.0
        while not self._stop.wait(period):
            due += self.rate * period
            for _ in range(int(due)):
                self._put()
            due -= int(due)

    def _put(self) -> None:
        ticker = self._random.choice(self.tickers)
        trade = (ticker, time.time_ns() // 1_000_000, round(self._random.uniform(10, 500), 2),
                 self._random.randint(1, 100))
        self.generated.append(trade)
        self.trades[ticker] = trade


# ------------------------------------------------------------------------------------------------ output
class TimeFormatter:
    """Formats epoch milliseconds as local ``HH:MM:SS.mmm`` (the manual's ``DateTimeFormatter``, created on the
    worker by the format-output vertex's ``ContextFactory``).

    >>> len(TimeFormatter()(0))
    12
    """

    def __call__(self, millis: int) -> str:
        return datetime.datetime.fromtimestamp(millis / 1000).strftime("%H:%M:%S.%f")[:-3]


def format_window(time_format: TimeFormatter, tse) -> str:
    """One output line: ``"%s %5s %4d" % (window end, ticker, count)``."""
    return "%s %5s %4d" % (time_format(tse.timestamp), tse.key, tse.value)


# ------------------------------------------------------------------------------------------------ the DAG
def build_dag(output_dir: str | os.PathLike = OUTPUT_DIR, *, window_ms: int = WINDOW_MS,
              slide_ms: int = SLIDE_MS, map_name: str = TRADES_MAP, exactly_once: bool = False,
              line_fn=None) -> DAG:
    """The manual's DAG (see the module docstring). ``exactly_once``: the two-phase-commit file sink (run the job
    with :func:`exactly_once_config`); ``line_fn(line) -> line``: applied to every output line in format-output
    (a test injects failures there)."""
    win_policy = sliding_win_policy(window_ms, slide_ms)
    dag = DAG()
    trade_source = dag.new_vertex("trade-source", stream_map_p(
        map_name, JournalInitialPosition.START_FROM_OLDEST,
        wm_gen_params(trade_timestamp, limiting_lag(LAG_MS), emit_by_frame(win_policy), IDLE_TIMEOUT_MS),
        projection_fn=new_value))
    sliding_stage1 = dag.new_vertex("sliding-stage-1", accumulate_by_frame_p(
        trade_ticker, trade_timestamp, TimestampKind.EVENT, win_policy, counting()))
    sliding_stage2 = dag.new_vertex("sliding-stage-2", combine_to_sliding_window_p(win_policy, counting()))
    format_fn = format_window if line_fn is None else lambda fmt, tse: line_fn(format_window(fmt, tse))
    format_output = dag.new_vertex("format-output", map_using_context_p(
        ContextFactory.with_create_fn(TimeFormatter), format_fn))
    sink = dag.new_vertex("sink", write_file_p(output_dir, exactly_once=exactly_once))
    return (dag.edge(between(trade_source, sliding_stage1).partitioned(trade_ticker))
            .edge(between(sliding_stage1, sliding_stage2).partitioned(entry_key).distributed())
            .edge(between(sliding_stage2, format_output))
            .edge(between(format_output, sink)))


def exactly_once_config():
    """``EXACTLY_ONCE`` with a snapshot every 200 ms (for ``build_dag(..., exactly_once=True)``)."""
    from dag import JobConfig, ProcessingGuarantee

    return JobConfig(name="trade-monitor", processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE,
                     snapshot_interval_ms=200)


def read_output(output_dir: str | os.PathLike) -> list[str]:
    """Every line the sink wrote (published) so far, all processors' files (hidden ones are staged, not yet
    published)."""
    directory = Path(output_dir)
    if not directory.is_dir():
        return []
    return [line for f in sorted(directory.iterdir()) if f.is_file() and not f.name.startswith(".")
            for line in f.read_text(encoding="utf-8").splitlines()]


def job(output: str = OUTPUT_DIR, rate: int = 1000, tickers: int = len(TICKERS), window_ms: int = WINDOW_MS,
        slide_ms: int = SLIDE_MS):
    """``jetspark run examples/trade_monitor.py``: the DAG, with a generator thread started in ``prepare``."""
    from jetspark_cli.spec import JobSpec

    def prepare(engine) -> None:
        TradeGenerator(engine.get_map(TRADES_MAP), rate, TICKERS[:tickers]).start()  # a daemon thread

    return JobSpec(build_dag(output, window_ms=window_ms, slide_ms=slide_ms), prepare=prepare, name="trade-monitor")


def main(argv: list[str]) -> int:
    from dag import Engine

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to run (default 10, as the manual)")
    parser.add_argument("--output", default=OUTPUT_DIR, help=f"output directory (default {OUTPUT_DIR})")
    parser.add_argument("--rate", type=int, default=1000, help="trades per second (default 1000)")
    parser.add_argument("--tickers", type=int, default=len(TICKERS), help="how many tickers trade (default 20)")
    parser.add_argument("--window-ms", type=int, default=WINDOW_MS)
    parser.add_argument("--slide-ms", type=int, default=SLIDE_MS)
    parser.add_argument("--exactly-once", action="store_true", help="EXACTLY_ONCE, two-phase-commit file sink")
    args = parser.parse_args(argv)
    with Engine() as engine:
        dag = build_dag(args.output, window_ms=args.window_ms, slide_ms=args.slide_ms, exactly_once=args.exactly_once)
        job_ = engine.new_job(dag, exactly_once_config() if args.exactly_once else None)
        try:
            with TradeGenerator(engine.get_map(TRADES_MAP), args.rate, TICKERS[:args.tickers]) as gen:
                deadline = time.monotonic() + args.seconds
                while not job_.status.is_terminal and time.monotonic() < deadline:
                    time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        finally:
            job_.cancel()
    lines = read_output(args.output)
    print(f"{len(gen.generated)} trades, {len(lines)} window lines in {args.output}/; the last ones:")
    print("\n".join(lines[-5:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
