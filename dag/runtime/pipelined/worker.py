"""The worker: what one task of a pipelined job's barrier stage runs (pure Python; pyspark only through the
barrier context it is given).

In task ``t`` the worker

1. listens on a port, learns every task's address from the driver (:data:`ADDRESS_TOPIC`: the coordinator
   answers once every task of the execution told its own; Spark's ``BarrierTaskContext.allGather`` would do
   the same but polls its RPC once a second, which cost a second on every start and restart) and connects its
   links (``links.py``);
2. creates its processors (from the member's ``ProcessorSupplier``, as the staged task does; driver-side
   collections through their ``live_supplier()``, which talk to the driver over ``context.driver``), their
   tasklets, inbound queues and senders (``runner.py``);
3. runs the cooperative scheduler over the cooperative processors in its own thread and gives every
   non-cooperative processor a thread (``scheduler.py``);
4. talks to the job's channel over two authenticated connections: its own ``control`` client (a status poll
   every :data:`POLL_SECONDS` with live metrics, whose reply says whether to stop; the final metrics) and the
   process's cached job client (``context.driver`` of its processors; failure records, ``encode_failure``);
5. when its processors are done it sends ``BYE`` on every link, waits for its peers' ``BYE`` (answering
   snapshot requests for its finished processors meanwhile) and cleans up:
   suppliers and processors closed, threads joined, sockets closed, whatever way the task ends.

While the processors run, everything that existed before (jetspark, pyspark, the user's modules, the
processors themselves) is frozen out of the garbage collector's sight (``gc.freeze()``, undone when the task
ends): a full collection then walks only what the stream allocated. Measured with
``bench/bench_streaming.py --rate 100000`` on a quiet machine, the longest collection went from 27-32 ms to
3 ms and the p99.9 per hop from 12 ms to 3-4 ms (bench/README.md, issue 22). The youngest generation is
collected after :data:`YOUNG_COLLECTION_THRESHOLD` allocations instead of 700: a stream allocates and frees
items by the million, and at 80% of the maximum throughput the collector then took about 0.9 s of CPU per 7 s
job across both tasks, 0.3 s with the higher threshold (same bench, ``--rate 80%``).
"""

from __future__ import annotations

import gc
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from dag.runtime.common.channel import ChannelClient
from dag.runtime.common.failures import TaskFailure, encode_failure
from dag.runtime.common.logforward import forwarding
from dag.runtime.pipelined.layout import Layout
from dag.runtime.pipelined.runner import TaskRunners
from dag.runtime.pipelined.snapshot_coordinator import is_restartable

__all__ = ["WorkerSpec", "Worker", "POLL_SECONDS", "ADDRESS_TOPIC", "EXCHANGE_WAIT"]

POLL_SECONDS = 0.2
"""How often a task asks the driver whether to stop (and sends its live metrics)."""
YOUNG_COLLECTION_THRESHOLD = 20_000
"""Allocations (less deallocations) of container objects between two collections of the youngest generation
while a task runs (Python's default: 700); see the module docstring."""
ADDRESS_TOPIC = "jetspark.address"
"""A task's link address in; every task's out once all told theirs (``{"addresses": [...] | None, "stop"}``)."""
EXCHANGE_WAIT = 1.0
"""Seconds the driver holds an address request open waiting for the other tasks (the task then asks again)."""
EXCHANGE_TIMEOUT = 120.0
"""Seconds a task waits for every task of its stage to start before it fails (restartable: a link error)."""
_CALLS = 0  # tasks this Python worker process ran (1: a fresh worker, it imported jetspark for this task)


@dataclass
class WorkerSpec:
    """Everything a task needs (pickled into the stage closure)."""

    job_name: str
    job_id: int
    channel: Any                           # the job's ChannelRef (address and per-job secret)
    host: str | None                       # address to listen on; None: this machine's address
    layout: Layout
    suppliers: dict[str, list[Any]]        # vertex -> per member ProcessorSupplier
    guarantee: Any = None
    max_watermark_retain_ms: int | None = None
    snapshots: Any = None                  # SnapshotSpec when the job takes snapshots
    attempt: int = 0                       # execution number: the driver ignores tasks of older executions
    log_levels: dict[str, list[int]] | None = None   # vertex -> the driver's level per processor (logforward)
    unbounded: bool = False                # the DAG has a stream source (Context.unbounded)


class Worker:
    """Runs task ``t`` of the stage (see the module docstring)."""

    def __init__(self, spec: WorkerSpec):
        self.spec = spec

    def __call__(self, t: int) -> dict:
        global _CALLS
        _CALLS += 1
        spec = self.spec
        ref = spec.channel
        self.startup = {"entered": time.time(), "fresh_worker": _CALLS == 1}
        control = ChannelClient(ref.address, ref.secret)
        runners: TaskRunners | None = None
        stop = threading.Event()
        poller = threading.Thread(target=self._poll, args=(t, control, stop, lambda: runners), daemon=True,
                                  name=f"jetspark-task-{t}-poll")
        reported: dict[int, TaskFailure] = {}  # id(exception) -> its report, made once

        def report(exc: BaseException) -> TaskFailure:
            if id(exc) not in reported:
                reported[id(exc)] = encode_failure(exc, [f"<task {t}>"], t, ref)
            return reported[id(exc)]

        try:
            runners = TaskRunners(t, spec, ref.client(), stop, report_failure=report)
            self.startup["built"] = time.time()
            addresses = self._exchange(t, control, runners.links.address)  # type: ignore[union-attr]
            poller.start()
            if addresses is None:  # stopped while waiting for the other tasks
                return {"task": t}
            runners.links.connect(addresses)  # type: ignore[union-attr]
            self.startup["connected"] = time.time()
            with ExitStack() as forwarded:  # processors' log records go to the driver's logging
                for logger, level in runners.log_targets():
                    forwarded.enter_context(forwarding(logger, ref, level))
                gc.freeze()  # the task's long-lived objects out of the collector's walk (module docstring)
                thresholds = gc.get_threshold()
                gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *thresholds[1:])
                try:
                    runners.run()
                finally:
                    gc.set_threshold(*thresholds)
                    gc.unfreeze()
            return {"task": t}
        except Exception as exc:
            stop.set()
            failure = report(exc)
            if spec.snapshots is not None and failure.record is not None and is_restartable(failure.record):
                # the driver has the record and restarts the job: end the task normally, so that Spark keeps
                # this Python worker for the next execution (a failed task's worker exits, and a fresh one
                # imports jetspark again: seconds on a busy machine)
                return {"task": t, "failure": failure.record["id"]}
            raise failure from None
        finally:
            stop.set()
            if runners is not None:
                runners.close()
                try:
                    control.send("jetspark.done", {"task": t, "attempt": spec.attempt, "metrics": runners.metrics(),
                                                   "startup": self.startup})
                except OSError:
                    pass
            if poller.is_alive():
                poller.join(2)
            control.close()

    def _exchange(self, t: int, control: ChannelClient, address: tuple[str, int]) -> list[tuple[str, int]] | None:
        """Every task's link address (index = task), through the driver; None when the job stops meanwhile."""
        deadline = time.monotonic() + EXCHANGE_TIMEOUT
        body = {"task": t, "attempt": self.spec.attempt, "address": list(address)}
        while True:
            reply = control.request(ADDRESS_TOPIC, body, timeout=EXCHANGE_WAIT + 10)
            if reply.get("addresses") is not None:
                return [(host, int(port)) for host, port in reply["addresses"]]
            if reply.get("stop"):
                return None
            if time.monotonic() > deadline:
                raise ConnectionError(f"task {t} of job '{self.spec.job_name}': not every task of the stage started "
                                      f"within {EXCHANGE_TIMEOUT:.0f} s, so the tasks could not connect")

    def _poll(self, t: int, control: ChannelClient, stop: threading.Event, runners: Any) -> None:
        failures = 0
        startup_sent = False
        while not stop.wait(POLL_SECONDS):
            r = runners()
            body = {"task": t, "attempt": self.spec.attempt, "metrics": r.metrics() if r else {}}
            if not startup_sent:  # the task's start-up times, for the coordinator's restart timeline (debug log)
                body["startup"] = dict(self.startup)
                startup_sent = "connected" in self.startup
            try:
                reply = control.request("jetspark.status", body, timeout=10)
                failures = 0
            except (OSError, TimeoutError, RuntimeError):
                failures += 1
                reply = {"stop": failures >= 5}  # the driver is gone: do not run on for ever
            if reply.get("stop"):
                stop.set()
            elif r is not None and r.snapshots is not None:
                messages = r.snapshots.instructions(reply)
                if messages:
                    r.control(messages)

