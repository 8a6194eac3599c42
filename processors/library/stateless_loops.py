"""Generated tight loops: a chain of built-in stateless processors run item by item into a by-key accumulation.

When a fused chain ends in ``map_p`` / ``filter_p`` / ``flat_map_p`` (or their ``*_using_context_p`` variants)
and its sender accumulates by key (the pre-aggregated or fused-accumulate edge into ``accumulate_by_key_p`` /
``aggregate_by_key_p``, ``counting()`` included), the driver would run each processor on whole batches,
build lists of its output (a list of a thousand words per line batch) and then count them. A
:class:`FusedLoop` instead compiles the chain into one Python function of nested ``for`` loops, the same code a
person would write by hand::

    for batch in batches:
        for x0 in batch:
            y0 = f0(x0)                  # flat_map_p(doc_lines)
            ...checks of y0...
            for x1 in y0:
                y1 = f1(x1)              # flat_map_p(tokenize)
                ...checks of y1...
                count(acc, y1)           # counting() keyed by whole_item: the C helper behind Counter

What stays as in the processor-by-processor path (``processors/execution/staged.py``):

- **Results and order**: each processor's function sees the same items in the same order, and the
  accumulation sees the chain's output in the same order (depth first keeps per-edge order); only the
  interleaving of calls *between* vertices differs, which stateless functions cannot observe.
- **Jet's checks**: a ``flat_map`` result that is not a list goes through the processor's own flattening
  (``Traverser`` semantics, ``None`` / non-iterable results rejected with the same ``ProcessorContractError``);
  a list holding ``None`` is rejected (for a last ``flat_map`` counted whole, by one ``None in acc`` test at the
  end instead of a scan per list); ``map_p`` drops ``None`` results.
- **Metrics**: items received and emitted per vertex, from counters in the loop (``len`` of each list).
- **Lifecycle**: the runtime still creates, ``init``-s, completes and closes every processor
  (``dag/runtime/staged/task.py``); the loop only replaces the per-batch ``transform_chunks`` calls.
- **Errors**: an exception from a user function is attributed to its vertex (:meth:`FusedLoop.level_of`).

Only the exact built-in classes qualify (a subclass may override anything). ``EngineConfig.tight_loops``
switches the rewrite; ``explain()`` shows it on the stage.
"""

from __future__ import annotations

from collections import _count_elements  # type: ignore[attr-defined]  # C helper behind Counter.update
from collections.abc import Iterable
from typing import Any

from processors.api.functions import whole_item
from processors.library.stateless import (
    FilterP,
    FilterUsingContextP,
    FlatMapP,
    FlatMapUsingContextP,
    MapP,
    MapUsingContextP,
    _checked,
    _flat,
    _flatten,
)

__all__ = ["FusedLoop", "loop_kind"]

_KINDS: dict[type, tuple[str, bool]] = {
    MapP: ("map", False), FilterP: ("filter", False), FlatMapP: ("flat_map", False),
    MapUsingContextP: ("map", True), FilterUsingContextP: ("filter", True), FlatMapUsingContextP: ("flat_map", True),
}
_MISSING = object()


def loop_kind(processor_class: Any) -> str | None:
    """``"map"``, ``"filter"`` or ``"flat_map"`` for the exact built-in stateless classes, else None."""
    kind = _KINDS.get(processor_class) if isinstance(processor_class, type) else None
    return kind[0] if kind else None


class FusedLoop:
    """One generated function running ``processors`` (initialised built-ins, in chain order) into ``acc``.

    ``operation`` is the sender's aggregate operation and ``key_fn`` its key function (the pre-aggregation of
    the edge the chain sends on).

    >>> from processors.aggregate.aggregations import counting
    >>> from processors.library.stateless import flat_map_p, map_p
    >>> loop = FusedLoop([map_p(str.lower)(), flat_map_p(str.split)()], counting(), whole_item)
    >>> acc = {}; loop.run([["To be", "or NOT to be"]], acc)
    [2, 2, 6]
    >>> acc
    {'to': 2, 'be': 2, 'or': 1, 'not': 1}
    """

    def __init__(self, processors: list[Any], operation: Any, key_fn: Any):
        self.processors = processors
        self.levels: dict[int, int] = {}   # source line -> index of the processor whose function it calls
        namespace: dict[str, Any] = {"_count": _count_elements, "_MISSING": _MISSING, "_key": key_fn,
                                     "_create": operation.create_fn, "_accumulate": operation.accumulate_fns[0]}
        counting = operation.fast_path == ("counting",)
        self.sink = ("count" if key_fn is whole_item else "count_key") if counting else "accumulate"
        # a last flat_map counted whole: its lists go to the C counting helper, None items are found by run()
        self.counts_lists = self.sink == "count" and _KINDS[type(processors[-1])][0] == "flat_map"
        emitted = [f"e{i}" for i in range(len(processors))]
        lines = ["def _loop(batches, acc):", "    get = acc.get", f"    r = {' = '.join(emitted)} = 0",
                 "    for batch in batches:", "        r += len(batch)", "        for x0 in batch:"]
        for i, processor in enumerate(processors):
            kind, with_ctx = _KINDS[type(processor)]
            namespace[f"f{i}"], namespace[f"p{i}"] = _fn_of(processor), processor
            if with_ctx:
                namespace[f"c{i}"] = processor._ctx
            start = len(lines)
            self._level(lines, i, kind, with_ctx, namespace)
            self.levels.update(dict.fromkeys(range(start + 1, len(lines) + 1), i))  # line numbers are 1-based
        n = len(processors)
        if self.counts_lists:
            lines.append(f"{' ' * (8 + 4 * n)}_count(acc, y{n - 1})")
        else:
            self._sink(lines, " " * (12 + 4 * n), f"x{n}")
        lines.append(f"    return [r, {', '.join(emitted)}]")
        self.source = "\n".join(lines) + "\n"
        exec(compile(self.source, f"<jetspark fused loop of {len(processors)} processors>", "exec"), namespace)
        self._loop = namespace["_loop"]

    def _level(self, lines: list[str], i: int, kind: str, with_ctx: bool, namespace: dict) -> None:
        pad = " " * (12 + 4 * i)
        call = f"f{i}(c{i}, x{i})" if with_ctx else f"f{i}(x{i})"
        if kind == "flat_map":
            namespace[f"aslist{i}"] = _as_list_fn(namespace[f"p{i}"])
            lines += [f"{pad}y{i} = {call}", f"{pad}if type(y{i}) is not list: y{i} = aslist{i}(y{i})"]
            if i == len(self.processors) - 1 and self.counts_lists:
                lines.append(f"{pad}e{i} += len(y{i})")
                return
            namespace[f"check{i}"] = _check_fn(namespace[f"p{i}"])
            lines += [f"{pad}elif None in y{i}: check{i}(y{i})", f"{pad}e{i} += len(y{i})", f"{pad}for x{i + 1} in y{i}:"]
        elif kind == "map":
            lines += [f"{pad}x{i + 1} = {call}", f"{pad}if x{i + 1} is not None:", f"{pad}    e{i} += 1"]
        else:
            lines += [f"{pad}if {call}:", f"{pad}    e{i} += 1", f"{pad}    x{i + 1} = x{i}"]

    def _sink(self, lines: list[str], pad: str, x: str) -> None:
        if self.sink == "count":
            lines.append(f"{pad}acc[{x}] = get({x}, 0) + 1")
        elif self.sink == "count_key":
            lines += [f"{pad}k = _key({x})", f"{pad}acc[k] = get(k, 0) + 1"]
        else:
            lines += [f"{pad}k = _key({x})", f"{pad}a = get(k, _MISSING)",
                      f"{pad}acc[k] = _accumulate(_create() if a is _MISSING else a, {x})"]

    def run(self, batches: Iterable[list], acc: dict) -> list[int]:
        """Run the chain over ``batches`` into ``acc``; ``[received by the first processor, emitted by each]``."""
        counts = self._loop(batches, acc)
        if self.counts_lists and None in acc:  # the last flat_map emitted None
            last = self.processors[-1]
            _checked(last, last.fn, [None])
        return counts

    def level_of(self, exc: BaseException) -> int | None:
        """The index of the processor whose function raised ``exc`` inside the loop (None: raised elsewhere,
        e.g. by the key function or the aggregate operation)."""
        tb = exc.__traceback__
        found = None
        while tb is not None:
            if tb.tb_frame.f_code is self._loop.__code__:
                found = self.levels.get(tb.tb_lineno)
            tb = tb.tb_next
        return found


def _fn_of(processor: Any) -> Any:
    return processor.pred if type(processor) is FilterP else processor.fn


def _as_list_fn(processor: Any) -> Any:
    """A non-list ``flat_map`` result through the processor's own flattening (Traversers, Jet's checks)."""
    fn = processor.fn
    return lambda result: _flat(_flatten(processor, fn, (result,)))


def _check_fn(processor: Any) -> Any:
    fn = processor.fn
    return lambda result: _checked(processor, fn, result)
