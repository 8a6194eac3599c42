from __future__ import annotations

import logging
import time

import pytest

from dag.errors import ProcessorContractError
from processors import AbstractProcessor, Context, Processor
from processors.execution import staged
from processors.execution.lifecycle import ProcessorMetrics
from processors.execution.staged import IDLE_MAX_SLEEP, IDLE_MIN_SLEEP, drive
from processors.execution.tasklet import NO_PROGRESS_LIMIT
from processors.api.processor import BatchTransform
from tests.support.processors import LifecycleLog


class Journal(LifecycleLog):
    """Records every lifecycle call; emits each item (tagged with its ordinal) to all outbound edges."""

    def __init__(self, log=None, complete_calls=1):
        super().__init__(log)
        self.complete_left = complete_calls

    def init_processor(self, context):
        self.log.append("init")

    def try_process_any(self, ordinal, item):
        if not self.try_emit((ordinal, item)):
            return False
        self.log.append(("item", ordinal, item))
        return True

    def complete(self):
        super().complete()
        self.complete_left -= 1
        return self.complete_left <= 0

    def close(self):
        self.log.append("close")


def run(processor, inbound, priorities, capacities=(1024,), metrics=None):
    return list(
        drive(
            processor,
            Context(vertex_name="v"),
            inbound=inbound,
            inbound_priorities=priorities,
            outbound_capacities=list(capacities),
            metrics=metrics,
        )
    )


def flat(batches, ordinal=0):
    return [x for o, b in batches if o == ordinal for x in b]


def test_driver_lifecycle_order_init_process_try_process_complete_edge_complete_close():
    p = Journal()
    out = run(p, [(0, ["a", "b"])], {0: 0})
    assert p.log == [
        "init", ("item", 0, "a"), ("item", 0, "b"), "try_process", ("complete_edge", 0), "complete", "close",
    ]
    assert flat(out) == [(0, "a"), (0, "b")]


def test_driver_priority_groups_drained_and_completed_before_next_group():
    p = Journal()
    inbound = [(1, ["x1"]), (2, ["y1"]), (1, ["x2"]), (0, ["z1"])]
    run(p, inbound, {0: 5, 1: 0, 2: 0, 3: 0})
    events = [e for e in p.log if e not in ("try_process",)]
    assert events == [
        "init",
        ("item", 1, "x1"),
        ("item", 2, "y1"),
        ("item", 1, "x2"),
        ("complete_edge", 1),
        ("complete_edge", 2),
        ("complete_edge", 3),  # got no items, still completed with its group
        ("item", 0, "z1"),
        ("complete_edge", 0),
        "complete",
        "close",
    ]


def test_driver_when_groups_get_no_items_then_all_edges_still_completed_in_priority_order():
    p = Journal()
    run(p, [], {0: 2, 1: 1, 2: 1})
    assert p.log == ["init", ("complete_edge", 1), ("complete_edge", 2), ("complete_edge", 0), "complete", "close"]


def test_driver_when_priority_decreases_then_value_error_and_close_called():
    p = Journal()
    with pytest.raises(ValueError, match="non-decreasing priority"):
        run(p, [(0, [1]), (1, [2])], {0: 1, 1: 0})
    assert p.log[-1] == "close"


def test_driver_when_unknown_inbound_ordinal_then_value_error():
    with pytest.raises(ValueError, match="ordinal 7"):
        run(Journal(), [(7, [1])], {0: 0})


def test_driver_try_process_called_after_each_batch():
    p = Journal()
    run(p, [(0, [1]), (0, [2, 3]), (0, [])], {0: 0})
    assert p.log.count("try_process") == 2


def test_driver_complete_called_until_true():
    p = Journal(complete_calls=3)
    run(p, [], {})
    assert p.log == ["init", "complete", "complete", "complete", "close"]


def test_driver_respects_bucket_capacity_and_loses_nothing():
    p = Journal()
    out = run(p, [(0, list(range(10)))], {0: 0}, capacities=(3, 4))
    assert all(len(b) <= 3 for o, b in out if o == 0) and all(len(b) <= 4 for o, b in out if o == 1)
    assert flat(out, 0) == [(0, i) for i in range(10)] == flat(out, 1)


def test_driver_metrics_counts_received_and_emitted_per_ordinal():
    metrics = ProcessorMetrics()
    run(Journal(), [(0, [1, 2, 3]), (1, [4])], {0: 0, 1: 0, 2: 1}, capacities=(2, 2), metrics=metrics)
    assert metrics.received == {0: 3, 1: 1, 2: 0}
    assert metrics.emitted == {0: 4, 1: 4}


def test_driver_when_process_fails_then_close_still_called_and_error_names_processor():
    class Boom(Journal):
        def try_process0(self, item):
            raise KeyError("bad item")

    p = Boom()
    with pytest.raises(KeyError) as err:
        run(p, [(0, [1])], {0: 0})
    assert p.log[-1] == "close"
    assert any("Boom" in n and "vertex 'v'" in n and "process(0, inbox)" in n for n in err.value.__notes__)


def test_driver_when_init_fails_then_close_still_called():
    log = []

    class P(Journal):
        def init_processor(self, context):
            raise RuntimeError("no init")

    with pytest.raises(RuntimeError, match="no init"):
        run(P(log), [(0, [1])], {0: 0})
    assert log == ["close"]


def test_driver_when_close_fails_after_failure_then_original_error_raised_and_close_error_logged(caplog):
    class P(Journal):
        def complete(self):
            raise ValueError("original")

        def close(self):
            raise OSError("close failed")

    with caplog.at_level(logging.WARNING, logger="jetspark.driver"):
        with pytest.raises(ValueError, match="original"):
            run(P(), [], {})
    assert "close failed" in caplog.text


def test_driver_when_only_close_fails_then_its_error_raised():
    class P(Journal):
        def close(self):
            raise OSError("close failed")

    with pytest.raises(OSError, match="close failed"):
        run(P(), [], {})


def test_driver_when_consumer_stops_early_then_close_called():
    p = Journal()
    gen = drive(p, Context(), inbound=[(0, list(range(10)))], inbound_priorities={0: 0}, outbound_capacities=[1])
    next(gen)
    gen.close()
    assert p.log[-1] == "close"


def test_driver_when_no_progress_then_contract_error_instead_of_hanging():
    class Stuck(Processor):
        def process(self, ordinal, inbox):
            pass  # never removes anything

    with pytest.raises(ProcessorContractError, match=rf"Stuck.*no progress in {NO_PROGRESS_LIMIT} .*process"):
        run(Stuck(), [(0, [1])], {0: 0})


def test_driver_when_complete_never_done_without_output_then_contract_error():
    class Forever(Processor):
        def complete(self):
            return False

    with pytest.raises(ProcessorContractError, match=r"Forever.*complete\(\)"):
        run(Forever(), [], {})


class Waiting(Processor):
    """Makes no progress for ``idle_calls`` calls of ``complete()`` (or of ``process``), then finishes."""

    def __init__(self, idle_calls, cooperative=False):
        self.idle_calls = idle_calls
        self.cooperative = cooperative
        self.calls = 0

    def is_cooperative(self):
        return self.cooperative

    def process(self, ordinal, inbox):
        self.calls += 1
        if self.calls > self.idle_calls:
            inbox.clear()

    def complete(self):
        self.calls += 1
        return self.calls > self.idle_calls


@pytest.fixture
def sleeps(monkeypatch):
    """The back-off sleeps the driver asks for (recorded instead of slept)."""
    recorded = []
    monkeypatch.setattr(staged, "_sleep", recorded.append)
    return recorded


def test_driver_back_off_sleeps_for_real_by_default():
    assert staged._sleep is time.sleep


@pytest.mark.parametrize("inbound, priorities", [([], {}), ([(0, [1])], {0: 0})], ids=["complete", "process"])
def test_driver_when_non_cooperative_processor_waits_2000_calls_then_backs_off_and_completes(
        sleeps, inbound, priorities):
    processor = Waiting(idle_calls=2000)
    assert run(processor, inbound, priorities) == []
    assert len(sleeps) == 2000
    assert sleeps[0] == IDLE_MIN_SLEEP and max(sleeps) == IDLE_MAX_SLEEP == 0.01
    assert sleeps == sorted(sleeps)  # grows, then stays at the cap


def test_driver_when_non_cooperative_processor_progresses_then_back_off_starts_again(sleeps):
    class Bursty(Processor):
        def __init__(self):
            self.calls = 0

        def is_cooperative(self):
            return False

        def init(self, outbox, context):
            self.outbox = outbox

        def complete(self):
            self.calls += 1
            if self.calls == 30:
                return self.outbox.offer("burst") and False
            return self.calls > 60

    assert flat(run(Bursty(), [], {})) == ["burst"]
    assert len(sleeps) == 59 and sleeps[29] == IDLE_MIN_SLEEP and sleeps[28] == IDLE_MAX_SLEEP


def test_driver_when_non_cooperative_processor_waits_then_real_back_off_stays_short():
    started = time.perf_counter()
    run(Waiting(idle_calls=20), [], {})
    assert time.perf_counter() - started < 20 * IDLE_MAX_SLEEP + 1.0


def test_driver_when_cooperative_processor_waits_then_still_contract_error_without_sleeping(sleeps):
    with pytest.raises(ProcessorContractError, match=rf"Waiting.*no progress in {NO_PROGRESS_LIMIT} .*complete"):
        run(Waiting(idle_calls=2000, cooperative=True), [], {})
    assert sleeps == []


def test_driver_when_boolean_method_returns_none_then_contract_error():
    class Forgot(Processor):
        def complete(self):
            pass

    with pytest.raises(ProcessorContractError, match=r"complete\(\) returned None"):
        run(Forgot(), [], {})


def test_driver_when_try_process_n_returns_none_then_contract_error():
    class Forgot(AbstractProcessor):
        def try_process0(self, item):
            self.try_emit(item)

    with pytest.raises(ProcessorContractError, match=r"try_process0\(item\) returned None"):
        run(Forgot(), [(0, [1])], {0: 0})


def test_driver_when_processor_emits_none_then_contract_error_names_method():
    class EmitsNone(AbstractProcessor):
        def try_process0(self, item):
            return self.try_emit(None)

    with pytest.raises(ProcessorContractError, match=r"EmitsNone of vertex 'v' #0 in process\(0, inbox\).*None"):
        run(EmitsNone(), [(0, [1])], {0: 0})


def test_driver_when_processor_ignores_refused_offer_then_contract_error():
    class Ignores(Processor):
        def init(self, outbox, context):
            self.outbox = outbox

        def process(self, ordinal, inbox):
            for item in inbox.take_all():
                self.outbox.offer(item)  # ignores False

    with pytest.raises(ProcessorContractError, match="called again after it returned False"):
        run(Ignores(), [(0, [1, 2, 3, 4])], {0: 0}, capacities=(2,))


def test_driver_when_refused_item_never_reoffered_then_contract_error_instead_of_loss():
    class Drops(Processor):
        def init(self, outbox, context):
            self.outbox = outbox

        def process(self, ordinal, inbox):
            for item in inbox.take_all():
                if not self.outbox.offer(item):
                    return  # drops the refused item and the rest

    with pytest.raises(ProcessorContractError, match=r"complete\(\) returned True.*unfinished item \(3\)"):
        run(Drops(), [(0, [1, 2, 3, 4])], {0: 0}, capacities=(2,))


def test_driver_sink_yields_nothing():
    class Sink(AbstractProcessor):
        def __init__(self):
            self.got = []

        def try_process0(self, item):
            self.got.append(item)
            return True

    p = Sink()
    assert run(p, [(0, [1, 2])], {0: 0}, capacities=()) == []
    assert p.got == [1, 2]


def test_driver_source_emits_in_complete_with_bounded_batches():
    class Source(AbstractProcessor):
        def init_processor(self, context):
            self.t = iter(range(5))

        def complete(self):
            return self.emit_from_traverser(self.t)

    out = run(Source(), [], {}, capacities=(2,))
    assert out == [(0, [0, 1]), (0, [2, 3]), (0, [4])]


class Upper(BatchTransform):
    def __init__(self, calls):
        self.calls = calls

    def transform_batch(self, items):
        self.calls.append(len(items))
        return [s.upper() for s in items]

    def process(self, ordinal, inbox):  # pragma: no cover - must not be used by the driver
        raise AssertionError("the driver must use transform_batch")


def test_driver_batch_transform_fast_path_one_call_per_queue_sized_slice_to_every_ordinal():
    calls: list = []
    metrics = ProcessorMetrics()
    out = run(Upper(calls), [(0, ["a", "b", "c"]), (0, ["d"])], {0: 0}, capacities=(2, 2), metrics=metrics)
    assert calls == [2, 1, 1]
    assert out == [(0, ["A", "B"]), (1, ["A", "B"]), (0, ["C"]), (1, ["C"]), (0, ["D"]), (1, ["D"])]
    assert metrics.received == {0: 4} and metrics.emitted == {0: 4, 1: 4}


def test_driver_flat_map_fast_path_when_items_expand_then_output_cut_to_queue_size_as_it_goes():
    """Built-in flat-maps used to emit a whole batch's output as one list (a partition of documents became one
    list of all their words): memory must be bounded by the queue size, not by the input."""
    from processors import flat_map_p

    consumed = []
    seen_when_called = []

    def expand(n):
        seen_when_called.append(len(consumed))
        return range(n * 1000, n * 1000 + 1000)

    gen = drive(flat_map_p(expand)(), Context(vertex_name="v"), inbound=[(0, [0, 1, 2])],
                inbound_priorities={0: 0}, outbound_capacities=[10, 64])
    for ordinal, batch in gen:
        assert len(batch) <= (10, 64)[ordinal]
        if ordinal == 0:
            consumed.extend(batch)
    assert consumed == list(range(3000))
    assert seen_when_called == [0, 1000, 2000]  # item n is expanded only after item n-1's output was taken


def test_driver_batch_transform_still_gets_lifecycle_calls():
    log = []

    class T(BatchTransform):
        def init(self, outbox, context):
            super().init(outbox, context)
            log.append("init")

        def transform_batch(self, items):
            return items

        def complete_edge(self, ordinal):
            log.append(("complete_edge", ordinal))
            return True

        def complete(self):
            log.append("complete")
            return True

        def close(self):
            log.append("close")

    run(T(), [(0, [1])], {0: 0})
    assert log == ["init", ("complete_edge", 0), "complete", "close"]
