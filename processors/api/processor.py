"""The Processor API: ``Processor`` (the interface), ``AbstractProcessor`` (the convenient base class),
``FlatMapper`` and ``BatchTransform`` (the fast path of the stateless built-ins).

Lifecycle (Jet's; see ``processors/execution/staged.py``): ``is_cooperative()`` any time, ``init(outbox, context)``
once, [``restore_from_snapshot(inbox)``* then ``finish_snapshot_restore()`` until True], then
``process(ordinal, inbox)`` for every inbound batch (edges consumed in ascending priority),
``try_process()`` after each batch, ``complete_edge(ordinal)`` when an edge is exhausted, ``complete()``
until True and finally ``close()``, always. Every boolean method returning False is called again before
any other processing method.

Defaults (``Processor``):

=============================  =======================================================================
``is_cooperative()``           True
``init(outbox, context)``      no-op
``process(ordinal, inbox)``    raises ``NotImplementedError("Missing implementation in <class>...")``
``try_process_watermark(wm)``  True (the plain interface holds no outbox, so it cannot forward the
                               watermark; ``AbstractProcessor`` forwards it with ``try_emit``)
``try_process()``              True
``complete_edge(ordinal)``     True
``complete()``                 True
``save_to_snapshot()``         True
``restore_from_snapshot(i)``   raises ``ProcessorContractError`` (the processor saved state it cannot restore)
``finish_snapshot_restore()``  True
``snapshot_commit_prepare()``  True (two-phase commit, phase 1: after ``save_to_snapshot``, before the barrier)
``snapshot_commit_finish(ok)`` True (phase 2, once the snapshot completed or failed; must not emit)
``close()``                    no-op
=============================  =======================================================================

``Processor`` holds no state, so a subclass with its own ``__init__`` that never calls
``super().__init__()`` is valid. ``AbstractProcessor`` keeps its fields as class-level defaults for the
same reason, though its subclasses should call ``super().__init__()``.

``AbstractProcessor.init(outbox, context)`` stores the outbox, context and logger and then calls the hook
``init_processor(context)`` (Jet's protected ``init(Context)``): override the hook, not ``init``.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Callable, Iterator, Sequence

from jetspark_base.errors import ProcessorContractError
from processors.api.inbox import Inbox
from processors.api.outbox import contains_none
from processors.api.traverser import Traverser, _IteratorTraverser, to_traverser

__all__ = ["Processor", "AbstractProcessor", "FlatMapper", "BatchTransform"]


def _class_name(obj: Any) -> str:
    return type(obj).__qualname__


def _positional_count(fn: Any) -> int | None:
    """How many positional parameters ``fn`` takes (self included), or None when it takes ``*args``."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _check_init_signature(cls: type) -> None:
    """Refuse a class defining ``init(self, context)``: Jet's ``AbstractProcessor.init(Context)`` hook is
    ``init_processor(context)`` here, and ``init`` itself receives ``(outbox, context)``."""
    init = cls.__dict__.get("init")
    if init is None or _positional_count(init) != 2:
        return
    fix = ("rename it to init_processor(self, context): AbstractProcessor.init(outbox, context) stores the outbox "
           "and context and then calls init_processor(context), Jet's protected init(Context)"
           if issubclass(cls, AbstractProcessor) else
           "define init(self, outbox, context) (or subclass AbstractProcessor and override init_processor(context))")
    raise ProcessorContractError(
        f"{cls.__qualname__} defines init(self, context), but the runtime calls init(outbox, context); {fix}"
    )


class Processor:
    """The interface every processor implements; all methods have Jet's defaults (see the module docstring).

    >>> class Doubler(Processor):
    ...     def init(self, outbox, context): self.outbox = outbox
    ...     def process(self, ordinal, inbox):
    ...         while not inbox.is_empty() and self.outbox.offer(inbox.peek() * 2):
    ...             inbox.remove()
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _check_init_signature(cls)

    def is_cooperative(self) -> bool:
        """True when every call returns quickly and never blocks (the default)."""
        return True

    def init(self, outbox: Any, context: Any) -> None:
        """Called once before any processing method with the processor's ``Outbox`` and ``Context``."""

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Process items of the inbound edge ``ordinal``; remove each item once it is fully processed."""
        raise NotImplementedError(
            f"Missing implementation in {_class_name(self)}: it received items on inbound ordinal {ordinal}; "
            "override process(ordinal, inbox) (or, with AbstractProcessor, try_process0(item)/try_process_any)"
        )

    def try_process_watermark(self, watermark: Any) -> bool:
        """Handle a watermark; True when done (the default: True, i.e. the watermark is swallowed)."""
        return True

    def try_process(self) -> bool:
        """Called after each inbound batch was processed; False to be called again (default True)."""
        return True

    def complete_edge(self, ordinal: int) -> bool:
        """The inbound edge ``ordinal`` is exhausted; False to be called again (default True)."""
        return True

    def complete(self) -> bool:
        """All inbound edges are exhausted: emit final results; False to be called again (default True)."""
        return True

    def save_to_snapshot(self) -> bool:
        """Offer the state with ``outbox.offer_to_snapshot``; False to be called again (default True)."""
        return True

    def restore_from_snapshot(self, inbox: Inbox) -> None:
        """Restore state from the ``(key, value)`` entries in ``inbox``; remove each entry restored."""
        raise ProcessorContractError(
            f"Processor {_class_name(self)} does not override restore_from_snapshot(inbox), but the snapshot "
            "being restored holds entries for it: implement restore_from_snapshot (AbstractProcessor: "
            "restore_from_snapshot_entry(key, value)) or do not save state in save_to_snapshot"
        )

    def finish_snapshot_restore(self) -> bool:
        """All snapshot entries were restored; False to be called again (default True)."""
        return True

    def snapshot_commit_prepare(self) -> bool:
        """Phase 1 of a two-phase commit (Jet 4.0): called after ``save_to_snapshot()`` returned True and before
        the barrier goes downstream. Mark the open transaction prepared (``offer_to_snapshot`` is allowed here);
        False to be called again (default True)."""
        return True

    def snapshot_commit_finish(self, success: bool) -> bool:
        """Phase 2 (Jet 4.0): the snapshot completed everywhere (``success``) or failed. Commit the prepared
        transactions on success; on failure leave them prepared (a later snapshot commits them). Must not emit;
        False to be called again (default True)."""
        return True

    def close(self) -> None:
        """Release resources; always called last, also after a failure or when ``init`` never ran."""


class AbstractProcessor(Processor):
    """A ``Processor`` base with item-at-a-time receiving and safe emitting helpers (Jet's ``AbstractProcessor``).

    Override ``try_process0(item)`` .. ``try_process4(item)`` or the catch-all ``try_process_any(ordinal, item)``;
    return False to be called again with the same item (e.g. after ``try_emit`` returned False).

    >>> class Splitter(AbstractProcessor):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.words = self.flat_mapper(str.split)
    ...     def try_process0(self, item):
    ...         return self.words.try_process(item)
    """

    _outbox: Any = None
    _context: Any = None
    _logger: logging.Logger | None = None
    _pending_item: Any = None
    _pending_snapshot_entry: Any = None
    _emitting: tuple = (None, None)  # (object given to emit_from_traverser, its traverser) while unfinished
    _emitting_snapshot: tuple = (None, None)  # the same for emit_from_traverser_to_snapshot

    def __init__(self) -> None:
        pass

    # ------------------------------------------------------------------ lifecycle
    def init(self, outbox: Any, context: Any) -> None:
        """Store ``outbox``, ``context`` and its logger, then call ``init_processor(context)``. Do not override."""
        self._outbox = outbox
        self._context = context
        self._logger = getattr(context, "logger", None)
        self.init_processor(context)

    def init_processor(self, context: Any) -> None:
        """Hook for initialisation needing the context (Jet's protected ``init(Context)``); default no-op."""

    @property
    def outbox(self) -> Any:
        """The outbox given to ``init``."""
        return self._outbox

    @property
    def context(self) -> Any:
        """The context given to ``init``."""
        return self._context

    @property
    def logger(self) -> logging.Logger:
        """The processor's logger (from the context)."""
        if self._logger is None:
            self._logger = logging.getLogger(f"jetspark.{_class_name(self)}")
        return self._logger

    # ------------------------------------------------------------------ receiving
    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Feed the items one at a time to ``try_processN`` (ordinals 0..4) or ``try_process_any``, removing
        each item only when the call returned True. Do not override; implement the ``try_process*`` methods.
        """
        if ordinal == 0:
            fn = self.try_process0
        elif ordinal == 1:
            fn = self.try_process1
        elif ordinal == 2:
            fn = self.try_process2
        elif ordinal == 3:
            fn = self.try_process3
        elif ordinal == 4:
            fn = self.try_process4
        else:

            def fn(item: Any) -> bool:
                return self.try_process_any(ordinal, item)

        items = inbox._items if type(inbox) is Inbox else None
        if items is not None:
            popleft = items.popleft
            while items:
                done = fn(items[0])
                if not done:
                    if done is None:
                        self._returned_none(ordinal)
                    return
                popleft()
        else:
            while not inbox.is_empty():
                done = fn(inbox.peek())
                if not done:
                    if done is None:
                        self._returned_none(ordinal)
                    return
                inbox.remove()

    def _returned_none(self, ordinal: int) -> None:
        method = f"try_process{ordinal}(item)" if ordinal <= 4 else f"try_process_any({ordinal}, item)"
        raise ProcessorContractError(
            f"{_class_name(self)}.{method} returned None; it must return True when the item is done or False to be "
            "called again with the same item (did you forget the return statement?)"
        )

    def try_process0(self, item: Any) -> bool:
        """Process an item of inbound ordinal 0; default delegates to ``try_process_any(0, item)``."""
        return self.try_process_any(0, item)

    def try_process1(self, item: Any) -> bool:
        """Process an item of inbound ordinal 1; default delegates to ``try_process_any(1, item)``."""
        return self.try_process_any(1, item)

    def try_process2(self, item: Any) -> bool:
        """Process an item of inbound ordinal 2; default delegates to ``try_process_any(2, item)``."""
        return self.try_process_any(2, item)

    def try_process3(self, item: Any) -> bool:
        """Process an item of inbound ordinal 3; default delegates to ``try_process_any(3, item)``."""
        return self.try_process_any(3, item)

    def try_process4(self, item: Any) -> bool:
        """Process an item of inbound ordinal 4; default delegates to ``try_process_any(4, item)``."""
        return self.try_process_any(4, item)

    def try_process_any(self, ordinal: int, item: Any) -> bool:
        """Process an item of any inbound ordinal (Jet's ``tryProcess(ordinal, item)``); True when done."""
        raise NotImplementedError(
            f"Missing implementation in {_class_name(self)}: it received an item on inbound ordinal {ordinal}; "
            f"override try_process{ordinal if ordinal <= 4 else 'N'}(item) or try_process_any(ordinal, item)"
        )

    def try_process_watermark(self, watermark: Any) -> bool:
        """Forward the watermark to every outbound edge (``try_emit(watermark)``)."""
        return self.try_emit(watermark)

    # ------------------------------------------------------------------ emitting
    def try_emit(self, item: Any, ordinal: int | Sequence[int] = -1) -> bool:
        """Offer ``item`` to ``ordinal`` (-1 = all outbound edges, or a list); False: return and retry later."""
        return self._outbox.offer(item, ordinal)

    def emit_from_traverser(self, traverser: Any, ordinal: int | Sequence[int] = -1) -> bool:
        """Emit the traverser's items until it returns ``None`` (True) or the outbox refuses one (False; the
        refused item is kept and emitted first on the next call). After False, call it again with the *same*
        traverser, iterator or iterable (an iterable such as a list resumes where it stopped, it is not
        restarted); for one output sequence per input item use ``flat_mapper``.
        """
        t = traverser if traverser.__class__ is _IteratorTraverser else self._traverser_of(traverser, "_emitting")
        if t.__class__ is _IteratorTraverser and t._items is not None and self._pending_item is None:
            # a list or tuple (traverse_iterable(list) or the list itself): its rest in one offer_many, the same
            # items in the same order as offering them one by one; full buckets stop it as a refusal would, and
            # the next call continues there. A None item takes the per-item path below, which raises the
            # traverser's own error at that item.
            items = t._items
            if not contains_none(items):
                start = t._position
                end = self._outbox.offer_many(items, start, ordinal, no_none=True)
                if end != start:
                    t.skip_to(end)
                if end < len(items):
                    return False
                self._emitting = (None, None)
                return True
        next_ = t.next
        offer = self._outbox.offer
        item = self._pending_item
        if item is None:
            item = next_()
        else:
            self._pending_item = None
        while item is not None:
            if not offer(item, ordinal):
                self._pending_item = item
                return False
            item = next_()
        self._emitting = (None, None)
        return True

    def _traverser_of(self, obj: Any, slot: str) -> Any:
        """``obj`` when it is a Traverser; for an iterable, the traverser made from it when it was first given
        (kept in ``slot`` until its emission finishes), so that a call after a refusal resumes instead of
        restarting."""
        if isinstance(obj, Traverser):
            return obj
        source, converted = getattr(self, slot)
        if source is not obj:
            converted = to_traverser(obj)
            setattr(self, slot, (obj, converted))
        return converted

    def _next_fn_of(self, obj: Any, slot: str) -> Callable[[], Any]:
        """``next`` of :meth:`_traverser_of`."""
        return self._traverser_of(obj, slot).next

    def flat_mapper(self, fn: Callable[[Any], Any], ordinal: int | Sequence[int] = -1) -> "FlatMapper":
        """A ``FlatMapper`` emitting ``fn(item)`` (a traverser or an iterable) for each item to ``ordinal``."""
        return FlatMapper(self, fn, ordinal)

    def try_emit_to_snapshot(self, key: Any, value: Any) -> bool:
        """Offer the entry ``(key, value)`` to the snapshot; use from ``save_to_snapshot``."""
        return self._outbox.offer_to_snapshot(key, value)

    def emit_from_traverser_to_snapshot(self, traverser: Any) -> bool:
        """Emit ``(key, value)`` entries from the traverser to the snapshot; True when it is exhausted."""
        next_ = self._next_fn_of(traverser, "_emitting_snapshot")
        offer = self._outbox.offer_to_snapshot
        entry = self._pending_snapshot_entry
        if entry is None:
            entry = next_()
        else:
            self._pending_snapshot_entry = None
        while entry is not None:
            if not offer(entry[0], entry[1]):
                self._pending_snapshot_entry = entry
                return False
            entry = next_()
        self._emitting_snapshot = (None, None)
        return True

    # ------------------------------------------------------------------ snapshot restore
    def restore_from_snapshot(self, inbox: Inbox) -> None:
        """Pass each ``(key, value)`` entry to ``restore_from_snapshot_entry``. Do not override."""
        while not inbox.is_empty():
            key, value = inbox.poll()
            self.restore_from_snapshot_entry(key, value)

    def restore_from_snapshot_entry(self, key: Any, value: Any) -> None:
        """Restore one snapshot entry (Jet's ``restoreFromSnapshot(key, value)``)."""
        raise ProcessorContractError(
            f"Processor {_class_name(self)} does not override restore_from_snapshot_entry(key, value), but the "
            "snapshot being restored holds entries for it"
        )


class FlatMapper:
    """Emits, for each input item, all items of ``fn(item)`` (Jet's ``AbstractProcessor.FlatMapper``).

    ``try_process(item)`` returns True once everything for ``item`` was emitted; on False call it again with the
    same item: ``fn`` is not re-applied, emission resumes where the outbox refused.
    """

    __slots__ = ("_processor", "_fn", "_ordinal", "_iterator", "_pending", "_sequence", "_position")

    def __init__(self, processor: AbstractProcessor, fn: Callable[[Any], Any], ordinal: int | Sequence[int] = -1):
        self._processor = processor
        self._fn = fn
        self._ordinal = ordinal
        self._iterator: Any = None
        self._pending: Any = None
        self._sequence: list | tuple | None = None  # a list/tuple result is emitted in slices (Outbox.offer_many)
        self._position = 0

    def try_process(self, item: Any) -> bool:
        """Emit the outputs of ``fn(item)``; True when all were emitted."""
        if self._sequence is None and self._iterator is None:  # a new item: the common case first
            result = self._fn(item)
            if result is None:
                return True
            if result.__class__ is list or result.__class__ is tuple:
                position = self._processor._outbox.offer_many(result, 0, self._ordinal)
                if position == len(result):
                    return True
                self._sequence, self._position = result, position
                return False
            # a Traverser ends at its first None; a plain iterable must not contain None
            self._iterator = iter(result.next, None) if isinstance(result, Traverser) else iter(result)
        elif self._sequence is not None:
            return self._emit_sequence(self._sequence)
        return self._emit_iterator()

    def _emit_iterator(self) -> bool:
        offer, ordinal = self._processor._outbox.offer, self._ordinal
        pending = self._pending
        if pending is not None:
            if not offer(pending, ordinal):
                return False
            self._pending = None
        for out in self._iterator:
            if not offer(out, ordinal):
                self._pending = out
                return False
        self._iterator = None
        return True

    def _emit_sequence(self, sequence: list | tuple) -> bool:
        position = self._processor._outbox.offer_many(sequence, self._position, self._ordinal)
        if position < len(sequence):
            self._sequence, self._position = sequence, position
            return False
        self._sequence = None
        return True


class BatchTransform(Processor):
    """A stateless one-input processor defined by ``transform_batch(items) -> list`` (the fast path).

    Output goes to every outbound edge. The driver calls ``transform_batch`` directly on whole inbound
    batches; ``process`` is a correct bounded-outbox implementation for everyone else (e.g.
    ``verify_processor``): it transforms the head item, emits its outputs and removes the item only when all
    were accepted. ``map_p``, ``filter_p``, ``flat_map_p`` (and the ``*_using_context_p`` variants, which create
    their context object in ``init``) are tiny subclasses.

    >>> class Upper(BatchTransform):
    ...     def transform_batch(self, items):
    ...         return [s.upper() for s in items]
    >>> Upper().transform_batch(["a", "b"])
    ['A', 'B']
    """

    _outbox: Any = None
    _vertex: str | None = None
    _pending: list | None = None
    _position: int = 0

    def transform_batch(self, items: list) -> list:
        """Return the outputs for ``items`` (never ``None`` items); must not keep state between calls."""
        raise NotImplementedError(f"Missing implementation in {_class_name(self)}: override transform_batch(items)")

    def transform_chunks(self, items: list, size: int) -> Iterator[list]:
        """The outputs for ``items`` as consecutive lists of about ``size`` items (the driver's fast path), so
        that memory is bounded by ``size``, not by the batch: by default ``transform_batch`` of slices of
        ``size`` inputs; a processor emitting several items per input overrides it to cut its output."""
        if len(items) <= size:
            yield self.transform_batch(items)
            return
        transform = self.transform_batch
        for start in range(0, len(items), size):
            yield transform(items[start:start + size])

    def init(self, outbox: Any, context: Any) -> None:
        """Store the outbox and the vertex name for messages (subclasses overriding ``init`` must call
        ``super().init(outbox, context)``)."""
        self._outbox = outbox
        self._vertex = getattr(context, "vertex_name", None)

    def process(self, ordinal: int, inbox: Inbox) -> None:
        """Transform and emit item by item, keeping the head item until all its outputs were accepted."""
        offer_many = self._outbox.offer_many
        while True:
            pending = self._pending
            if pending is None:
                if inbox.is_empty():
                    return
                pending = self._pending = self.transform_batch([inbox.peek()])
                self._position = 0
            self._position = offer_many(pending, self._position)
            if self._position < len(pending):
                return
            self._pending = None
            inbox.remove()

    def try_process_watermark(self, watermark: Any) -> bool:
        """Forward the watermark to every outbound edge."""
        return self._outbox.offer(watermark)
