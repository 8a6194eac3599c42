"""The worker: what one task of a pipelined job's barrier stage runs (pure Python; pyspark only through the
barrier context it is given).

In task ``t`` the worker

1. listens on a port, learns every task's address with ``allGather`` and connects its links (``links.py``);
2. creates its processors (from the member's ``ProcessorSupplier``, as the staged task does; runtime-bound
   vertices become small processors: a driver-side source emits its slice, a driver-side sink delivers each
   batch to the driver over the job's channel), their tasklets, inbound queues and senders (``runner.py``);
3. runs the cooperative scheduler over the cooperative processors in its own thread and gives every
   non-cooperative processor a thread (``scheduler.py``);
4. reports to the driver over two authenticated channels: ``control`` (status poll every
   :data:`POLL_SECONDS` with live metrics, whose reply says whether to stop; a failure as JSON plain data;
   the final metrics) and ``data`` (``context.driver`` of its processors, used by driver-side sinks);
5. when its processors are done it sends ``BYE`` on every link, waits for its peers' ``BYE`` and cleans up:
   suppliers and processors closed, threads joined, sockets closed, whatever way the task ends.
"""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from dag.errors import DagValidationError
from dag.planner.model import VertexKind
from dag.runtime.channel import ChannelClient
from dag.runtime.failures import _user_frames
from dag.runtime.pipelined.layout import Layout
from dag.runtime.pipelined.runner import TaskRunners
from processors.processor import AbstractProcessor, Processor

__all__ = ["WorkerSpec", "Worker", "POLL_SECONDS", "SINK_TOPIC"]

POLL_SECONDS = 0.2
"""How often a task asks the driver whether to stop (and sends its live metrics)."""
SINK_TOPIC = "jetspark.sink"


@dataclass
class WorkerSpec:
    """Everything a task needs (pickled into the stage closure)."""

    job_name: str
    job_id: int
    secret: bytes
    driver_address: tuple[str, int]
    host: str | None                       # address to listen on; None: this machine's address
    layout: Layout
    suppliers: dict[str, list[Any]]        # vertex -> per member ProcessorSupplier
    slices: dict[str, list[list]] = field(default_factory=dict)   # driver-side source -> per processor items
    guarantee: Any = None
    max_watermark_retain_ms: int | None = None


class _SliceSourceP(AbstractProcessor):
    """A driver-side source's processor: emits the items of its slice."""

    def __init__(self, items: list):
        super().__init__()
        self._traverser = iter(items)

    def complete(self) -> bool:
        return self.emit_from_traverser(self._traverser)


class _DriverSinkP(Processor):
    """A driver-side sink's processor: delivers every batch to the driver's collection as it arrives."""

    def __init__(self, vertex: str):
        self.vertex = vertex
        self.driver: Any = None

    def init(self, outbox: Any, context: Any) -> None:
        self.driver = context.driver

    def process(self, ordinal: int, inbox: Any) -> None:
        self.driver.request(SINK_TOPIC, {"vertex": self.vertex, "items": inbox.take_all()})


class Worker:
    """Runs task ``t`` of the stage (see the module docstring). Call with the barrier context."""

    def __init__(self, spec: WorkerSpec):
        self.spec = spec

    def __call__(self, t: int, barrier: Any) -> dict:
        spec = self.spec
        control = ChannelClient(spec.driver_address, spec.secret)
        data = ChannelClient(spec.driver_address, spec.secret)
        runners = None
        stop = threading.Event()
        poller = threading.Thread(target=self._poll, args=(t, control, stop, lambda: runners), daemon=True,
                                  name=f"jetspark-task-{t}-poll")
        try:
            runners = TaskRunners(t, spec, data, stop, make_processor=self._make_processor)
            poller.start()
            addresses = barrier.allGather(",".join(map(str, runners.links.address)))
            runners.links.connect([(a.split(",")[0], int(a.split(",")[1])) for a in addresses])
            runners.run()
            return {"task": t}
        except BaseException as exc:  # noqa: BLE001 - reported to the driver, then re-raised for Spark
            if not stop.is_set() or runners is None or runners.failure is not None:
                self._report(control, t, runners, exc)
            stop.set()
            raise
        finally:
            stop.set()
            if runners is not None:
                runners.close()
                try:
                    control.send("jetspark.done", {"task": t, "metrics": runners.metrics()})
                except OSError:
                    pass
            if poller.is_alive():
                poller.join(2)
            control.close()
            data.close()

    # ------------------------------------------------------------------ driver contact
    def _poll(self, t: int, control: ChannelClient, stop: threading.Event, runners: Any) -> None:
        failures = 0
        while not stop.wait(POLL_SECONDS):
            r = runners()
            try:
                reply = control.request("jetspark.status", {"task": t, "metrics": r.metrics() if r else {}},
                                        timeout=10)
                failures = 0
            except (OSError, TimeoutError, RuntimeError):
                failures += 1
                reply = {"stop": failures >= 5}  # the driver is gone: do not run on for ever
            if reply.get("stop"):
                stop.set()

    def _report(self, control: ChannelClient, t: int, runners: Any, exc: BaseException) -> None:
        origin = getattr(runners, "failure_origin", None) or getattr(exc, "_jetspark_origin", None) or (None, None)
        payload = {
            "task": t, "vertex": origin[0], "processor_index": origin[1], "exc_type": type(exc).__qualname__,
            "exc_message": str(exc), "user_traceback": _safe_frames(exc),
        }
        try:
            control.send("jetspark.failure", payload, as_json=True)
        except OSError:
            pass

    def _make_processor(self, vertex: Any, g: int, supplier_processors: dict) -> Any:
        """Processor ``g`` of ``vertex`` (``supplier_processors`` caches each member's ``get(L)`` result)."""
        if vertex.kind is VertexKind.DRIVER_SOURCE:
            return _SliceSourceP(self.spec.slices[vertex.name][g])
        if vertex.kind is VertexKind.DRIVER_SINK:
            return _DriverSinkP(vertex.name)
        if vertex.kind is not VertexKind.PROCESSOR:
            raise DagValidationError(f"vertex '{vertex.name}' ({vertex.kind.value}) cannot run in a PIPELINED job")
        return supplier_processors[g]


def _safe_frames(exc: BaseException) -> str:
    try:
        return _user_frames(exc)
    except Exception:  # noqa: BLE001
        return "".join(traceback.format_exception(exc))


def wait_until(predicate: Any, timeout: float, step: float = 0.002) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds passed."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return True
