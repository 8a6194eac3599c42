"""Driver-applied sinks: the items go to the driver, where the sink's own code hands them to a driver-side object.

Some of Jet's sinks act where the data lives rather than where the items are: a map sink that merges with
the key's current value (``Sinks.mapWithMerging``), an observable whose observers sit in the client
(``Sinks.observable``), a reliable topic whose listeners must see one order (``Sinks.reliableTopic``). In
jetspark all of those objects live on the driver, so such a sink is a :class:`DriverApplySink`: a runtime-bound
supplier (``runtime_kind = "driver_sink"``, as ``write_map_p``) whose ``collection`` names the driver object
(``(kind, name)`` of ``DriverCollections``) and whose :meth:`~DriverApplySink.apply_items` hands it a batch
*on the driver*, with the sink's original functions (never shipped back from a task).

How the batches reach it:

- **STAGED** job: the vertex's input is brought to the driver group by group (as for ``write_map_p``) and
  ``apply_items`` is called per group (``dag/runtime/staged/build.py``).
- **PIPELINED** job: :class:`DriverApplyWriterP` (``live_supplier()``) sends each inbox batch as a request on
  topic ``sink.apply`` ({``vertex``, ``items``}); the driver (``dag.runtime.common.driver_topics``) finds the vertex's
  sink in the job's DAG and applies the batch; a ``JobFailedError`` raised there (a user function failed)
  comes back and fails the processor with the same message.
- **EXACTLY_ONCE** (pipelined): batches are staged in the job's ``SinkLedger`` (``sink.stage`` with kind
  ``"apply"``, sealed in ``snapshot_commit_prepare``) and applied when the snapshot that covers them completes
  (or the bounded job ends), so a restart neither loses nor repeats one.

When the job ends, the runtime calls :meth:`~DriverApplySink.job_ended` with the job's error or ``None``
(observables complete or fail their observers there).
"""

from __future__ import annotations

import functools
from typing import Any

from jetspark_base.errors import JobFailedError
from processors.io import driver_protocol as topics
from processors.io.collections import DriverSinkWriterP
from processors.api.suppliers import ProcessorMetaSupplier, RuntimeBound

__all__ = ["DriverApplySink", "DriverApplyWriterP"]


class DriverApplySink(RuntimeBound, ProcessorMetaSupplier):
    """Base of the driver-applied sinks (see the module docstring). ``collection`` is the ``(kind, name)`` of
    the driver object ``apply_items`` receives; subclasses implement :meth:`apply_items`."""

    runtime_kind = "driver_sink"

    def __init__(self, collection: tuple[str, str]):
        self.collection = collection

    def preferred_local_parallelism(self) -> int | None:
        return 1

    def live_supplier(self) -> ProcessorMetaSupplier:
        """The processors of a PIPELINED job: they send their batches to the driver, which applies them."""
        return ProcessorMetaSupplier.of(functools.partial(DriverApplyWriterP, repr(self)),
                                        preferred_local_parallelism=1)

    def apply_items(self, target: Any, items: list, vertex: str) -> None:
        """Hand ``items`` (in order) to ``target``, the driver object named by ``collection``; runs on the driver.
        A failure of user code raises a ``JobFailedError`` naming ``vertex``."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement apply_items")

    def job_ended(self, target: Any, error: BaseException | None) -> None:
        """The job that wrote to ``target`` ended (``error``: its failure, ``None`` when it completed)."""


class DriverApplyWriterP(DriverSinkWriterP):
    """Sends every inbox batch to the driver (``sink.apply``, or ``sink.stage`` under ``EXACTLY_ONCE``);
    ``complete()`` returns once everything sent was handled."""

    def process(self, ordinal: int, inbox) -> None:
        items = inbox.take_all()
        if not items:
            return
        if self._staged:
            self._stage("apply", self._vertex, items)
            return
        failure = self._driver.request(topics.SINK_APPLY, {"vertex": self._vertex, "items": items})
        if failure is not None:
            raise JobFailedError(failure["message"], vertex=self._vertex, processor_index=self._index,
                                 exc_type=failure["exc_type"], exc_message=failure["exc_message"])
