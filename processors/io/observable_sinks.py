"""Sinks to the engine's observables and reliable topics: Jet's ``writeObservableP`` and the reliable-topic sink.

Both are :class:`~processors.io.driver_apply.DriverApplySink` s: the items travel to the driver (both runtimes;
under ``EXACTLY_ONCE`` released when the snapshot covering them completes, so observers and listeners see each
item once across restarts) and are handed there to the named object of ``dag.runtime.common.observables``:

- ``write_observable_p(name)``: ``Observable.publish(items)``; when the job ends, its observers get
  ``on_complete()`` or ``on_error(job_error)`` (:meth:`ObservableSink.job_ended`), which completes the futures
  of ``to_future``;
- ``write_reliable_topic_p(name)``: ``ReliableTopic.publish_all(items)``, a message per item to every listener.

>>> write_observable_p("results").collection, write_reliable_topic_p("news").collection
(('observable', 'results'), ('topic', 'news'))
"""

from __future__ import annotations

from typing import Any

from jetspark_base.errors import DagValidationError
from processors.io.driver_apply import DriverApplySink

__all__ = ["ObservableSink", "ReliableTopicSink", "write_observable_p", "write_reliable_topic_p"]


class ObservableSink(DriverApplySink):
    """Publishes the items to the engine's observable and tells it when the job ends."""

    def apply_items(self, target: Any, items: list, vertex: str) -> None:
        target.publish(items)

    def job_ended(self, target: Any, error: BaseException | None) -> None:
        if error is None:
            target.complete()
        else:
            target.fail(error)

    def __repr__(self) -> str:
        return f"Sinks.observable({self.collection[1]!r})"


class ReliableTopicSink(DriverApplySink):
    """Publishes every item as a message of the engine's reliable topic."""

    def apply_items(self, target: Any, items: list, vertex: str) -> None:
        target.publish_all(items)

    def __repr__(self) -> str:
        return f"Sinks.reliable_topic({self.collection[1]!r})"


def _checked(factory: str, name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise DagValidationError(f"{factory}: the name must be a non-empty str, got {name!r}")
    return name


def write_observable_p(name: str) -> ObservableSink:
    """A sink publishing its items to ``engine.get_observable(name)`` (Jet's ``writeObservableP``)."""
    return ObservableSink(("observable", _checked("write_observable_p", name)))


def write_reliable_topic_p(name: str) -> ReliableTopicSink:
    """A sink publishing each item as a message of ``engine.get_reliable_topic(name)``."""
    return ReliableTopicSink(("topic", _checked("write_reliable_topic_p", name)))
