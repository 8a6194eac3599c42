"""The worker: what one task of a pipelined job's barrier stage runs (pure Python; pyspark only through the
barrier context it is given).

In task ``t`` the worker

1. listens on a port, learns every task's address with ``allGather`` and connects its links (``links.py``);
2. creates its processors (from the member's ``ProcessorSupplier``, as the staged task does; driver-side
   collections through their ``live_supplier()``, which talk to the driver over ``context.driver``), their
   tasklets, inbound queues and senders (``runner.py``);
3. runs the cooperative scheduler over the cooperative processors in its own thread and gives every
   non-cooperative processor a thread (``scheduler.py``);
4. talks to the job's channel over two authenticated connections: its own ``control`` client (a status poll
   every :data:`POLL_SECONDS` with live metrics, whose reply says whether to stop; the final metrics) and the
   process's cached job client (``context.driver`` of its processors; failure records, ``encode_failure``);
5. when its processors are done it sends ``BYE`` on every link, waits for its peers' ``BYE`` and cleans up:
   suppliers and processors closed, threads joined, sockets closed, whatever way the task ends.
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from dag.runtime.channel import ChannelClient
from dag.runtime.failures import encode_failure
from dag.runtime.logforward import forwarding
from dag.runtime.pipelined.layout import Layout
from dag.runtime.pipelined.runner import TaskRunners

__all__ = ["WorkerSpec", "Worker", "POLL_SECONDS"]

POLL_SECONDS = 0.2
"""How often a task asks the driver whether to stop (and sends its live metrics)."""


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


class Worker:
    """Runs task ``t`` of the stage (see the module docstring). Call with the barrier context."""

    def __init__(self, spec: WorkerSpec):
        self.spec = spec

    def __call__(self, t: int, barrier: Any) -> dict:
        spec = self.spec
        ref = spec.channel
        control = ChannelClient(ref.address, ref.secret)
        runners: TaskRunners | None = None
        stop = threading.Event()
        poller = threading.Thread(target=self._poll, args=(t, control, stop, lambda: runners), daemon=True,
                                  name=f"jetspark-task-{t}-poll")
        try:
            runners = TaskRunners(t, spec, ref.client(), stop)
            poller.start()
            addresses = barrier.allGather(",".join(map(str, runners.links.address)))  # type: ignore[union-attr]
            runners.links.connect([(a.split(",")[0], int(a.split(",")[1])) for a in addresses])  # type: ignore
            with ExitStack() as forwarded:  # processors' log records go to the driver's logging
                for logger, level in runners.log_targets():
                    forwarded.enter_context(forwarding(logger, ref, level))
                runners.run()
            return {"task": t}
        except Exception as exc:
            stop.set()
            raise encode_failure(exc, [f"<task {t}>"], t, ref) from None
        finally:
            stop.set()
            if runners is not None:
                runners.close()
                try:
                    control.send("jetspark.done", {"task": t, "attempt": spec.attempt, "metrics": runners.metrics()})
                except OSError:
                    pass
            if poller.is_alive():
                poller.join(2)
            control.close()

    def _poll(self, t: int, control: ChannelClient, stop: threading.Event, runners: Any) -> None:
        failures = 0
        while not stop.wait(POLL_SECONDS):
            r = runners()
            try:
                reply = control.request("jetspark.status", {"task": t, "attempt": self.spec.attempt,
                                                             "metrics": r.metrics() if r else {}},
                                        timeout=10)
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
