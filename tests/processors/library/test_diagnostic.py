"""Diagnostic processors: write_logger_p, peek_input_p, peek_output_p, peek_snapshot_p."""

from __future__ import annotations

import logging

import pytest

from dag.errors import DagValidationError
from processors.library.aggregating import sort_p
from processors.api.context import Context
from processors.library.diagnostic import PeekWrappedP, peek_input_p, peek_output_p, peek_snapshot_p, write_logger_p
from processors.execution.staged import drive
from processors.api.outbox import Outbox
from processors.api.processor import AbstractProcessor
from processors.library.stateless import filter_p, map_p
from processors.api.suppliers import ProcessorMetaSupplier, ProcessorSupplier
from processors.testing import verify_processor
from processors.api.watermark import Watermark

LOGGER = "jetspark.test.diagnostic"


def run(processor, inbound, n_out=1):
    context = Context(vertex_name="v", logger=logging.getLogger(LOGGER))
    out = [[] for _ in range(n_out)]
    for o, batch in drive(processor, context, inbound=inbound, inbound_priorities={o: 0 for o, _ in inbound},
                          outbound_capacities=[2] * n_out):
        out[o].extend(batch)
    return out


def messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def first_processor(supplier):
    pms = supplier if isinstance(supplier, ProcessorMetaSupplier) else ProcessorMetaSupplier.of(supplier)
    pms.init(Context())
    ps = pms.get([0])(0)
    ps.init(Context())
    return ps.get(1)[0]


def test_write_logger_p_when_items_then_each_logged_at_info_and_nothing_emitted(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    supplier = write_logger_p(lambda x: f"<{x}>")
    assert supplier.preferred_local_parallelism() == 1
    processor = first_processor(supplier)
    assert not processor.is_cooperative()
    assert run(processor, [(0, [1, 2]), (0, [3])]) == [[]]
    assert messages(caplog) == ["<1>", "<2>", "<3>"]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == LOGGER)


def test_write_logger_p_when_verified_then_emits_nothing():
    verify_processor(write_logger_p()).disable_logging().input(["a"]).expect_output([])


def test_peek_input_p_when_callable_then_logs_input_and_keeps_behaviour(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    supplier = peek_input_p(map_p(lambda x: x * 2), should_log_fn=lambda x: x != 2)
    assert callable(supplier) and not isinstance(supplier, (ProcessorSupplier, ProcessorMetaSupplier))
    processor = supplier()
    assert isinstance(processor, PeekWrappedP)
    assert run(processor, [(0, [1, 2, 3])]) == [[2, 4, 6]]
    assert messages(caplog) == ["Input from ordinal 0: 1", "Input from ordinal 0: 3"]
    verify_processor(supplier).input([5]).expect_output([10])


def test_peek_output_p_when_several_ordinals_then_logged_per_ordinal(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    processor = peek_output_p(filter_p(lambda x: x > 1), to_string_fn=lambda x: f"#{x}")()
    assert run(processor, [(0, [1, 2, 3])], n_out=2) == [[2, 3], [2, 3]]
    assert messages(caplog) == ["Output to ordinal 0: #2", "Output to ordinal 1: #2",
                                "Output to ordinal 0: #3", "Output to ordinal 1: #3"]


class Splitter(AbstractProcessor):
    """flat_mapper with a list result: emitted through Outbox.offer_many."""

    def __init__(self):
        super().__init__()
        self._mapper = self.flat_mapper(str.split)

    def try_process0(self, item):
        return self._mapper.try_process(item)


def test_peek_output_p_when_flat_mapper_emits_a_list_then_every_item_logged(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    processor = peek_output_p(Splitter)()
    assert run(processor, [(0, ["a b", "c"])]) == [["a", "b", "c"]]
    assert messages(caplog) == ["Output to ordinal 0: a", "Output to ordinal 0: b", "Output to ordinal 0: c"]


class ListEmitter(AbstractProcessor):
    def try_process0(self, item):
        return self.emit_from_traverser([item, item.upper()])


def test_peek_output_p_when_emit_from_traverser_emits_a_list_then_every_item_logged(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    processor = peek_output_p(ListEmitter)()
    assert run(processor, [(0, ["a", "b"])]) == [["a", "A", "b", "B"]]
    assert messages(caplog) == [f"Output to ordinal 0: {x}" for x in ("a", "A", "b", "B")]


def test_peek_output_p_when_not_logging_and_emit_from_traverser_emits_a_list_then_items_pass_through():
    processor = peek_output_p(ListEmitter, should_log_fn=lambda x: False)()
    assert run(processor, [(0, ["a", "b"])]) == [["a", "A", "b", "B"]]


class Emitter(AbstractProcessor):
    def try_process0(self, item):
        return self.try_emit(item, 1)


def test_peek_output_p_when_processor_supplier_then_same_kind_and_watermarks_logged(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    supplier = peek_output_p(ProcessorSupplier.of(Emitter), should_log_fn=lambda x: False)
    assert isinstance(supplier, ProcessorSupplier)
    supplier.init(Context())
    processor = supplier.get(1)[0]
    processor.init(Outbox([1, 1]), Context(logger=logging.getLogger(LOGGER)))
    assert processor.try_process_watermark(Watermark(7))
    assert messages(caplog) == [f"Output to ordinal 0: {Watermark(7)}", f"Output to ordinal 1: {Watermark(7)}"]


def test_peek_input_p_when_meta_supplier_then_same_kind_and_stateful_processor_logged(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    supplier = peek_input_p(ProcessorMetaSupplier.of(sort_p(), 3))
    assert isinstance(supplier, ProcessorMetaSupplier)
    assert supplier.preferred_local_parallelism() == 3
    assert run(first_processor(supplier), [(0, [3, 1]), (0, [2])]) == [[1, 2, 3]]
    assert messages(caplog) == ["Input from ordinal 0: 3", "Input from ordinal 0: 1", "Input from ordinal 0: 2"]


def test_peek_input_p_when_watermark_then_logged_once(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    processor = peek_input_p(Emitter)()
    outbox = Outbox([1, 1])
    processor.init(outbox, Context(logger=logging.getLogger(LOGGER)))
    outbox.offer("filler", 0)
    assert not processor.try_process_watermark(Watermark(5))  # bucket 0 full: the watermark waits
    outbox.drain(0)
    outbox.reset()
    assert processor.try_process_watermark(Watermark(5))
    assert messages(caplog) == [f"Input: {Watermark(5)}"]


def test_peek_when_not_a_supplier_then_rejected():
    with pytest.raises(DagValidationError, match="expected a processor supplier"):
        peek_input_p(42)
    with pytest.raises(DagValidationError, match="expected a processor supplier"):
        peek_output_p(Emitter())


class RunningTotal(AbstractProcessor):
    """Sums its input, saves the total to the snapshot, emits it in complete()."""

    def __init__(self):
        super().__init__()
        self.total = 0

    def try_process0(self, item):
        self.total += item
        return True

    def save_to_snapshot(self):
        return self.try_emit_to_snapshot("total", self.total)

    def restore_from_snapshot_entry(self, key, value):
        self.total = value

    def complete(self):
        return self.try_emit(self.total)


def test_peek_snapshot_p_when_entries_saved_then_each_logged_and_behaviour_kept(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    supplier = peek_snapshot_p(RunningTotal, to_string_fn=lambda e: f"{e[0]}={e[1]}",
                               should_log_fn=lambda e: e[1] != 0)
    processor = supplier()
    assert isinstance(processor, PeekWrappedP)
    outbox = Outbox([4], snapshot_capacity=4)
    processor.init(outbox, Context(vertex_name="v", logger=logging.getLogger(LOGGER)))
    assert processor.save_to_snapshot()  # total 0: not logged (should_log_fn)
    processor.wrapped.total = 5
    assert processor.save_to_snapshot()
    assert outbox.drain_snapshot() == [("total", 0), ("total", 5)]
    assert messages(caplog) == ["Output to snapshot: total=5"]
    verify_processor(supplier).input([1, 2, 3]).expect_output([6])  # snapshots and restores work through it


def test_peek_snapshot_p_when_snapshot_refused_then_nothing_logged(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    processor = peek_snapshot_p(RunningTotal)()
    outbox = Outbox([4], snapshot_capacity=1)
    processor.init(outbox, Context(vertex_name="v", logger=logging.getLogger(LOGGER)))
    assert processor.save_to_snapshot() and not processor.save_to_snapshot()  # the second entry does not fit
    assert messages(caplog) == ["Output to snapshot: ('total', 0)"]
