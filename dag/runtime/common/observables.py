"""The engine's observables and reliable topics: driver-side objects that jobs publish to (pure Python).

**Observable** (Jet's ``Observable``, written by ``Sinks.observable``): an ordered, bounded log of *events*
(an item, the completion of a job that wrote to it, or its failure) with observers. ``add_observer`` takes a
function (``on_next``) or an object with any of ``on_next(item)``, ``on_error(error)``, ``on_complete()``; a new
observer first gets the events still in the log (as Jet's observers read its ringbuffer from the oldest
event), then every later one, in order, on the publishing thread. ``to_future(fn)`` is a
``concurrent.futures.Future`` completed with ``fn(items)`` when a job completes, or with the job's error;
iterating blocks for the next item until completion (and raises the job's error). An observer that raises is
logged and keeps observing: the job never fails for its observers. ``destroy()`` drops the log and observers
and forgets the name (``engine.get_observable(name)`` then gives a new, empty one).

**ReliableTopic** (Hazelcast's reliable ``ITopic``, written by ``Sinks.reliable_topic``): ``publish`` delivers
a :class:`Message` to every listener registered at that moment, under the topic's lock, so each listener gets
every message once and all listeners see one order.

>>> seen = []
>>> obs = Observable("results"); obs.publish([1, 2])
>>> _ = obs.add_observer(seen.append); obs.publish([3]); obs.complete()
>>> seen, obs.to_future(sum).result(timeout=1)
([1, 2, 3], 6)
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
import uuid
from concurrent.futures import Future
from typing import Any, Callable, Iterator

__all__ = ["Observable", "ReliableTopic", "Message", "DEFAULT_OBSERVABLE_CAPACITY"]

DEFAULT_OBSERVABLE_CAPACITY = 10_000
"""Events an observable keeps for observers that join later (Jet's default ringbuffer capacity)."""

_log = logging.getLogger("jetspark.observables")
_ITEM, _COMPLETE, _ERROR = "item", "complete", "error"


class _Observer:
    """An observer's three callbacks, from a function (``on_next``) or an object with any of them."""

    def __init__(self, target: Any):
        if callable(target) and not any(hasattr(target, m) for m in ("on_next", "on_error", "on_complete")):
            self.on_next, self.on_error, self.on_complete = target, None, None
        elif any(callable(getattr(target, m, None)) for m in ("on_next", "on_error", "on_complete")):
            self.on_next = getattr(target, "on_next", None)
            self.on_error = getattr(target, "on_error", None)
            self.on_complete = getattr(target, "on_complete", None)
        else:
            raise TypeError(f"add_observer takes a function (on_next) or an object with on_next, on_error or "
                            f"on_complete; got {type(target).__name__}")

    def deliver(self, kind: str, value: Any, owner: str) -> None:
        fn = self.on_next if kind == _ITEM else self.on_complete if kind == _COMPLETE else self.on_error
        if fn is None:
            return
        try:
            fn() if kind == _COMPLETE else fn(value)
        except Exception:  # noqa: BLE001 - an observer's bug never fails the job
            _log.exception("an observer of %s failed in its %s callback", owner, kind)


class Observable:
    """A named, observable sequence of job results (see the module docstring)."""

    def __init__(self, name: str, capacity: int = DEFAULT_OBSERVABLE_CAPACITY,
                 on_destroy: Callable[[Observable], None] | None = None):
        self.name = name
        self._events: collections.deque = collections.deque(maxlen=capacity)
        self._observers: dict[str, _Observer] = {}
        self._lock = threading.RLock()
        self._on_destroy = on_destroy

    def add_observer(self, on_next_or_observer: Any) -> str:
        """Register an observer (a function ``on_next(item)`` or an object with ``on_next``/``on_error``/
        ``on_complete``); it gets the events kept so far, then every new one. Returns its registration id."""
        observer = _Observer(on_next_or_observer)
        registration = uuid.uuid4().hex
        with self._lock:
            for kind, value in list(self._events):
                observer.deliver(kind, value, repr(self))
            self._observers[registration] = observer
        return registration

    def remove_observer(self, registration: str) -> bool:
        """Stop delivering to the observer ``add_observer`` returned ``registration`` for; True if it was there."""
        with self._lock:
            return self._observers.pop(registration, None) is not None

    def to_future(self, fn: Callable[[list], Any]) -> Future:
        """A ``Future`` completed with ``fn(items)`` (every item up to a job's completion) or with the job's error.

        >>> obs = Observable("o"); future = obs.to_future(sorted); obs.publish([3, 1]); obs.complete()
        >>> future.result(timeout=1)
        [1, 3]
        """
        future: Future = Future()
        items: list = []

        class _Collector:
            def on_next(self, item: Any) -> None:
                items.append(item)

            def on_error(self, error: BaseException) -> None:
                if not future.done():
                    future.set_exception(error)

            def on_complete(self) -> None:
                if future.done():
                    return
                try:
                    future.set_result(fn(items))
                except Exception as exc:  # noqa: BLE001 - fn's failure is the future's
                    future.set_exception(exc)

        registration = self.add_observer(_Collector())
        future.add_done_callback(lambda _: self.remove_observer(registration))  # at once if already done
        return future

    def __iter__(self) -> Iterator[Any]:
        """The items, blocking for each next one until a job completes (then the iteration ends) or fails (then
        its error is raised)."""
        events: queue.SimpleQueue = queue.SimpleQueue()

        class _Queue:
            def on_next(self, item: Any) -> None:
                events.put((_ITEM, item))

            def on_error(self, error: BaseException) -> None:
                events.put((_ERROR, error))

            def on_complete(self) -> None:
                events.put((_COMPLETE, None))

        registration = self.add_observer(_Queue())
        try:
            while True:
                kind, value = events.get()
                if kind == _COMPLETE:
                    return
                if kind == _ERROR:
                    raise value
                yield value
        finally:
            self.remove_observer(registration)

    def publish(self, items: list) -> None:
        """Append ``items`` and deliver them to every observer (the observable sink calls this on the driver)."""
        self._emit([(_ITEM, item) for item in items])

    def complete(self) -> None:
        """A job that wrote to this observable completed."""
        self._emit([(_COMPLETE, None)])

    def fail(self, error: BaseException) -> None:
        """A job that wrote to this observable failed with ``error``."""
        self._emit([(_ERROR, error)])

    def _emit(self, events: list) -> None:
        with self._lock:
            self._events.extend(events)
            observers = list(self._observers.values())
            for kind, value in events:
                for observer in observers:
                    observer.deliver(kind, value, repr(self))

    def destroy(self) -> None:
        """Drop the kept events and the observers, and forget this observable's name in its engine."""
        with self._lock:
            self._events.clear()
            self._observers.clear()
        if self._on_destroy is not None:
            self._on_destroy(self)

    def __repr__(self) -> str:
        return f"Observable({self.name!r})"


class Message:
    """One message of a reliable topic, as its listeners get it (Hazelcast's ``Message``)."""

    __slots__ = ("_object", "_time", "topic")

    def __init__(self, topic: str, message_object: Any, publish_time: int):
        self.topic, self._object, self._time = topic, message_object, publish_time

    def get_message_object(self) -> Any:
        """The published item."""
        return self._object

    def get_publish_time(self) -> int:
        """When it was published on the driver, epoch milliseconds."""
        return self._time

    def __repr__(self) -> str:
        return f"Message(topic={self.topic!r}, {self._object!r})"


class ReliableTopic:
    """A named topic; listeners get every message published after they registered, once, in one order.

    >>> topic, got = ReliableTopic("news"), []
    >>> _ = topic.add_message_listener(lambda m: got.append(m.get_message_object())); topic.publish_all(["a", "b"])
    >>> got
    ['a', 'b']
    """

    def __init__(self, name: str):
        self.name = name
        self._listeners: dict[str, Callable[[Message], Any]] = {}
        self._lock = threading.RLock()

    def add_message_listener(self, listener: Callable[[Message], Any]) -> str:
        """Call ``listener(message)`` for every message published from now on; returns the registration id.
        A listener may also be an object with ``on_message(message)`` (Hazelcast's ``MessageListener``)."""
        fn = getattr(listener, "on_message", listener)
        if not callable(fn):
            raise TypeError(f"add_message_listener takes a function or an object with on_message(message); got "
                            f"{type(listener).__name__}")
        registration = uuid.uuid4().hex
        with self._lock:
            self._listeners[registration] = fn
        return registration

    def remove_message_listener(self, registration: str) -> bool:
        """Stop the listener ``add_message_listener`` returned ``registration`` for; True if it was there."""
        with self._lock:
            return self._listeners.pop(registration, None) is not None

    def publish(self, message: Any) -> None:
        """Deliver one message to every listener."""
        self.publish_all([message])

    def publish_all(self, messages: list) -> None:
        """Deliver ``messages`` in order to every listener (one listener's failure is logged, the others go on)."""
        with self._lock:
            listeners = list(self._listeners.values())
            for item in messages:
                message = Message(self.name, item, int(time.time() * 1000))
                for listener in listeners:
                    try:
                        listener(message)
                    except Exception:  # noqa: BLE001 - a listener's bug never fails the job
                        _log.exception("a message listener of reliable topic '%s' failed", self.name)

    def __repr__(self) -> str:
        return f"ReliableTopic({self.name!r})"
