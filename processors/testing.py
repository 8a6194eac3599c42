"""``verify_processor``: unit-test a processor the way Jet's ``TestSupport.verifyProcessor`` does.

Builder options (all return the builder): ``input(items)``, ``inputs(lists, priorities=None)`` (round-robin
across ordinals, lower priority first), ``disable_snapshots()``, ``disable_complete_call()``,
``disable_progress_assertion()``, ``disable_logging()``, ``cooperative_timeout(ms)``, ``output_checker(fn)``
(default ``==``, i.e. same order; ``SAME_ITEMS_ANY_ORDER`` for multiset equality), and
``local_processor_index``/``global_processor_index``/``local_parallelism``/``total_parallelism`` for the
processor's context. Terminal calls: ``expect_output(items)``, ``expect_outputs(lists)`` (one list per
outbound ordinal) and ``assert_output(ordinal_count, fn(mode, actual_lists))``; they return None and raise
``AssertionError`` on a mismatch, a progress failure or a broken Outbox rule (an ignored refusal, ``None``
emitted, an unknown ordinal: the runtime's ``ProcessorContractError`` message, as an ``AssertionError`` like
Jet's TestSupport's; likewise ``complete()`` returning True with an unfinished item, with Jet's wording before
the runtime's message); other contract breaks raise ``ProcessorContractError``, the runtime's own.

How it runs: each processor is driven by a :class:`~processors.execution.tasklet.ProcessorTasklet` with the
:data:`TEST_SUPPORT` policy, the state machine the staged and pipelined runtimes run, so every call, rule, error
message and note is theirs. The policy makes exactly the calls Jet's TestSupport makes, no others: no
``try_process()``, no ``complete_edge`` (the input ends with ``skip_to_complete()``), no
``snapshot_commit_prepare``; a ``BatchTransform`` goes through ``process()`` and its outbox, not the fast path;
each watermark item of the input goes to ``try_process_watermark`` as it is (not coalesced, the idle message
included). This module keeps only what TestSupport does differently from a runtime: it
chooses the next step (which input, when to snapshot and restore, when to call again with a full outbox or a
blocked one) and asserts progress and the cooperative timeout after each step (``_ModeRun``). Exceptions from
the processor carry the tasklet's note (processor, vertex ``testVertex``, index, method) and one naming the mode.

``verify_processor`` takes a supplier or, as Jet's ``verifyProcessor(Processor)``, a processor instance: that
one instance runs once, in the first mode only (snapshots off), since the other modes need fresh instances.

Procedure (Jet's): the meta-supplier is initialised, asked for member 0's supplier, which is initialised
and, at the end, closed. Then the processor runs in these modes, each with fresh processors from
``supplier.get(1)``, a 1-slot bucket per expected output ordinal and a 1-slot snapshot bucket:

1. ``snapshots disabled, inboxLimit=1``; 2. ``snapshots disabled, inboxLimit=1024`` (only with input);
3. if snapshots are enabled, inbox limit 1 and ``restoring every snapshot``, ``restoring every other
   snapshot`` and ``never restoring them``.

In each run: ``init``; a snapshot(+restore) before any input; the inbox is filled (when empty) with up to
the limit of consecutive items of one ordinal (a ``Watermark`` goes alone and is given to
``try_process_watermark``); after every ``process`` call the progress assertion (the inbox shrank or
something was emitted); when a bucket is full and input remains, ``process`` is called *again* with the
outbox still full, as a cooperative processor must cope with that; buckets are drained into the output;
whenever the inbox becomes empty, snapshot(+restore). A snapshot calls ``save_to_snapshot()`` until True,
collecting the entries (the outbox copies each as it accepts it); a restore closes the processor, makes a fresh one,
``init``s it, feeds all entries to ``restore_from_snapshot(inbox)`` and calls ``finish_snapshot_restore()``
until True. The complete phase calls ``complete()`` until True: each call must make progress, True while
an item is still unfinished fails, an unfinished item blocks the outbox for the next call (so every other
``complete()`` call meets a refusal), and a snapshot(+restore) follows each productive unfinished call.
Finally ``close()`` and the output check. ``try_process()`` is never called (as in Jet). Every mode gets deep
copies of the input items (where they can be copied), so modes stay independent.

Deviation from Jet: ``cooperative_timeout(ms)`` is the limit itself (Jet fails only at a constant 5000 ms);
the default is 5000 ms and 0 disables the check.

>>> from processors.api.processor import AbstractProcessor
>>> class Double(AbstractProcessor):
...     def try_process0(self, item):
...         return self.try_emit(item * 2)
>>> verify_processor(Double).input([1, 2]).expect_output([2, 4])
"""

from __future__ import annotations

import copy
import logging
import sys
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from processors.execution.barrier import SnapshotBarrier
from processors.api.context import Context
from processors.execution.lifecycle import open_processors
from processors.api.processor import Processor
from processors.api.suppliers import to_meta_supplier
from processors.execution.tasklet import PROGRESS, ProcessorTasklet
from processors.execution.tasklet_policy import Nullary, TaskletPolicy
from processors.api.watermark import Watermark

__all__ = ["verify_processor", "SAME_ITEMS_ANY_ORDER", "TestMode", "ProcessorVerifier", "TEST_SUPPORT"]

_log = logging.getLogger("jetspark.verify_processor")
_NEVER = sys.maxsize

TEST_SUPPORT = TaskletPolicy("verify_processor", Nullary.NEVER, strict_progress=True, coalesce_watermarks=False,
                             fast_path=False, commit_prepare=False)
"""The tasklet policy of ``verify_processor``: Jet's TestSupport calls, no others (module docstring)."""


def SAME_ITEMS_ANY_ORDER(expected: list, actual: list) -> bool:  # noqa: N802 - Jet's constant name
    """Output checker: the same items with the same multiplicities, in any order."""
    if len(expected) != len(actual):
        return False
    try:
        return Counter(expected) == Counter(actual)
    except TypeError:  # unhashable items
        remaining = list(actual)
        for item in expected:
            for i, candidate in enumerate(remaining):
                if candidate == item:
                    del remaining[i]
                    break
            else:
                return False
        return True


@dataclass(frozen=True)
class TestMode:
    """One run of ``verify_processor``; ``str()`` as Jet's ``TestMode``."""

    __test__ = False  # not a pytest test class

    snapshots: bool
    restore_interval: int
    inbox_limit: int

    def __str__(self) -> str:
        if not self.snapshots:
            return f"snapshots disabled, inboxLimit={self.inbox_limit}"
        if self.restore_interval == 1:
            return "snapshots enabled, restoring every snapshot"
        if self.restore_interval == 2:
            return "snapshots enabled, restoring every other snapshot"
        return f"snapshots enabled, never restoring them, inboxLimit={self.inbox_limit}"


def verify_processor(supplier: Any) -> "ProcessorVerifier":
    """Start verifying the processors of ``supplier`` (a zero-arg callable returning a Processor, a
    ``ProcessorSupplier``, a ``ProcessorMetaSupplier``, or one ``Processor`` instance); see the module docstring.
    """
    return ProcessorVerifier(supplier)


class _Once:
    """A zero-argument supplier of one given processor instance (Jet's ``singletonSupplier``)."""

    def __init__(self, processor: Processor):
        self.processor: Processor | None = processor

    def __call__(self) -> Processor:
        processor, self.processor = self.processor, None
        if processor is None:
            raise AssertionError(
                "verify_processor was given a processor instance, which runs once; to verify again (or in the "
                "snapshot modes) pass a supplier of new instances, e.g. the class or lambda: MyP()"
            )
        return processor


def _as_assertion(exc: BaseException, prefix: str = "") -> AssertionError:
    """The ``AssertionError`` ``verify_processor`` raises for a broken Outbox or tasklet rule (same message, after
    ``prefix``, and notes)."""
    error = AssertionError(prefix + str(exc))
    for note in getattr(exc, "__notes__", ()):
        error.add_note(note)
    return error


class ProcessorVerifier:
    """The builder returned by :func:`verify_processor`."""

    def __init__(self, supplier: Any):
        self._single = isinstance(supplier, Processor)  # one instance: the first mode only
        self._meta = to_meta_supplier(_Once(supplier) if self._single else supplier, vertex_name="testVertex")
        self._inputs: list[list] = []
        self._priorities: list[int] = []
        self._snapshots = not self._single
        self._call_complete = True
        self._assert_progress = True
        self._logging = True
        self._timeout_ms = 5000
        self._checker: Callable[[list, list], bool] = lambda expected, actual: expected == actual
        self._local_index = 0
        self._global_index = 0
        self._local_parallelism = 1
        self._total_parallelism = 1

    # ------------------------------------------------------------------ options
    def input(self, items: Sequence[Any]) -> "ProcessorVerifier":
        """The items of inbound ordinal 0 (the only input)."""
        return self.inputs([items])

    def inputs(self, lists: Sequence[Sequence[Any]], priorities: Sequence[int] | None = None) -> "ProcessorVerifier":
        """One list of items per inbound ordinal, fed round-robin; ``priorities`` (lower first) per ordinal."""
        lists = [list(items) for items in lists]
        priorities = [0] * len(lists) if priorities is None else list(priorities)
        if len(priorities) != len(lists):
            raise ValueError(
                f"Number of inputs must be equal to number of priorities: got {len(lists)} input list(s) and "
                f"{len(priorities)} priorities"
            )
        for ordinal, items in enumerate(lists):
            for position, item in enumerate(items):
                if item is None:
                    raise ValueError(f"input of ordinal {ordinal} has None at position {position}; None is not an item")
        self._inputs, self._priorities = lists, priorities
        return self

    def disable_snapshots(self) -> "ProcessorVerifier":
        """Run only the modes without snapshot/restore."""
        self._snapshots = False
        return self

    def disable_complete_call(self) -> "ProcessorVerifier":
        """Do not call ``complete()`` (e.g. for a streaming processor)."""
        self._call_complete = False
        return self

    def disable_progress_assertion(self) -> "ProcessorVerifier":
        """Do not require progress from every call."""
        self._assert_progress = False
        return self

    def disable_logging(self) -> "ProcessorVerifier":
        """Do not log the input and output items."""
        self._logging = False
        return self

    def cooperative_timeout(self, ms: int) -> "ProcessorVerifier":
        """Fail when a call of a cooperative processor takes ``ms`` milliseconds or more (0 disables)."""
        if ms < 0:
            raise ValueError(f"cooperative_timeout must be >= 0 ms, got {ms}")
        self._timeout_ms = ms
        return self

    def output_checker(self, fn: Callable[[list, list], bool]) -> "ProcessorVerifier":
        """``fn(expected, actual) -> bool`` checks each ordinal's output; e.g. ``SAME_ITEMS_ANY_ORDER``."""
        if not callable(fn):
            raise TypeError(f"output_checker(fn): fn must be a function (expected, actual) -> bool, got {fn!r}")
        self._checker = fn
        return self

    def local_processor_index(self, index: int) -> "ProcessorVerifier":
        """The processor context's ``local_processor_index`` (default 0)."""
        self._local_index = index
        return self

    def global_processor_index(self, index: int) -> "ProcessorVerifier":
        """The processor context's ``global_processor_index`` (default 0)."""
        self._global_index = index
        return self

    def local_parallelism(self, n: int) -> "ProcessorVerifier":
        """The processor context's ``local_parallelism`` (default 1)."""
        self._local_parallelism = n
        return self

    def total_parallelism(self, n: int) -> "ProcessorVerifier":
        """The processor context's ``total_parallelism`` (default 1)."""
        self._total_parallelism = n
        return self

    # ------------------------------------------------------------------ terminal calls
    def expect_output(self, items: Sequence[Any]) -> None:
        """Run every mode and check the output of ordinal 0 against ``items``."""
        self.expect_outputs([items])

    def expect_outputs(self, lists: Sequence[Sequence[Any]]) -> None:
        """Run every mode and check the output of each outbound ordinal against its list."""
        expected = [list(items) for items in lists]

        def check(mode: TestMode, actual: list[list]) -> None:
            for ordinal, (exp, act) in enumerate(zip(expected, actual)):
                if not self._checker(exp, act):
                    where = f" at outbound ordinal {ordinal}" if len(expected) > 1 else ""
                    raise AssertionError(
                        f'processor output in mode "{mode}" doesn\'t match{where}\n'
                        + _lines("expected", exp)
                        + "\n"
                        + _lines("actual", act)
                    )

        self.assert_output(len(expected), check)

    def assert_output(self, ordinal_count: int, assert_fn: Callable[[TestMode, list[list]], None]) -> None:
        """Run every mode with ``ordinal_count`` outbound ordinals and call ``assert_fn(mode, actual_lists)``."""
        total_input = sum(len(items) for items in self._inputs)
        modes = [TestMode(False, 0, 1)]
        if total_input and not self._single:
            modes.append(TestMode(False, 0, 1024))
        if self._snapshots and not self._single:
            modes += [TestMode(True, 1, 1), TestMode(True, 2, 1), TestMode(True, _NEVER, 1)]
        meta_context = Context(local_parallelism=self._local_parallelism, total_parallelism=self._total_parallelism)
        self._meta.init(meta_context)
        supplier = self._meta.get([0])(0)
        supplier.init(meta_context)
        error: BaseException | None = None
        try:
            for mode in modes:
                actual = _ModeRun(self, supplier, mode, ordinal_count).run()
                assert_fn(mode, actual)
        except BaseException as exc:
            error = exc
            raise
        finally:
            supplier.close(error)

    def _context(self) -> Context:
        return Context(
            global_processor_index=self._global_index,
            local_processor_index=self._local_index,
            local_parallelism=self._local_parallelism,
            total_parallelism=self._total_parallelism,
        )

    def _merged_input(self) -> list[tuple[int, Any]]:
        """(ordinal, item) in feeding order: ascending priority, round-robin among equal priorities."""
        merged: list[tuple[int, Any]] = []
        for priority in sorted(set(self._priorities)):
            ordinals = [o for o, p in enumerate(self._priorities) if p == priority]
            longest = max(len(self._inputs[o]) for o in ordinals)
            for i in range(longest):
                merged += [(o, self._inputs[o][i]) for o in ordinals if i < len(self._inputs[o])]
        return merged


def _lines(title: str, items: list) -> str:
    return f"{title}:" + "".join(f"\n  {item!r}" for item in items)


class _ModeRun:
    """One mode of ``verify_processor``: Jet's TestSupport schedule over a :class:`ProcessorTasklet`.

    What happens in each call (outbox reset, call name, bool and progress evaluation, snapshot draining, the
    restore steps, the unfinished-item rule, error notes, ``close``) is the tasklet's, the same code the staged
    and pipelined runtimes run. This class only decides *what the next step is*, as TestSupport does and the
    runtimes don't: which input goes into the inbox, a second ``process`` call with a full outbox, a snapshot
    (+restore into a fresh processor) at every empty inbox, blocking the outbox during ``complete()``, and its
    assertions (every step makes progress; a cooperative call stays under the timeout).
    """

    def __init__(self, verifier: ProcessorVerifier, supplier: Any, mode: TestMode, ordinal_count: int):
        self.v = verifier
        self.supplier = supplier
        self.mode = mode
        self.ordinal_count = ordinal_count
        self.actual: list[list] = [[] for _ in range(ordinal_count)]
        self.snapshot_count = 0
        self.tasklet: ProcessorTasklet | None = None
        self.completing = False

    # ------------------------------------------------------------------ the run
    def run(self) -> list[list]:
        failure: BaseException | None = None
        try:
            self._start(None)
            self._snapshot_and_restore(True)
            self._process_input()
            if self.v._call_complete:
                self._complete()
        except BaseException as exc:
            failure = exc
            tasklet = self.tasklet
            call = tasklet.outbox.call if tasklet is not None else ""
            if isinstance(exc, Exception):
                exc.add_note(f'verify_processor mode: "{self.mode}", processor call: {call or "-"}')
            if tasklet is not None and exc is tasklet.outbox.broken_rule:  # Jet's TestSupport: an AssertionError
                raise _as_assertion(exc) from exc
            if tasklet is not None and exc is tasklet.broken_rule:
                raise _as_assertion(exc, "outbox has unfinished items, but complete() claims to be done: ") from exc
            raise
        finally:
            if self.tasklet is not None:
                self.tasklet.close(failure)
        return self.actual

    def _start(self, restore: list[tuple] | None) -> None:
        """A fresh processor from ``supplier.get(1)`` in a new tasklet: ``init``, then the restore of the
        ``restore`` entries (when not None) and, in the complete phase, on to ``complete()``."""
        processor = open_processors(self.supplier, 1, "testVertex")[0]
        tasklet = self.tasklet = ProcessorTasklet(
            processor, self.v._context(), inbound_priorities={o: 0 for o in range(len(self.v._inputs))},
            outbound_capacities=[1] * self.ordinal_count, vertex_name="testVertex", snapshot_aligned=True,
            snapshot_capacity=1, policy=TEST_SUPPORT,
        )  # priority 0 for all: _merged_input already orders the input by priority
        if restore is not None:
            tasklet.restore_snapshot(restore)
        tasklet.step()  # init(outbox, context), not timed (as Jet)
        while tasklet.restoring:
            self._step()  # restore_from_snapshot(inbox) until empty, then finish_snapshot_restore() until True
            self._drain()
        if self.completing:
            tasklet.skip_to_complete()

    def _step(self, check_progress: bool = True) -> int:
        """One tasklet step, i.e. one processor call, under TestSupport's timeout and progress assertions.

        Not a second copy of the tasklet's no-progress rule: the progress is the tasklet's own result; only the
        rule differs (TestSupport fails the first call without progress, a runtime after ``NO_PROGRESS_LIMIT``)."""
        tasklet = self.tasklet
        start = time.perf_counter()
        result = tasklet.step()
        limit = self.v._timeout_ms
        if tasklet.cooperative and limit > 0:
            elapsed_ms = (time.perf_counter() - start) * 1000
            if elapsed_ms >= limit:
                raise AssertionError(
                    f"call to {tasklet.outbox.call} took {elapsed_ms:.1f}ms, it should be <{limit}ms for a "
                    "cooperative processor (make the processor non-cooperative or do less work per call)"
                )
        if check_progress and self.v._assert_progress and result != PROGRESS:
            method = tasklet.outbox.call.split("(", 1)[0]
            raise AssertionError(f'{method}() call without progress in mode "{self.mode}" ({tasklet.owner})')
        return result

    def _drain(self) -> None:
        for ordinal, items in self.tasklet.take_output():
            if self.v._logging:
                for item in items:
                    _log.info("output[%d]: %r", ordinal, item)
            self.actual[ordinal] += items

    # ------------------------------------------------------------------ input
    def _process_input(self) -> None:
        merged = self.v._merged_input()
        try:  # each mode gets its own copies, so a processor mutating its input cannot spoil the next mode
            merged = copy.deepcopy(merged)
        except Exception:
            pass
        limit = self.mode.inbox_limit
        position = 0
        while position < len(merged) or not self.tasklet.wants_input():
            tasklet = self.tasklet
            if tasklet.wants_input():  # fill the inbox: up to `limit` items of one ordinal, a watermark alone
                ordinal, first = merged[position]
                items = [first]
                position += 1
                if not isinstance(first, Watermark):
                    while (
                        position < len(merged)
                        and len(items) < limit
                        and merged[position][0] == ordinal
                        and not isinstance(merged[position][1], Watermark)
                    ):
                        items.append(merged[position][1])
                        position += 1
                    tasklet.add_batch(ordinal, items)
                else:
                    tasklet.add_watermark(ordinal, first.timestamp)
                if self.v._logging:
                    for item in items:
                        _log.info("input[%d]: %r", ordinal, item)
            self._step()  # process(ordinal, inbox) or try_process_watermark(watermark)
            if not tasklet.wants_input() and any(tasklet.outbox.is_full(o) for o in range(self.ordinal_count)):
                self._step(check_progress=False)  # called again with the outbox still full
            self._drain()
            if tasklet.wants_input():
                self._snapshot_and_restore(True)

    # ------------------------------------------------------------------ complete
    def _complete(self) -> None:
        self.completing = True
        self.tasklet.skip_to_complete()
        while True:
            progress = self._step() == PROGRESS  # complete(); returning True with an unfinished item fails
            tasklet = self.tasklet
            done = tasklet.is_done
            self._drain()
            if tasklet.outbox.has_unfinished_item():
                tasklet.outbox.block()  # the next call meets a refusal unless it re-offers the pending item
            else:
                tasklet.outbox.unblock()
                self._snapshot_and_restore(progress and not done)
            if done:
                return

    # ------------------------------------------------------------------ snapshots
    def _snapshot_and_restore(self, wanted: bool) -> None:
        """``save_to_snapshot()`` until True; every ``restore_interval``-th time, restore into a fresh processor."""
        if not self.mode.snapshots or not wanted:
            return
        self.snapshot_count += 1
        restore = self.snapshot_count % self.mode.restore_interval == 0
        self.tasklet.snapshots.save_now(SnapshotBarrier(self.snapshot_count))
        saved: list = []
        while not saved:
            self._step()  # save_to_snapshot(): the tasklet collects the entries as the outbox accepts them
            self._drain()
            saved = self.tasklet.take_snapshots()
        if restore:
            self.tasklet.close(None)
            self.tasklet = None
            self._start(saved[0][1])
