"""How a caller of :class:`~processors.execution.tasklet.ProcessorTasklet` differs from the others: one frozen policy
object given to the tasklet, read once when the tasklet is made (never per item).

The tasklet's state machine is the same for every caller; these are the only differences:

========================  ===============  ===============  =====================================
field                     ``STAGED``       ``PIPELINED``    ``TEST_SUPPORT`` (``verify_processor``)
========================  ===============  ===============  =====================================
``nullary``               after an inbox   when idle        never (TestSupport does not call it)
``strict_progress``       yes              no               yes
``coalesce_watermarks``   yes              yes              no: the test's watermark as it is
``fast_path``             yes              yes              no: ``process()`` and its outbox
``commit_prepare``        yes              yes              no
``emit_control``          no               yes              no
========================  ===============  ===============  =====================================

The staged runtime ends a processor's output with the end of its generator, so it emits no ``DONE``; the
pipelined runtime routes ``DONE`` and barriers like items. ``TEST_SUPPORT`` lives in ``processors/testing.py``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Nullary", "TaskletPolicy", "STAGED", "PIPELINED"]


class Nullary(enum.Enum):
    """When the tasklet calls ``try_process()`` (Jet's nullary process)."""

    AFTER_INBOX = "after_inbox"
    """After each inbox ``process()`` emptied, until True (a batch runtime: once per inbound batch)."""
    WHEN_IDLE = "when_idle"
    """Once whenever the inbox is empty, also before the first input (a streaming source polls here)."""
    NEVER = "never"
    """Not at all (Jet's TestSupport)."""


@dataclass(frozen=True)
class TaskletPolicy:
    """What one caller of the tasklet does differently (see the module docstring)."""

    name: str
    """Names the policy in messages and reprs."""
    nullary: Nullary
    """When ``try_process()`` is called."""
    strict_progress: bool
    """True: every call of a cooperative processor counts toward ``NO_PROGRESS_LIMIT``; False: only the calls
    that have input to consume (``process``, watermarks), since a streaming processor may legitimately wait."""
    coalesce_watermarks: bool = True
    """True: watermarks are coalesced over the inbound edges and the idle message is forwarded without calling
    the processor; False: each watermark goes to ``try_process_watermark`` as it came."""
    fast_path: bool = True
    """True: a ``BatchTransform`` runs through ``transform_chunks`` without an outbox."""
    commit_prepare: bool = True
    """True: ``snapshot_commit_prepare()`` follows every save (phase 1 of the two-phase commit)."""
    emit_control: bool = False
    """True: ``DONE`` and snapshot barriers come out of the tasklet's output for the runtime to route."""


STAGED = TaskletPolicy("staged", Nullary.AFTER_INBOX, strict_progress=True)
"""The staged (Spark stage) runtime: ``processors.execution.staged.drive``."""
PIPELINED = TaskletPolicy("pipelined", Nullary.WHEN_IDLE, strict_progress=False, emit_control=True)
"""The pipelined runtime: ``dag/runtime/pipelined``."""
