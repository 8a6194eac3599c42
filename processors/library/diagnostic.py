"""Diagnostic processors (Jet's ``DiagnosticProcessors``): ``write_logger_p``, ``peek_input_p``, ``peek_output_p``.

- ``write_logger_p(to_string_fn=str)``: a sink that logs every item at INFO on the processor's logger
  (``str(to_string_fn(item))``) and watermarks at DEBUG; emits nothing. Non-cooperative, preferred local
  parallelism 1, stateless.
- ``peek_input_p(supplier, to_string_fn=str, should_log_fn=None)``: wraps a processor supplier so each
  processor logs, at INFO, every item it takes from its inbox as ``"Input from ordinal N: <text>"`` (and a
  watermark once as ``"Input: <watermark>"``), then behaves exactly as the wrapped processor.
- ``peek_output_p(...)``: likewise logs every item the processor's outbox accepted, once per outbound ordinal,
  as ``"Output to ordinal N: <text>"``; watermarks are logged whatever ``should_log_fn`` says.
- ``peek_snapshot_p(...)``: likewise logs every entry the processor saved to its snapshot (accepted by
  ``offer_to_snapshot``) as ``"Output to snapshot: <text>"``; ``to_string_fn`` and ``should_log_fn`` get the
  entry as a ``(key, value)`` tuple.

On Spark, these records reach the driver's ``logging`` as logger ``jetspark.<vertex>#<index>``
(``dag/runtime/common/logforward.py``).

``should_log_fn(item)`` selects the items to log (None = all). The wrapped supplier may be a zero-argument
callable, a ``ProcessorSupplier`` or a ``ProcessorMetaSupplier``; the result is of the same kind (a wrapped
stream source stays one).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from jetspark_base.errors import DagValidationError
from processors.api.inbox import Inbox
from processors.api.outbox import offer_each
from processors.api.processor import AbstractProcessor, Processor
from processors.library.stateless import BuiltinSupplier, check_callable, fn_name
from processors.api.suppliers import (MappedMetaSupplier, MappedSupplier, ProcessorMetaSupplier, ProcessorSupplier,
                                  RuntimeBound)
from processors.api.watermark import Watermark

__all__ = ["write_logger_p", "peek_input_p", "peek_output_p", "peek_snapshot_p", "WriteLoggerP", "PeekWrappedP"]


class WriteLoggerP(AbstractProcessor):
    """Logs each item at INFO as ``str(to_string_fn(item))``; watermarks at DEBUG; emits nothing. Non-cooperative."""

    def __init__(self, to_string_fn: Callable[[Any], Any] = str):
        super().__init__()
        self.to_string_fn = to_string_fn

    def is_cooperative(self) -> bool:
        return False

    def process(self, ordinal: int, inbox: Inbox) -> None:
        info, to_string = self.logger.info, self.to_string_fn
        for item in inbox.take_all():
            info("%s", to_string(item))

    def try_process_watermark(self, watermark: Any) -> bool:
        self.logger.debug("%s", watermark)
        return True


def write_logger_p(to_string_fn: Callable[[Any], Any] = str) -> ProcessorMetaSupplier:
    """A sink logging each item at INFO (``str(to_string_fn(item))``) as it arrives; emits nothing.
    Stateless, non-cooperative, preferred local parallelism 1.

    >>> write_logger_p().preferred_local_parallelism()
    1
    """
    check_callable("write_logger_p(to_string_fn)", "to_string_fn", to_string_fn)
    return ProcessorMetaSupplier.prefer_local_parallelism_one(
        BuiltinSupplier(WriteLoggerP, to_string_fn, name=f"write_logger_p({fn_name(to_string_fn)})"))


class _LoggingOutbox:
    """Delegates to the real outbox and logs each accepted item per ordinal (``log``) and/or each accepted
    snapshot entry (``log_snapshot``)."""

    def __init__(self, outbox: Any, log: Callable[[int, Any], None] | None,
                 log_snapshot: Callable[[tuple], None] | None = None):
        self._outbox = outbox
        self._log = log
        self._log_snapshot = log_snapshot

    def offer(self, item: Any, ordinal: int | Sequence[int] = -1) -> bool:
        if not self._outbox.offer(item, ordinal):
            return False
        if self._log is None:
            return True
        if ordinal == -1:
            ordinals: Sequence[int] = range(self._outbox.bucket_count())
        elif isinstance(ordinal, int):
            ordinals = (ordinal,)
        else:
            ordinals = ordinal
        for o in ordinals:
            self._log(o, item)
        return True

    def offer_many(self, items: Sequence[Any], start: int = 0, ordinal: int | Sequence[int] = -1, *,
                   no_none: bool = False) -> int:
        if self._log is None:
            return self._outbox.offer_many(items, start, ordinal, no_none=no_none)
        return offer_each(self.offer, items, start, ordinal)  # item by item: every accepted item is logged

    def offer_to_snapshot(self, key: Any, value: Any) -> bool:
        if not self._outbox.offer_to_snapshot(key, value):
            return False
        if self._log_snapshot is not None:
            self._log_snapshot((key, value))
        return True

    def bucket_count(self) -> int:
        return self._outbox.bucket_count()

    def has_unfinished_item(self) -> bool:
        return self._outbox.has_unfinished_item()


class PeekWrappedP(Processor):
    """Wraps a processor, logging the items it takes from its inbox (``peek_input``) and/or the items its outbox
    accepted (``peek_output``); otherwise exactly the wrapped processor. Stateful as the wrapped one."""

    _logger: logging.Logger | None = None
    _last_watermark: Any = None

    def __init__(self, wrapped: Processor, to_string_fn: Callable[[Any], Any],
                 should_log_fn: Callable[[Any], Any] | None,
                 *, peek_input: bool, peek_output: bool, peek_snapshot: bool = False):
        self.wrapped = wrapped
        self.to_string_fn = to_string_fn
        self.should_log_fn = should_log_fn
        self.peek_input = peek_input
        self.peek_output = peek_output
        self.peek_snapshot = peek_snapshot

    def _log_item(self, prefix: str, ordinal: int, item: Any) -> None:
        if isinstance(item, Watermark):
            self._logger.info("%s %d: %s", prefix, ordinal, item)
        elif self.should_log_fn is None or self.should_log_fn(item):
            self._logger.info("%s %d: %s", prefix, ordinal, self.to_string_fn(item))

    def is_cooperative(self) -> bool:
        return self.wrapped.is_cooperative()

    def init(self, outbox: Any, context: Any) -> None:
        self._logger = getattr(context, "logger", None) or logging.getLogger("jetspark.peek")
        if self.peek_output or self.peek_snapshot:
            log = (lambda o, item: self._log_item("Output to ordinal", o, item)) if self.peek_output else None
            outbox = _LoggingOutbox(outbox, log, self._log_snapshot_entry if self.peek_snapshot else None)
        self.wrapped.init(outbox, context)

    def _log_snapshot_entry(self, entry: tuple) -> None:
        if self.should_log_fn is None or self.should_log_fn(entry):
            self._logger.info("Output to snapshot: %s", self.to_string_fn(entry))

    def process(self, ordinal: int, inbox: Inbox) -> None:
        if not self.peek_input:
            self.wrapped.process(ordinal, inbox)
            return
        before = list(inbox)
        self.wrapped.process(ordinal, inbox)
        for item in before[: len(before) - len(inbox)]:  # processors remove items from the head only
            self._log_item("Input from ordinal", ordinal, item)

    def try_process_watermark(self, watermark: Any) -> bool:
        if self.peek_input and watermark != self._last_watermark:
            self._logger.info("Input: %s", watermark)
            self._last_watermark = watermark
        return self.wrapped.try_process_watermark(watermark)

    def try_process(self) -> bool:
        return self.wrapped.try_process()

    def complete_edge(self, ordinal: int) -> bool:
        return self.wrapped.complete_edge(ordinal)

    def complete(self) -> bool:
        return self.wrapped.complete()

    def save_to_snapshot(self) -> bool:
        return self.wrapped.save_to_snapshot()

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        self.wrapped.restore_from_snapshot(inbox)

    def finish_snapshot_restore(self) -> bool:
        return self.wrapped.finish_snapshot_restore()

    def snapshot_commit_prepare(self) -> bool:
        return self.wrapped.snapshot_commit_prepare()

    def snapshot_commit_finish(self, success: bool) -> bool:
        return self.wrapped.snapshot_commit_finish(success)

    def close(self) -> None:
        self.wrapped.close()


class _PeekFactory:
    """Zero-argument callable: the wrapped factory's processor, wrapped."""

    def __init__(self, wrapped: Callable[[], Processor], wrap: Callable[[Processor], Processor], name: str):
        self.wrapped = wrapped
        self.wrap = wrap
        self.name = name

    def __call__(self) -> Processor:
        return self.wrap(self.wrapped())

    def __repr__(self) -> str:
        return self.name


class _Wrap:
    """Picklable ``processor -> PeekWrappedP(processor, ...)``."""

    def __init__(self, to_string_fn: Callable[[Any], Any], should_log_fn: Callable[[Any], Any] | None,
                 peek_input: bool, peek_output: bool, peek_snapshot: bool = False):
        self.args = (to_string_fn, should_log_fn)
        self.flags = dict(peek_input=peek_input, peek_output=peek_output, peek_snapshot=peek_snapshot)

    def __call__(self, processor: Processor) -> Processor:
        return PeekWrappedP(processor, *self.args, **self.flags)


def _peek(factory: str, supplier: Any, to_string_fn: Callable[[Any], Any], should_log_fn: Any, *,
          peek_input: bool = False, peek_output: bool = False, peek_snapshot: bool = False) -> Any:
    check_callable(factory, "to_string_fn", to_string_fn)
    if should_log_fn is not None:
        check_callable(factory, "should_log_fn", should_log_fn)
    wrap = _Wrap(to_string_fn, should_log_fn, peek_input, peek_output, peek_snapshot)
    if isinstance(supplier, RuntimeBound):
        raise DagValidationError(
            f"{factory}: {type(supplier).__name__} is implemented by the engine with Spark operations and has no "
            "processors to peek at; peek at the vertex next to it instead"
        )
    if isinstance(supplier, ProcessorMetaSupplier):
        return MappedMetaSupplier(supplier, wrap)
    if isinstance(supplier, ProcessorSupplier):
        return MappedSupplier(supplier, wrap)
    if isinstance(supplier, Processor) or not callable(supplier):
        raise DagValidationError(
            f"{factory}: expected a processor supplier (a zero-argument callable returning a new Processor, a "
            f"ProcessorSupplier or a ProcessorMetaSupplier), got {supplier!r:.80} ({type(supplier).__name__})"
        )
    return _PeekFactory(supplier, wrap, f"{factory.split('(')[0]}({supplier!r})")


def peek_input_p(supplier: Any, to_string_fn: Callable[[Any], Any] = str,
                 should_log_fn: Callable[[Any], Any] | None = None) -> Any:
    """Wraps ``supplier`` so its processors log, at INFO, each item they take from the inbox
    (``"Input from ordinal N: text"``, after the processor removed it) and each watermark once
    (``"Input: <wm>"``). Emits what the wrapped processor emits; stateful as it is. Returns the same kind of
    supplier as given.
    """
    return _peek("peek_input_p(supplier)", supplier, to_string_fn, should_log_fn, peek_input=True, peek_output=False)


def peek_output_p(supplier: Any, to_string_fn: Callable[[Any], Any] = str,
                  should_log_fn: Callable[[Any], Any] | None = None) -> Any:
    """Wraps ``supplier`` so its processors log, at INFO, each item their outbox accepted, once per outbound
    ordinal (``"Output to ordinal N: text"``; watermarks always). Emits what the wrapped processor emits;
    stateful as it is. Returns the same kind of supplier as given.
    """
    return _peek("peek_output_p(supplier)", supplier, to_string_fn, should_log_fn, peek_input=False, peek_output=True)


def peek_snapshot_p(supplier: Any, to_string_fn: Callable[[Any], Any] = str,
                    should_log_fn: Callable[[Any], Any] | None = None) -> Any:
    """Wraps ``supplier`` so its processors log, at INFO, each entry they saved to the snapshot (accepted by
    ``outbox.offer_to_snapshot``) as ``"Output to snapshot: text"``; ``to_string_fn`` and ``should_log_fn``
    get the entry as a ``(key, value)`` tuple. Emits and saves what the wrapped processor does. Returns the
    same kind of supplier as given (Jet's ``peekSnapshotP``).

    >>> from processors.api.processor import AbstractProcessor
    >>> class Total(AbstractProcessor):
    ...     def save_to_snapshot(self):
    ...         return self.try_emit_to_snapshot("total", 42)
    >>> type(peek_snapshot_p(Total)()).__name__
    'PeekWrappedP'
    """
    return _peek("peek_snapshot_p(supplier)", supplier, to_string_fn, should_log_fn, peek_snapshot=True)
