"""User sessions from a click stream: ``aggregate_to_session_window_p`` on the pipelined runtime.

::

    click-source -> sessions -> sink
          (distributed, partitioned by user)

- **click-source**: ``stream_map_p`` over the driver-side map ``clicks`` (key = user, value = the click
  ``(user, timestamp_ms, url)``), which a :class:`ClickGenerator` thread updates: each user browses in bursts
  (a click every 20-150 ms for 0.2-1.2 s) separated by pauses of 0.6-2 s, longer than the session timeout.
  Watermarks: ``limiting_lag(LAG_MS)`` with ``emit_by_min_step(10)``, idle timeout 1 s (so the last sessions
  close when the clicks stop).
- **sessions**: ``aggregate_to_session_window_p(SESSION_TIMEOUT_MS, click_time, click_user, all_of(counting(),
  mapping(click_url, to_set())))``: a user's session runs while clicks come at most ``SESSION_TIMEOUT_MS`` (500)
  apart; each session is emitted once the watermark passes its end (last click + timeout) as
  ``WindowResult(start, end, user, (clicks, urls))``.
- **sink**: ``write_list_p("sessions")``, read live with ``engine.get_list("sessions")``.

:func:`sessionize` is the same computation in plain Python (the test compares the two). Run it::

    python examples/session_windows.py --seconds 10 [--users 5]
    jetspark render examples/session_windows.py -o docs/img/session_windows.svg
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict

from dag import DAG
from edges import between
from generator_thread import GeneratorThread
from processors import (JournalInitialPosition, aggregate_to_session_window_p, all_of, counting,
                        emit_by_min_step, limiting_lag, mapping, stream_map_p, to_set, wm_gen_params, write_list_p)

CLICKS_MAP = "clicks"
SESSIONS_LIST = "sessions"
SESSION_TIMEOUT_MS = 500
LAG_MS = 200
IDLE_TIMEOUT_MS = 1000
PAGES = ("/", "/search", "/item/1", "/item/2", "/item/3", "/cart", "/checkout")


def click_user(click: tuple) -> str:
    """A click is ``(user, timestamp_ms, url)``."""
    return click[0]


def click_time(click: tuple) -> int:
    return click[1]


def click_url(click: tuple) -> str:
    return click[2]


def new_value(event) -> tuple:
    return event.new_value


class ClickGenerator(GeneratorThread):
    """A thread clicking for ``users`` simulated users into ``clicks`` (a driver-side map); every click is kept
    in :attr:`generated`.

    >>> clicks = {}
    >>> with ClickGenerator(clicks, users=2, seed=1) as gen:
    ...     time.sleep(0.3)
    >>> set(clicks) <= {"user-0", "user-1"}
    True
    """

    def __init__(self, clicks: dict, users: int = 5, seed: int | None = None):
        super().__init__("click-generator")
        self.clicks, self.users = clicks, [f"user-{i}" for i in range(users)]
        self._random = random.Random(seed)

    def _run(self) -> None:
        rnd = self._random
        now = time.monotonic()
        next_click = {user: now + rnd.uniform(0, 1) for user in self.users}
        burst_end = dict(next_click)
        while not self._stop.wait(0.01):
            now = time.monotonic()
            for user in self.users:
                if now < next_click[user]:
                    continue
                if now > burst_end[user]:  # pause, then a new burst
                    next_click[user] = now + rnd.uniform(0.6, 2.0)
                    burst_end[user] = next_click[user] + rnd.uniform(0.2, 1.2)
                    continue
                click = (user, time.time_ns() // 1_000_000, rnd.choice(PAGES))
                self.generated.append(click)
                self.clicks[user] = click
                next_click[user] = now + rnd.uniform(0.02, 0.15)


def sessionize(clicks: list[tuple], timeout: int = SESSION_TIMEOUT_MS) -> list[tuple]:
    """The sessions of ``clicks`` in plain Python: ``(user, start, end, clicks, urls)`` sorted; a click at most
    ``timeout`` after the session's last click extends it.

    >>> [s[:4] for s in sessionize([("a", 0, "/"), ("a", 300, "/x"), ("a", 900, "/")], 500)]
    [('a', 0, 800, 2), ('a', 900, 1400, 1)]
    """
    by_user: dict[str, list[tuple]] = defaultdict(list)
    for click in clicks:
        by_user[click_user(click)].append(click)
    sessions = []
    for user, user_clicks in by_user.items():
        current: list[tuple] = []
        for click in sorted(user_clicks, key=click_time):
            if current and click_time(click) > click_time(current[-1]) + timeout:
                sessions.append(_session(user, current, timeout))
                current = []
            current.append(click)
        sessions.append(_session(user, current, timeout))
    return sorted(sessions, key=lambda s: (s[0], s[1]))


def _session(user: str, clicks: list[tuple], timeout: int) -> tuple:
    return (user, click_time(clicks[0]), click_time(clicks[-1]) + timeout, len(clicks),
            frozenset(map(click_url, clicks)))


def as_tuple(result) -> tuple:
    """A ``WindowResult(start, end, user, (clicks, urls))`` as ``sessionize``'s tuple."""
    count, urls = result.value
    return (result.key, result.start, result.end, count, frozenset(urls))


def build_dag(map_name: str = CLICKS_MAP, list_name: str = SESSIONS_LIST) -> DAG:
    """The DAG of the module docstring."""
    dag = DAG()
    source = dag.new_vertex("click-source", stream_map_p(
        map_name, JournalInitialPosition.START_FROM_OLDEST,
        wm_gen_params(click_time, limiting_lag(LAG_MS), emit_by_min_step(10), IDLE_TIMEOUT_MS),
        projection_fn=new_value))
    sessions = dag.new_vertex("sessions", aggregate_to_session_window_p(
        SESSION_TIMEOUT_MS, click_time, click_user, all_of(counting(), mapping(click_url, to_set()))))
    sink = dag.new_vertex("sink", write_list_p(list_name))
    return (dag.edge(between(source, sessions).partitioned(click_user).distributed())
            .edge(between(sessions, sink)))


def describe(result) -> str:
    user, start, end, count, urls = as_tuple(result)
    return f"{user}: {count:3d} clicks in {(end - SESSION_TIMEOUT_MS - start) / 1000:5.2f} s, pages {sorted(urls)}"


def job(users: int = 5):
    """``jetspark run examples/session_windows.py``: the DAG, with the click generator started in ``prepare``."""
    from jetspark_cli.spec import JobSpec

    def prepare(engine) -> None:
        ClickGenerator(engine.get_map(CLICKS_MAP), users).start()  # a daemon thread

    return JobSpec(build_dag(), prepare=prepare, name="session-windows")


def main(argv: list[str]) -> int:
    from dag import Engine

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to run (default 10)")
    parser.add_argument("--users", type=int, default=5, help="simulated users (default 5)")
    args = parser.parse_args(argv)
    with Engine() as engine:
        job_ = engine.new_job(build_dag())
        sessions = engine.get_list(SESSIONS_LIST)
        shown = 0
        try:
            with ClickGenerator(engine.get_map(CLICKS_MAP), args.users):
                deadline = time.monotonic() + args.seconds
                while not job_.status.is_terminal and time.monotonic() < deadline:
                    time.sleep(0.2)
                    for result in list(sessions[shown:]):
                        print(describe(result))
                    shown = len(sessions)
        except KeyboardInterrupt:
            pass
        finally:
            job_.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
