"""``SourceBuilder`` and ``SinkBuilder``: custom connectors from a few plain functions (Jet's pipeline
builders, offered on the Core API).

A builder collects the user's functions; ``build()`` returns a :class:`ProcessorMetaSupplier` subclass
(:class:`BatchSource`, :class:`StreamSource`, :class:`BuiltSink`) that carries the builder's ``name``, so it
goes straight into ``dag.new_vertex(built.name, built)``.

Sources (Jet's ``ConvenientSourceP``), made by ``SourceBuilder.batch``, ``.stream`` or ``.timestamped_stream``:

- The processor is non-cooperative. ``init`` calls ``state = create_fn(context)``; ``complete()`` calls
  ``fill_buffer_fn(state, buffer)`` once when everything filled before has been emitted, then emits the
  buffer, honouring a full outbox. ``complete()`` returns True once the buffer is closed and fully emitted
  (a streaming source normally never closes it, so never completes). ``close()``
  (always called, also when the job fails) calls ``destroy_fn(state)`` if ``create_fn`` returned.
- Parallelism: without ``distributed(n)`` the source runs as one processor in the whole job
  (``ProcessorMetaSupplier.force_total_parallelism_one``); with ``distributed(n)`` it prefers ``n``
  processors per member and ``create_fn`` sees every global processor index ``0 .. total - 1`` exactly once.
- Snapshots (optional, both functions together): ``save_to_snapshot`` first emits what is pending, then
  saves ``create_snapshot_fn(state)`` (unless the buffer is closed or the state is ``None``) under a
  ``broadcast_key`` naming the processor, so on restore every processor receives every processor's state (the
  parallelism may have changed); each processor collects the saved states and calls
  ``restore_snapshot_fn(state, states)`` once, in ``finish_snapshot_restore``. The entry's value is the pair
  ``(state, watermark)`` (watermark: the last one a timestamped source emitted, else ``None``).
- Timestamps (``timestamped_stream``): ``buf.add(item, timestamp)`` takes an int timestamp in milliseconds
  (``buf.add(item)`` stamps it with the current time). Items are emitted as themselves (Jet's "no wrapping";
  put the time into the item if downstream needs it) and the timestamps drive watermarks through the shared
  :class:`~processors.windowing.event_time.EventTimeMapper` (one partition) with a *limiting lag* policy: the
  watermark is the highest timestamp seen so far minus ``allowed_lag(ms)`` (default 0), and a
  :class:`~processors.api.watermark.Watermark` is emitted just before the item that raises it (every increase, no
  throttling). Items behind the watermark are emitted too (dropping late items is the consumer's business). A
  ``fill_buffer_fn`` call that adds nothing lets the mapper check the time: after ``idle_timeout(ms)`` (default
  60,000; ``<= 0`` never) without items the source emits the idle message ``Watermark(2**63 - 1)`` once. After a
  restore the watermark restarts from the lowest one the processors saved (no watermark at or below it again).
- Running: a job with a ``stream``/``timestamped_stream`` source runs on the pipelined runtime until it is
  cancelled: ``complete()`` calls ``fill_buffer_fn`` again and again (the runtime backs off while calls add
  nothing) and emits what it adds right away. A stream source may still ``close()`` its buffer (the tutorials'
  network source does at the end of its connection, as Jet allows): it then completes like a batch source.
  Unit-test a processor directly: take it with ``source.get([0])(0).get(1)`` and ``drive()`` it for a bounded
  number of outputs (``itertools.islice``), or call ``complete()`` directly.

Sinks: ``SinkBuilder.sink_builder(name, create_fn)`` builds ``write_buffered_p`` (see ``processors.library.buffered``)
with ``preferred_local_parallelism`` (default 1): ``receive_fn(state, item)`` per item, ``flush_fn(state)``
after every inbox batch, ``destroy_fn(state)`` on close.

>>> def fill(numbers, buf):
...     for n in numbers:
...         buf.add(n)
...     buf.close()
>>> numbers = SourceBuilder.batch("numbers", lambda ctx: range(3)).fill_buffer_fn(fill).build()
>>> numbers.name
'numbers'
"""

from __future__ import annotations

import functools
import operator
import time
from typing import Any, Callable

from jetspark_base.errors import DagValidationError, ProcessorContractError
from processors.library.buffered import _require_callable, write_buffered_p
from processors.api.processor import Processor
from processors.api.snapshot_keys import broadcast_key
from processors.api.suppliers import ProcessorMetaSupplier
from processors.windowing.event_time import DEFAULT_IDLE_TIMEOUT_MS, EventTimeMapper, WmGenParams
from processors.windowing.watermark_policies import limiting_lag, no_throttling
from processors.windowing.definitions import MIN_WATERMARK

__all__ = [
    "SourceBuilder", "SinkBuilder", "SourceBuffer", "TimestampedSourceBuffer", "BatchSource", "StreamSource",
    "BuiltSink", "ConvenientSourceP", "TimestampedSourceP",
]


# ----------------------------------------------------------------------------------------------------------
# Sources
# ----------------------------------------------------------------------------------------------------------


class SourceBuffer:
    """The buffer ``fill_buffer_fn(state, buffer)`` fills: ``add(item)``, ``len(buffer)``, ``close()``.

    >>> buf = SourceBuffer("src")
    >>> buf.add("a"); buf.add("b"); len(buf)
    2
    >>> buf.close(); buf.is_closed()
    True
    """

    __slots__ = ("_source", "_items", "_closed")

    def __init__(self, source_name: str):
        self._source = source_name
        self._items: list = []
        self._closed = False

    def add(self, item: Any) -> None:
        """Add one item to emit. Items must not be ``None``; nothing may be added after :meth:`close`."""
        self._check(item)
        self._items.append(item)

    def _check(self, item: Any) -> None:
        if self._closed:
            raise ProcessorContractError(
                f"SourceBuffer.add() of source '{self._source}' called after close(): the buffer is closed, "
                "can't add more items; call buf.close() only after the last add()"
            )
        if item is None:
            raise ProcessorContractError(
                f"SourceBuffer.add(None) in fill_buffer_fn of source '{self._source}': items must not be None; "
                "skip the value or wrap it"
            )

    def size(self) -> int:
        """How many items the buffer holds (same as ``len(buffer)``)."""
        return len(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def close(self) -> None:
        """Mark the end of the data; the items already added are still emitted, then the source completes (a
        stream source usually never closes: return from ``fill_buffer_fn`` without adding anything when no
        data is ready)."""
        self._closed = True

    def is_closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def _take(self) -> list:
        items, self._items = self._items, []
        return items


class TimestampedSourceBuffer(SourceBuffer):
    """The buffer of a ``timestamped_stream`` source: ``add(item, timestamp)`` with an int timestamp in
    milliseconds; ``add(item)`` stamps the item with the current time. It cannot be closed (a stream).

    >>> buf = TimestampedSourceBuffer("ticks")
    >>> buf.add("a", 1000); buf.add("b"); len(buf)
    2
    """

    __slots__ = ()

    def add(self, item: Any, timestamp: int | None = None) -> None:
        """Add ``item`` with its event ``timestamp`` (int milliseconds; ``None`` = now)."""
        self._check(item)
        if timestamp is None:
            timestamp = time.time_ns() // 1_000_000
        elif type(timestamp) is not int:
            try:
                if isinstance(timestamp, bool):
                    raise TypeError
                timestamp = operator.index(timestamp)  # int subclasses, numpy integers
            except TypeError:
                raise ProcessorContractError(
                    f"TimestampedSourceBuffer.add() in fill_buffer_fn of source '{self._source}': the timestamp "
                    f"must be an int (milliseconds), got {type(timestamp).__name__} {timestamp!r}; "
                    "convert it, e.g. int(seconds * 1000)"
                ) from None
        self._items.append((item, timestamp))


class ConvenientSourceP(Processor):
    """The processor of a :class:`SourceBuilder` source (see the module docstring for the protocol)."""

    _NOTHING: list = []

    def __init__(self, name, create_fn, fill_buffer_fn, destroy_fn, create_snapshot_fn, restore_snapshot_fn):
        self._name = name
        self._create_fn = create_fn
        self._fill_buffer_fn = fill_buffer_fn
        self._destroy_fn = destroy_fn
        self._create_snapshot_fn = create_snapshot_fn
        self._restore_snapshot_fn = restore_snapshot_fn
        self._outbox = None
        self._state = None
        self._created = False
        self._buffer = self._new_buffer(name)
        self._pending: list = self._NOTHING
        self._pos = 0
        self._snapshot_key: tuple | None = None
        self._snapshot_entry: tuple | None = None
        self._restored: list | None = None

    @staticmethod
    def _new_buffer(name: str) -> SourceBuffer:
        return SourceBuffer(name)

    def is_cooperative(self) -> bool:
        return False

    def init(self, outbox, context) -> None:
        self._outbox = outbox
        # a broadcast key: on restore every processor receives every processor's state (Jet's ConvenientSourceP)
        self._snapshot_key = broadcast_key(("SourceBuilder", self._name, context.global_processor_index))
        self._state = self._create_fn(context)
        self._created = True

    def complete(self) -> bool:
        if self._pos >= len(self._pending):
            if self._buffer._closed:
                return True
            self._fill_buffer_fn(self._state, self._buffer)
            self._pending = self._take_pending()
            self._pos = 0
        return self._emit_pending() and self._buffer._closed

    def _take_pending(self) -> list:
        """What the last ``fill_buffer_fn`` call gives to emit."""
        return self._buffer._take()

    def _emit_pending(self) -> bool:
        """Offer the pending items from ``_pos`` on; True when all went out."""
        items = self._pending
        pos = self._outbox.offer_many(items, self._pos)
        if pos < len(items):
            self._pos = pos
            return False
        self._pending, self._pos = self._NOTHING, 0
        return True

    def _watermark(self) -> int | None:
        """The watermark to save with the state (timestamped sources)."""
        return None

    def _restore_watermark(self, watermarks: list) -> None:
        """Apply the saved watermarks (timestamped sources)."""

    def save_to_snapshot(self) -> bool:
        if self._create_snapshot_fn is None:
            return True
        if not self._emit_pending():  # the saved state must follow every item already taken from the buffer
            return False
        if self._snapshot_entry is None:
            if self._buffer._closed:
                return True
            saved = self._create_snapshot_fn(self._state)
            if saved is None:
                return True
            self._snapshot_entry = (self._snapshot_key, (saved, self._watermark()))
        if not self._outbox.offer_to_snapshot(*self._snapshot_entry):
            return False
        self._snapshot_entry = None
        return True

    def restore_from_snapshot(self, inbox) -> None:
        if self._restore_snapshot_fn is None:
            raise ProcessorContractError(
                f"source '{self._name}' received snapshot state but has no restore_snapshot_fn; "
                "set it with .restore_snapshot_fn(fn) on the builder"
            )
        if self._restored is None:
            self._restored = []
        self._restored.extend(value for _key, value in inbox.take_all())

    def finish_snapshot_restore(self) -> bool:
        if self._restored:
            self._restore_snapshot_fn(self._state, [state for state, _wm in self._restored])
            self._restore_watermark([wm for _state, wm in self._restored if wm is not None])
        self._restored = None
        return True

    def close(self) -> None:
        if self._created and self._destroy_fn is not None:
            self._created = False
            self._destroy_fn(self._state)


class TimestampedSourceP(ConvenientSourceP):
    """The processor of a ``timestamped_stream`` source: emits each item as itself, preceded by the watermark
    it raises (limiting lag ``allowed_lag``), and the idle message after ``idle_timeout`` ms without items."""

    def __init__(self, *args, allowed_lag: int = 0, idle_timeout: int = DEFAULT_IDLE_TIMEOUT_MS):
        super().__init__(*args)
        self._params = WmGenParams(timestamp_fn=None, new_wm_policy_fn=limiting_lag(allowed_lag),
                                   wm_emit_policy=no_throttling(), idle_timeout_ms=idle_timeout)
        self._mapper: EventTimeMapper | None = None

    @staticmethod
    def _new_buffer(name: str) -> SourceBuffer:
        return TimestampedSourceBuffer(name)

    def set_wm_gen_params(self, params: WmGenParams) -> None:
        """Use ``params`` (its policy, idle timeout and ``wrap_fn``) instead of the builder's limiting lag; call
        before ``init``. The pipeline's ``with_native_timestamps`` uses it to emit timestamped events."""
        self._params = params

    def init(self, outbox, context) -> None:
        self._mapper = EventTimeMapper(self._params, 1, owner=f"source '{self._name}'")
        super().init(outbox, context)

    def _take_pending(self) -> list:
        taken = self._buffer._take()
        if not taken:
            return self._mapper.handle_no_event()
        out: list = []
        handle_event = self._mapper.handle_event
        for item, timestamp in taken:
            out += handle_event(item, 0, timestamp)
        return out

    def _watermark(self) -> int | None:
        wm = self._mapper.last_emitted_watermark
        return None if wm == MIN_WATERMARK else wm

    def _restore_watermark(self, watermarks: list) -> None:
        if watermarks:
            self._mapper.restore_watermark(0, min(watermarks))


class _SourceBuilderBase:
    """Settings shared by every kind of source builder; the kind's ``build()`` assembles the processor."""

    _kind = "source"

    def __init__(self, name: str, create_fn: Callable[[Any], Any]):
        if not isinstance(name, str) or not name:
            raise DagValidationError(f"SourceBuilder: the source name must be a non-empty str, got {name!r}")
        _require_callable(f"SourceBuilder '{name}'", "create_fn", create_fn)
        self._name = name
        self._create_fn = create_fn
        self._fill_buffer_fn: Callable | None = None
        self._destroy_fn: Callable | None = None
        self._create_snapshot_fn: Callable | None = None
        self._restore_snapshot_fn: Callable | None = None
        self._local_parallelism: int | None = None

    @property
    def name(self) -> str:
        """The source's name, the vertex name to use."""
        return self._name

    def fill_buffer_fn(self, fn: Callable[[Any, SourceBuffer], Any]):
        """Required. ``fn(state, buffer)`` adds the next items with ``buffer.add(item)`` (ideally ~100 per call;
        none when no data is ready); a batch source calls ``buffer.close()`` at the end of its data, a stream
        never does. Returns the builder."""
        _require_callable(self._owner(), "fill_buffer_fn", fn)
        self._fill_buffer_fn = fn
        return self

    def destroy_fn(self, fn: Callable[[Any], Any]):
        """Optional. ``fn(state)`` releases the state's resources; runs when the processor closes, also after a
        failure, if ``create_fn`` returned. Returns the builder."""
        _require_callable(self._owner(), "destroy_fn", fn)
        self._destroy_fn = fn
        return self

    def distributed(self, local_parallelism: int):
        """Run ``local_parallelism`` processors on every member instead of one in the whole job; each one's
        ``create_fn`` gets its own ``context.global_processor_index``. Must be >= 1. Returns the builder."""
        if isinstance(local_parallelism, bool) or not isinstance(local_parallelism, int) or local_parallelism < 1:
            raise DagValidationError(
                f"{self._owner()}: distributed({local_parallelism!r}): the preferred local parallelism must be "
                "an int >= 1; omit distributed() for a single processor in the whole job"
            )
        self._local_parallelism = local_parallelism
        return self

    def create_snapshot_fn(self, fn: Callable[[Any], Any]):
        """``fn(state)`` returns a picklable object holding what ``restore_snapshot_fn`` needs (``None`` saves
        nothing). Set together with :meth:`restore_snapshot_fn`. Returns the builder."""
        _require_callable(self._owner(), "create_snapshot_fn", fn)
        self._create_snapshot_fn = fn
        return self

    def restore_snapshot_fn(self, fn: Callable[[Any, list], Any]):
        """``fn(state, saved_states)`` applies the saved states (the list holds the objects every processor
        saved, so a distributed source must pick its own part). Returns the builder."""
        _require_callable(self._owner(), "restore_snapshot_fn", fn)
        self._restore_snapshot_fn = fn
        return self

    def _owner(self) -> str:
        return f"SourceBuilder.{self._kind}('{self._name}')"

    def _meta_supplier(self, processor_class: type = ConvenientSourceP, **options: Any) -> ProcessorMetaSupplier:
        """Check the settings and make the meta-supplier of ``processor_class`` processors."""
        if self._fill_buffer_fn is None:
            raise DagValidationError(f"{self._owner()}.build(): fill_buffer_fn must be set; call .fill_buffer_fn(fn)")
        if (self._create_snapshot_fn is None) != (self._restore_snapshot_fn is None):
            given, missing = (
                ("create_snapshot_fn", "restore_snapshot_fn")
                if self._restore_snapshot_fn is None
                else ("restore_snapshot_fn", "create_snapshot_fn")
            )
            raise DagValidationError(
                f"{self._owner()}.build(): {given} is set but {missing} is not; set both or neither"
            )
        factory = functools.partial(
            processor_class,
            self._name,
            self._create_fn,
            self._fill_buffer_fn,
            self._destroy_fn,
            self._create_snapshot_fn,
            self._restore_snapshot_fn,
            **options,
        )
        if self._local_parallelism is None:
            return ProcessorMetaSupplier.force_total_parallelism_one(factory)
        return ProcessorMetaSupplier.of(factory, preferred_local_parallelism=self._local_parallelism)


class BatchSourceBuilder(_SourceBuilderBase):
    """Builder of a bounded source, made by :meth:`SourceBuilder.batch`."""

    _kind = "batch"

    def build(self) -> "BatchSource":
        """The source as a :class:`BatchSource` (a ``ProcessorMetaSupplier`` with ``.name``)."""
        return BatchSource(self._name, self._meta_supplier())


class StreamSourceBuilder(_SourceBuilderBase):
    """Builder of an unbounded source, made by :meth:`SourceBuilder.stream`."""

    _kind = "stream"

    def build(self) -> "StreamSource":
        """The source as a :class:`StreamSource` (a ``ProcessorMetaSupplier`` with ``.name``)."""
        return StreamSource(self._name, self._meta_supplier(), self._kind)


class TimestampedStreamSourceBuilder(_SourceBuilderBase):
    """Builder of an unbounded source with event timestamps, made by :meth:`SourceBuilder.timestamped_stream`;
    ``fill_buffer_fn`` gets a :class:`TimestampedSourceBuffer`."""

    _kind = "timestamped_stream"

    def __init__(self, name: str, create_fn: Callable[[Any], Any]):
        super().__init__(name, create_fn)
        self._allowed_lag = 0
        self._idle_timeout = DEFAULT_IDLE_TIMEOUT_MS

    def allowed_lag(self, ms: int) -> "TimestampedStreamSourceBuilder":
        """How far (milliseconds, >= 0; default 0) the watermark trails the highest timestamp seen, i.e. how
        much out-of-order data may arrive without being behind the watermark (Jet's
        ``withNativeTimestamps(allowedLag)``). Returns the builder."""
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise DagValidationError(f"{self._owner()}: allowed_lag({ms!r}) must be an int >= 0 (milliseconds)")
        self._allowed_lag = ms
        return self

    def idle_timeout(self, ms: int) -> "TimestampedStreamSourceBuilder":
        """After ``ms`` milliseconds (default 60,000; ``<= 0``: never) without items the source marks itself idle:
        it emits the idle message ``Watermark(2**63 - 1)`` once, so downstream stops waiting for its watermark
        until it emits again (Jet's ``idleTimeout``). Returns the builder."""
        if isinstance(ms, bool) or not isinstance(ms, int):
            raise DagValidationError(f"{self._owner()}: idle_timeout({ms!r}) must be an int (milliseconds)")
        self._idle_timeout = ms
        return self

    def build(self) -> "StreamSource":
        """The source as a :class:`StreamSource` (a ``ProcessorMetaSupplier`` with ``.name``)."""
        return StreamSource(self._name, self._meta_supplier(TimestampedSourceP, allowed_lag=self._allowed_lag,
                                                            idle_timeout=self._idle_timeout), self._kind)


class SourceBuilder:
    """Entry points of the source builders (Jet's ``SourceBuilder``).

    >>> src = (SourceBuilder.batch("lines", lambda ctx: open("input.txt"))
    ...        .fill_buffer_fn(fill)            # adds up to 128 lines, closes at EOF
    ...        .destroy_fn(lambda f: f.close())
    ...        .build())                        # doctest: +SKIP
    >>> dag.new_vertex(src.name, src)           # doctest: +SKIP
    """

    @staticmethod
    def batch(name: str, create_fn: Callable[[Any], Any]) -> BatchSourceBuilder:
        """A bounded source: ``create_fn(context)`` makes the state, ``fill_buffer_fn`` fills the buffer and
        closes it at the end of the data."""
        return BatchSourceBuilder(name, create_fn)

    @staticmethod
    def stream(name: str, create_fn: Callable[[Any], Any]) -> StreamSourceBuilder:
        """An unbounded source: like :meth:`batch`, but ``fill_buffer_fn`` is called for as long as the job
        runs (the buffer is normally never closed); the job runs on the pipelined runtime."""
        return StreamSourceBuilder(name, create_fn)

    @staticmethod
    def timestamped_stream(name: str, create_fn: Callable[[Any], Any]) -> TimestampedStreamSourceBuilder:
        """An unbounded source whose ``fill_buffer_fn`` adds ``buf.add(item, timestamp_ms)``; watermarks follow
        the timestamps (module docstring); the job runs on the pipelined runtime."""
        return TimestampedStreamSourceBuilder(name, create_fn)


class _NamedMetaSupplier(ProcessorMetaSupplier):
    """A named ``ProcessorMetaSupplier`` that delegates to the one it wraps."""

    def __init__(self, name: str, inner: ProcessorMetaSupplier):
        self.name = name
        self._inner = inner

    def preferred_local_parallelism(self):
        return self._inner.preferred_local_parallelism()

    def init(self, context) -> None:
        self._inner.init(context)

    def get(self, member_indices):
        return self._inner.get(member_indices)

    def close(self, error) -> None:
        self._inner.close(error)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class BatchSource(_NamedMetaSupplier):
    """A built batch source: a ``ProcessorMetaSupplier`` with ``.name``."""


class StreamSource(_NamedMetaSupplier):
    """A built streaming source: a ``ProcessorMetaSupplier`` with ``.name`` and ``.kind`` (``"stream"`` or
    ``"timestamped_stream"``). A DAG with one runs on the pipelined runtime until cancelled. Unit-test its
    processors directly: ``(p,) = source.get([0])(0).get(1)`` and ``drive(p, ...)``."""

    is_stream_source = True

    def __init__(self, name: str, inner: ProcessorMetaSupplier, kind: str):
        super().__init__(name, inner)
        self.kind = kind


class BuiltSink(_NamedMetaSupplier):
    """A built sink: a ``ProcessorMetaSupplier`` with ``.name``."""


# ----------------------------------------------------------------------------------------------------------
# Sinks
# ----------------------------------------------------------------------------------------------------------


class SinkBuilder:
    """Builder of a custom sink (Jet's ``SinkBuilder``), made by :meth:`sink_builder`.

    Delivery is *at-least-once*: when Spark retries a task (its executor was lost, or a Python worker died),
    the retried attempt calls ``create_fn`` again and receives its whole partition again, so an item may
    reach ``receive_fn`` twice while the lost attempt's writes stay wherever they went. Make writes idempotent
    (keyed upserts) or de-duplicate downstream; ``write_file_p`` and the driver-side sinks publish exactly once
    per successful job. A user exception is never retried: it fails the job.

    >>> sink = (SinkBuilder.sink_builder("file-sink", lambda ctx: open(f"out.{ctx.global_processor_index}", "w"))
    ...         .receive_fn(lambda f, item: f.write(f"{item}\\n"))
    ...         .flush_fn(lambda f: f.flush())
    ...         .destroy_fn(lambda f: f.close())
    ...         .preferred_local_parallelism(2)
    ...         .build())
    >>> sink.name, sink.preferred_local_parallelism()
    ('file-sink', 2)
    """

    def __init__(self, name: str, create_fn: Callable[[Any], Any]):
        if not isinstance(name, str) or not name:
            raise DagValidationError(f"SinkBuilder: the sink name must be a non-empty str, got {name!r}")
        _require_callable(f"SinkBuilder '{name}'", "create_fn", create_fn)
        self._name = name
        self._create_fn = create_fn
        self._receive_fn: Callable | None = None
        self._flush_fn: Callable | None = None
        self._destroy_fn: Callable | None = None
        self._local_parallelism: int | None = 1

    @staticmethod
    def sink_builder(name: str, create_fn: Callable[[Any], Any]) -> "SinkBuilder":
        """Start a sink: ``create_fn(context)`` makes the state each processor writes through."""
        return SinkBuilder(name, create_fn)

    @property
    def name(self) -> str:
        """The sink's name, the vertex name to use."""
        return self._name

    def receive_fn(self, fn: Callable[[Any, Any], Any]) -> "SinkBuilder":
        """Required. ``fn(state, item)`` takes one item. Returns the builder."""
        _require_callable(self._owner(), "receive_fn", fn)
        self._receive_fn = fn
        return self

    def flush_fn(self, fn: Callable[[Any], Any]) -> "SinkBuilder":
        """Optional. ``fn(state)`` runs after every inbox batch; after it, the items should be stored.
        Returns the builder."""
        _require_callable(self._owner(), "flush_fn", fn)
        self._flush_fn = fn
        return self

    def destroy_fn(self, fn: Callable[[Any], Any]) -> "SinkBuilder":
        """Optional. ``fn(state)`` releases the state's resources when the processor closes (also after a
        failure). Returns the builder."""
        _require_callable(self._owner(), "destroy_fn", fn)
        self._destroy_fn = fn
        return self

    def preferred_local_parallelism(self, n: int | None) -> "SinkBuilder":
        """Processors per member (default 1); ``None`` (or Jet's -1) leaves it to the engine. Returns the builder."""
        if n == -1:
            n = None
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise DagValidationError(
                f"{self._owner()}: preferred_local_parallelism({n!r}) must be an int >= 1, "
                "or None for the engine's default"
            )
        self._local_parallelism = n
        return self

    def build(self) -> BuiltSink:
        """The sink as a :class:`BuiltSink` (a ``ProcessorMetaSupplier`` with ``.name``)."""
        if self._receive_fn is None:
            raise DagValidationError(f"{self._owner()}.build(): receive_fn must be set; call .receive_fn(fn)")
        factory = write_buffered_p(self._create_fn, self._receive_fn, self._flush_fn, self._destroy_fn)
        inner = ProcessorMetaSupplier.of(factory, preferred_local_parallelism=self._local_parallelism)
        return BuiltSink(self._name, inner)

    def _owner(self) -> str:
        return f"SinkBuilder.sink_builder('{self._name}')"
