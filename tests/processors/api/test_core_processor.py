from __future__ import annotations

import logging

import pytest

from dag.errors import ProcessorContractError
from processors import AbstractProcessor, Context, Inbox, Outbox, Processor, Watermark, traverse_items
from processors.api.processor import BatchTransform


class Bare(Processor):
    def __init__(self, x):  # no super().__init__(): still a valid processor
        self.x = x


def test_processor_defaults_as_jet():
    p = Bare(1)
    assert p.is_cooperative()
    assert p.init(Outbox([1]), Context()) is None
    assert p.try_process_watermark(Watermark(1)) is True
    assert p.try_process() and p.complete_edge(0) and p.complete()
    assert p.save_to_snapshot() and p.finish_snapshot_restore()
    assert p.close() is None
    with pytest.raises(NotImplementedError, match="Missing implementation in Bare"):
        p.process(0, Inbox([1]))
    with pytest.raises(ProcessorContractError, match="restore_from_snapshot"):
        p.restore_from_snapshot(Inbox([("k", "v")]))


class Recorder(AbstractProcessor):
    def __init__(self, accept=lambda item: True):
        super().__init__()
        self.seen: list = []
        self.accept = accept
        self.init_context = None

    def init_processor(self, context):
        self.init_context = context

    def try_process_any(self, ordinal, item):
        if not self.accept(item):
            return False
        self.seen.append((ordinal, item))
        return True


def test_abstract_processor_init_stores_outbox_context_logger_then_calls_hook():
    p = Recorder()
    box, ctx = Outbox([1]), Context(vertex_name="v")
    p.init(box, ctx)
    assert p.outbox is box and p.context is ctx and p.init_context is ctx
    assert isinstance(p.logger, logging.Logger) and p.logger.name == "jetspark.v#0"


@pytest.mark.parametrize("ordinal", [0, 1, 4, 5, 9])
def test_abstract_processor_process_routes_every_ordinal_to_try_process(ordinal):
    p = Recorder()
    p.init(Outbox([1]), Context())
    inbox = Inbox(["a", "b"])
    p.process(ordinal, inbox)
    assert p.seen == [(ordinal, "a"), (ordinal, "b")] and inbox.is_empty()


def test_abstract_processor_process_when_try_process_false_then_item_stays_in_inbox():
    p = Recorder(accept=lambda item: item != "b")
    p.init(Outbox([1]), Context())
    inbox = Inbox(["a", "b", "c"])
    p.process(0, inbox)
    assert p.seen == [(0, "a")] and list(inbox) == ["b", "c"]


def test_abstract_processor_ordinal_specific_method_wins():
    class P(AbstractProcessor):
        def __init__(self):
            self.log = []

        def try_process1(self, item):
            self.log.append(("one", item))
            return True

        def try_process_any(self, ordinal, item):
            self.log.append((ordinal, item))
            return True

    p = P()
    p.init(Outbox([]), Context())
    p.process(0, Inbox([1]))
    p.process(1, Inbox([2]))
    assert p.log == [(0, 1), ("one", 2)]


def test_abstract_processor_without_implementation_then_missing_implementation():
    class P(AbstractProcessor):
        pass

    p = P()
    p.init(Outbox([1]), Context())
    with pytest.raises(NotImplementedError, match="Missing implementation in .*P"):
        p.process(2, Inbox([1]))


def test_abstract_processor_without_super_init_still_works():
    class P(AbstractProcessor):
        def __init__(self):
            self.n = 0  # no super().__init__()

        def try_process0(self, item):
            return self.try_emit(item)

    p = P()
    box = Outbox([5])
    p.init(box, Context())
    p.process(0, Inbox([1, 2]))
    assert box.drain(0) == [1, 2]


def test_try_emit_to_ordinal_list_and_all():
    p = Recorder()
    box = Outbox([3, 3, 3])
    p.init(box, Context())
    assert p.try_emit("all") and p.try_emit("one", 1) and p.try_emit("two", [0, 2])
    assert box.drain(0) == ["all", "two"] and box.drain(1) == ["all", "one"] and box.drain(2) == ["all", "two"]


def test_emit_from_traverser_keeps_pending_item_across_refusals():
    p = Recorder()
    box = Outbox([2])
    p.init(box, Context())
    t = traverse_items(1, 2, 3, 4, 5)
    out = []
    calls = 0
    while True:
        box.reset()
        calls += 1
        done = p.emit_from_traverser(t)
        out += box.drain(0)
        if done:
            break
    assert out == [1, 2, 3, 4, 5] and calls == 3


def test_emit_from_traverser_accepts_iterables():
    p = Recorder()
    box = Outbox([10])
    p.init(box, Context())
    assert p.emit_from_traverser(iter([1, 2]), 0)
    assert box.drain(0) == [1, 2]


def test_flat_mapper_applies_fn_once_per_item_and_resumes():
    applied = []

    class P(AbstractProcessor):
        def __init__(self):
            super().__init__()
            self.fm = self.flat_mapper(lambda x: applied.append(x) or [x, x + 1, x + 2])

        def try_process0(self, item):
            return self.fm.try_process(item)

    p = P()
    box = Outbox([2])
    p.init(box, Context())
    inbox = Inbox([10, 20])
    out = []
    while not inbox.is_empty():
        box.reset()
        p.process(0, inbox)
        out += box.drain(0)
    assert out == [10, 11, 12, 20, 21, 22]
    assert applied == [10, 20]


def test_snapshot_helpers_and_restore_entries():
    class P(AbstractProcessor):
        def __init__(self):
            super().__init__()
            self.state = {}

        def restore_from_snapshot_entry(self, key, value):
            self.state[key] = value

    p = P()
    box = Outbox([1], snapshot_capacity=1)
    p.init(box, Context())
    assert p.try_emit_to_snapshot("a", 1)
    entries = []
    t = traverse_items(("b", 2), ("c", 3))
    while True:
        box.reset()
        done = p.emit_from_traverser_to_snapshot(t)
        entries += box.drain_snapshot()
        if done:
            break
    assert entries == [("a", 1), ("b", 2), ("c", 3)]
    p2 = P()
    p2.init(Outbox([1]), Context())
    p2.restore_from_snapshot(Inbox(entries))
    assert p2.state == {"a": 1, "b": 2, "c": 3}


def test_abstract_processor_forwards_watermark():
    p = Recorder()
    box = Outbox([1])
    p.init(box, Context())
    assert p.try_process_watermark(Watermark(3))
    assert box.drain(0) == [Watermark(3)]


class Twice(BatchTransform):
    def transform_batch(self, items):
        return [y for x in items for y in (x, x)]


def test_batch_transform_process_respects_bounded_outbox_and_keeps_head_item():
    p = Twice()
    box = Outbox([3])
    p.init(box, Context())
    inbox = Inbox([1, 2, 3])
    p.process(0, inbox)
    assert box.drain(0) == [1, 1, 2] and list(inbox) == [2, 3], "item 2 stays until all its outputs are accepted"
    box.reset()
    p.process(0, inbox)
    assert box.drain(0) == [2, 3, 3] and inbox.is_empty()


def test_batch_transform_subclass_is_tiny():
    class Inc(BatchTransform):
        def __init__(self, fn):
            self.fn = fn

        def transform_batch(self, items):
            return [r for r in map(self.fn, items) if r is not None]

    assert Inc(lambda x: x + 1 if x else None).transform_batch([0, 1, 2]) == [2, 3]


def _emit_all(box, emit) -> tuple[list, int]:
    out, calls = [], 0
    while True:
        box.reset()
        calls += 1
        done = emit()
        out += box.drain(0) + box.drain_snapshot()
        if done:
            return out, calls


def test_emit_from_traverser_when_same_list_given_after_refusal_then_resumes_instead_of_restarting():
    p = Recorder()
    box = Outbox([2])
    p.init(box, Context())
    items = [1, 2, 3, 4, 5]
    assert _emit_all(box, lambda: p.emit_from_traverser(items)) == ([1, 2, 3, 4, 5], 3)
    assert _emit_all(box, lambda: p.emit_from_traverser(items))[0] == items, "a finished list can be emitted again"


def test_emit_from_traverser_to_snapshot_when_same_list_given_after_refusal_then_resumes():
    p = Recorder()
    box = Outbox([1], snapshot_capacity=1)
    p.init(box, Context())
    entries = [("a", 1), ("b", 2), ("c", 3)]
    assert _emit_all(box, lambda: p.emit_from_traverser_to_snapshot(entries)) == (entries, 3)


class _SplitToList(AbstractProcessor):
    """flat_mapper whose function returns a list: emitted in slices through Outbox.offer_many."""

    def __init__(self):
        super().__init__()
        self._mapper = self.flat_mapper(lambda line: line.split())

    def try_process0(self, item):
        return self._mapper.try_process(item)


def test_flat_mapper_when_fn_returns_list_then_all_items_in_order_under_a_one_slot_outbox():
    from processors import verify_processor

    verify_processor(_SplitToList).input(["a b c", "", "d e"]).expect_output(["a", "b", "c", "d", "e"])


def test_abstract_processor_when_init_context_overridden_then_refused_naming_init_processor():
    with pytest.raises(ProcessorContractError, match=r"Gen defines init\(self, context\), but the runtime calls "
                                                     r"init\(outbox, context\); rename it to init_processor"):
        class Gen(AbstractProcessor):  # the manual's 8.7.4 in Java: protected void init(Context context)
            def init(self, context):
                self.n = context.global_processor_index


def test_processor_when_init_context_defined_then_refused_and_full_init_accepted():
    with pytest.raises(ProcessorContractError, match=r"define init\(self, outbox, context\)"):
        class Bad(Processor):
            def init(self, context):
                pass

    class Good(AbstractProcessor):
        def init(self, outbox, context):
            super().init(outbox, context)

    class Flexible(Processor):
        def init(self, *args):
            pass

    assert Good() is not None and Flexible() is not None
