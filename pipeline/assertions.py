"""Jet's testing API for pipelines: ``Assertions`` (used with ``stage.apply(...)``) and ``AssertionSinks``.

Every assertion is a sink of one processor in the whole job (:class:`AssertionSinkP`) whose functions see the
stage's items; an assertion that fails raises an ``AssertionError`` in the job, so ``job.join()`` raises a
``JobFailedError`` carrying its message. ``stage.apply(Assertions.assert_ordered(expected))`` attaches the sink
and returns the stage itself, so a pipeline can go on after an assertion (Jet's form)::

    p.read_from(TestSources.items(1, 2, 3)).apply(Assertions.assert_ordered([1, 2, 3]))

- ``assert_ordered([message,] expected)``: the items, in this order, when the input completes;
- ``assert_any_order([message,] expected)``: the same items (as a multiset), in any order;
- ``assert_contains([message,] expected)``: every expected item is among the items;
- ``assert_collected(fn)``: ``fn(items)`` (a list) is called when the input completes and asserts;
- ``assert_collected_eventually(timeout_s, fn)`` for streams: ``fn(items)`` is tried on every item and on a
  timer; once it passes, an :class:`AssertionCompletedException` ends the job (so ``join()`` raises a
  ``JobFailedError`` naming it: the stream passed); if it still fails after ``timeout_s`` s, the job fails with
  ``fn``'s ``AssertionError``.

``AssertionSinks.assertion_sink(name, create_fn).receive_fn(fn(state, item)).timer_fn(fn(state))
.complete_fn(fn(state)).build()`` builds your own: ``timer_fn`` runs about once a second (streams),
``complete_fn`` when the input completes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from pipeline.descriptors import Sink
from processors.api.inbox import Inbox
from processors.api.processor import Processor
from processors.api.suppliers import ProcessorMetaSupplier

__all__ = ["Assertions", "AssertionSinks", "AssertionSinkBuilder", "AssertionCompletedException",
           "AssertionSinkP"]

TIMER_INTERVAL_S = 1.0


class AssertionCompletedException(Exception):
    """Raised in the job by ``assert_collected_eventually`` once its assertion passed: it ends the stream job
    (Jet's ``AssertionCompletedException``); ``join()`` raises a ``JobFailedError`` whose text names it."""


class AssertionSinkP(Processor):
    """The processor of an assertion sink: ``state = create_fn()``, ``receive_fn(state, item)`` per item,
    ``timer_fn(state)`` about every second while the job runs, ``complete_fn(state)`` at the end."""

    def __init__(self, create_fn: Callable[[], Any], receive_fn: Callable, timer_fn: Callable | None,
                 complete_fn: Callable | None):
        self.create_fn = create_fn
        self.receive_fn = receive_fn
        self.timer_fn = timer_fn
        self.complete_fn = complete_fn
        self._state: Any = None
        self._next_timer = 0.0

    def init(self, outbox: Any, context: Any) -> None:
        self._state = self.create_fn()
        self._next_timer = time.monotonic() + TIMER_INTERVAL_S

    def process(self, ordinal: int, inbox: Inbox) -> None:
        for item in inbox.take_all():
            self.receive_fn(self._state, item)
        self._timer()

    def try_process(self) -> bool:
        self._timer()
        return True

    def _timer(self) -> None:
        if self.timer_fn is not None and time.monotonic() >= self._next_timer:
            self._next_timer = time.monotonic() + TIMER_INTERVAL_S
            self.timer_fn(self._state)

    def complete(self) -> bool:
        if self.complete_fn is not None:
            self.complete_fn(self._state)
        return True


class _Factory:
    def __init__(self, *args: Any):
        self.args = args

    def __call__(self) -> AssertionSinkP:
        return AssertionSinkP(*self.args)


class AssertionSinkBuilder:
    """``AssertionSinks.assertion_sink(name, create_fn)``: set the functions, then ``build()``."""

    def __init__(self, name: str, create_fn: Callable[[], Any]):
        _check(name, "create_fn", create_fn)
        self._name = name
        self._create_fn = create_fn
        self._fns: dict[str, Callable | None] = {"receive_fn": None, "timer_fn": None, "complete_fn": None}

    def _set(self, label: str, fn: Callable) -> AssertionSinkBuilder:
        _check(self._name, label, fn)
        self._fns[label] = fn
        return self

    def receive_fn(self, fn: Callable[[Any, Any], Any]) -> AssertionSinkBuilder:
        """``fn(state, item)`` for every item."""
        return self._set("receive_fn", fn)

    def timer_fn(self, fn: Callable[[Any], Any]) -> AssertionSinkBuilder:
        """``fn(state)`` about once a second while the job runs."""
        return self._set("timer_fn", fn)

    def complete_fn(self, fn: Callable[[Any], Any]) -> AssertionSinkBuilder:
        """``fn(state)`` once the input completed (batch jobs)."""
        return self._set("complete_fn", fn)

    def build(self) -> Sink:
        """The sink (one processor in the whole job)."""
        if self._fns["receive_fn"] is None:
            raise TypeError(f"assertion sink '{self._name}': receive_fn(fn) is required before build()")
        fns = self._fns
        supplier = ProcessorMetaSupplier.force_total_parallelism_one(
            _Factory(self._create_fn, fns["receive_fn"], fns["timer_fn"], fns["complete_fn"]))
        return Sink(self._name, supplier)


def _check(name: str, label: str, fn: Any) -> None:
    if not callable(fn):
        raise TypeError(f"assertion sink '{name}': {label} must be callable, got {fn!r:.80}")


def _message_and_expected(operation: str, args: tuple) -> tuple[str | None, list]:
    if len(args) == 1:
        return None, list(args[0])
    if len(args) == 2 and (args[0] is None or isinstance(args[0], str)):
        return args[0], list(args[1])
    raise TypeError(f"Assertions.{operation} takes ([message,] expected), got {len(args)} arguments")


def _fail(message: str | None, text: str) -> None:
    raise AssertionError(f"{message}: {text}" if message else text)


class _Check:
    """The complete function of the collection assertions: compares the received items with ``expected``."""

    def __init__(self, kind: str, message: str | None, expected: list):
        self.kind = kind
        self.message = message
        self.expected = expected

    def __call__(self, items: list) -> None:
        expected = self.expected
        if self.kind == "ordered" and items != expected:
            _fail(self.message, f"expected {expected!r:.500} but was {items!r:.500}")
        if self.kind == "any_order" and Counter(map(_hashable, items)) != Counter(map(_hashable, expected)):
            _fail(self.message, f"expected in any order {expected!r:.500} but was {items!r:.500}")
        if self.kind == "contains":
            missing = [e for e in expected if e not in items]
            if missing:
                _fail(self.message, f"expected to contain {missing!r:.500}, but the items were {items!r:.500}")


def _hashable(item: Any) -> Any:
    try:
        hash(item)
        return item
    except TypeError:
        return repr(item)


class _Eventually:
    """State of ``assert_collected_eventually``: the items and the deadline."""

    def __init__(self, timeout_s: float, fn: Callable[[list], Any]):
        self.timeout_s = timeout_s
        self.fn = fn

    def create(self) -> dict:
        return {"items": [], "deadline": time.monotonic() + self.timeout_s}

    def receive(self, state: dict, item: Any) -> None:
        state["items"].append(item)
        self.check(state)

    def check(self, state: dict) -> None:
        try:
            self.fn(state["items"])
        except AssertionError:
            if time.monotonic() >= state["deadline"]:
                raise
            return
        raise AssertionCompletedException(
            f"assert_collected_eventually passed after {len(state['items'])} items: this ends the job")


def _append(items: list, item: Any) -> None:
    items.append(item)


class AssertionSinks:
    """Assertion sinks (Jet's ``pipeline.test.AssertionSinks``): ``stage.write_to(AssertionSinks...)``."""

    @staticmethod
    def assertion_sink(name: str, create_fn: Callable[[], Any]) -> AssertionSinkBuilder:
        """A builder of your own assertion sink (see the module docstring)."""
        return AssertionSinkBuilder(name, create_fn)

    @staticmethod
    def _collecting(name: str, check: Callable[[list], None]) -> Sink:
        return AssertionSinkBuilder(name, list).receive_fn(_append).complete_fn(check).build()

    @staticmethod
    def assert_ordered(*args: Any) -> Sink:
        """The items in this order (``([message,] expected)``)."""
        return AssertionSinks._collecting("assertOrdered", _Check("ordered", *_message_and_expected(
            "assert_ordered", args)))

    @staticmethod
    def assert_any_order(*args: Any) -> Sink:
        """The same items in any order."""
        return AssertionSinks._collecting("assertAnyOrder", _Check("any_order", *_message_and_expected(
            "assert_any_order", args)))

    @staticmethod
    def assert_contains(*args: Any) -> Sink:
        """Every expected item among the items."""
        return AssertionSinks._collecting("assertContains", _Check("contains", *_message_and_expected(
            "assert_contains", args)))

    @staticmethod
    def assert_collected(assert_fn: Callable[[list], Any]) -> Sink:
        """``assert_fn(items)`` when the input completes."""
        _check("assertCollected", "assert_fn", assert_fn)
        return AssertionSinks._collecting("assertCollected", assert_fn)

    @staticmethod
    def assert_collected_eventually(timeout_s: float, assert_fn: Callable[[list], Any]) -> Sink:
        """For streams: ``assert_fn(items)`` until it passes (the job then ends with an
        ``AssertionCompletedException``) or ``timeout_s`` passed (the job fails with its ``AssertionError``)."""
        _check("assertCollectedEventually", "assert_fn", assert_fn)
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
            raise ValueError(f"assert_collected_eventually(timeout_s, fn): timeout_s must be > 0, got {timeout_s!r}")
        eventually = _Eventually(timeout_s, assert_fn)
        return (AssertionSinkBuilder("assertCollectedEventually", eventually.create)
                .receive_fn(eventually.receive).timer_fn(eventually.check).build())


class _Apply:
    """What ``Assertions.*`` return: ``fn(stage)`` writes the stage to ``sink`` and returns the stage."""

    def __init__(self, sink: Sink):
        self.sink = sink

    def __call__(self, stage: Any) -> Any:
        stage.write_to(self.sink)
        return stage


class Assertions:
    """Assertions to use with ``stage.apply(...)`` (Jet's ``pipeline.test.Assertions``); each returns a function
    that attaches the assertion sink to the stage and gives the stage back."""

    @staticmethod
    def assert_ordered(*args: Any) -> Callable[[Any], Any]:
        """``([message,] expected)``: the items, in this order."""
        return _Apply(AssertionSinks.assert_ordered(*args))

    @staticmethod
    def assert_any_order(*args: Any) -> Callable[[Any], Any]:
        """``([message,] expected)``: the same items, in any order."""
        return _Apply(AssertionSinks.assert_any_order(*args))

    @staticmethod
    def assert_contains(*args: Any) -> Callable[[Any], Any]:
        """``([message,] expected)``: every expected item is among the items."""
        return _Apply(AssertionSinks.assert_contains(*args))

    @staticmethod
    def assert_collected(assert_fn: Callable[[list], Any]) -> Callable[[Any], Any]:
        """``assert_fn(items)`` when the input completes."""
        return _Apply(AssertionSinks.assert_collected(assert_fn))

    @staticmethod
    def assert_collected_eventually(timeout_s: float, assert_fn: Callable[[list], Any]) -> Callable[[Any], Any]:
        """For streams: see :meth:`AssertionSinks.assert_collected_eventually`."""
        return _Apply(AssertionSinks.assert_collected_eventually(timeout_s, assert_fn))
