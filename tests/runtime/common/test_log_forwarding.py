"""Processor log records reach the driver's logging as ``jetspark.<vertex>#<index>``, with the driver's level and
handlers, in order per processor, all before join() returns."""

from __future__ import annotations

import logging
import re
import uuid

import pytest

from dag import DAG
from dag.runtime.common.jobchannel import JobChannel
from dag.runtime.common.logforward import forwarding, reemit, register_log_topics
from edges import between
from processors import AbstractProcessor, map_p, peek_input_p, read_list_p, write_list_p, write_logger_p
from tests.support.modes import MODES, ModeEngine


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)

    def by_logger(self):
        out: dict[str, list[str]] = {}
        for r in self.records:
            out.setdefault(r.name, []).append(r.getMessage())
        return out


@pytest.fixture(scope="module", params=MODES, ids=lambda m: m.value)
def engine(request, engine):
    """Every job of this module runs STAGED and again PIPELINED: logs reach the driver the same way."""
    return ModeEngine(engine, request.param)


@pytest.fixture()
def driver_logs():
    """A handler on the driver's ``jetspark`` logger at INFO (restored afterwards)."""
    logger = logging.getLogger("jetspark")
    handler, level = Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_forwarding_when_records_logged_then_reemitted_in_order_before_block_ends(driver_logs):
    channel = JobChannel("local[1]")
    register_log_topics(channel)
    worker_logger = logging.Logger(f"jetspark.worker-{uuid.uuid4().hex}#3")  # the worker's own logger object
    try:
        with forwarding(worker_logger, channel.ref, logging.INFO):
            for i in range(50):
                worker_logger.info("item %d", i)
            worker_logger.debug("below the driver's level: not sent")
            try:
                raise ValueError("bad")
            except ValueError:
                worker_logger.exception("failed on %s", "x")
        # the block's end waited for the driver: every record is there, in order, with the exception's text
        messages = driver_logs.by_logger()[worker_logger.name]
        assert messages == [f"item {i}" for i in range(50)] + ["failed on x"]
        last = driver_logs.records[-1]
        assert last.levelno == logging.ERROR and "ValueError: bad" in last.exc_text
        assert worker_logger.handlers == [] and worker_logger.propagate
        assert logging.getLogger(worker_logger.name).handlers == []  # the driver's logger: re-emitted once
    finally:
        channel.close()


def test_reemit_when_not_a_jetspark_logger_or_malformed_then_refused():
    with pytest.raises(ValueError, match="jetspark"):
        reemit({"name": "root", "levelno": 20, "msg": "m", "created": 0.0, "pathname": "", "lineno": 1,
                "funcName": "", "process": 1, "threadName": ""})
    with pytest.raises(ValueError, match="levelno"):
        reemit({"name": "jetspark.v#0", "levelno": "20"})


class Chatty(AbstractProcessor):
    def try_process0(self, item):
        self.logger.warning("warning for %s", item)
        return self.try_emit(item)


def _dag(src):
    dag = DAG()
    source = dag.new_vertex("numbers", read_list_p(src), local_parallelism=1)
    double = dag.new_vertex("double", peek_input_p(map_p(lambda x: x * 2)), local_parallelism=2)
    chatty = dag.new_vertex("chatty", Chatty, local_parallelism=1)
    log = dag.new_vertex("log", write_logger_p(lambda x: f"got {x}"), local_parallelism=1)
    dag.edge(between(source, double)).edge(between(double, chatty)).edge(between(chatty, log))
    return dag


@pytest.mark.spark
def test_job_when_processors_log_then_driver_logging_has_every_record_in_order_at_join(engine, driver_logs):
    src = f"nums-{uuid.uuid4().hex}"
    engine.get_list(src).extend(range(20))
    engine.new_job(_dag(src)).join()
    logs = driver_logs.by_logger()
    # a source dealing its items on demand (EngineConfig.deal_driver_sources) may give all 20 to one processor
    peeked = logs.get("jetspark.double#0", []) + logs.get("jetspark.double#1", [])
    assert sorted(peeked) == sorted(f"Input from ordinal 0: {i}" for i in range(20))
    for index in (0, 1):  # each processor's records in the order it logged them (its input order)
        numbers = [int(re.search(r"\d+$", m).group()) for m in logs.get(f"jetspark.double#{index}", [])]
        assert numbers == sorted(numbers)
    assert sorted(logs["jetspark.chatty#0"]) == sorted(f"warning for {2 * i}" for i in range(20))
    assert sorted(logs["jetspark.log#0"]) == sorted(f"got {2 * i}" for i in range(20))


@pytest.mark.spark
def test_job_when_driver_level_is_warning_then_info_records_not_forwarded(engine, driver_logs):
    logging.getLogger("jetspark").setLevel(logging.WARNING)
    src = f"nums-{uuid.uuid4().hex}"
    engine.get_list(src).extend(range(5))
    engine.new_job(_dag(src)).join()
    logs = driver_logs.by_logger()
    assert sorted(logs) == ["jetspark.chatty#0"] and len(logs["jetspark.chatty#0"]) == 5
