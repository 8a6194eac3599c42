"""A two-phase-commit sink written on the Processor API: the exactly-once print sink of Flink's connector guide,
translated to Jet's ``snapshot_commit_prepare`` / ``snapshot_commit_finish``.

Flink's sink buffers records, files the buffer under the checkpoint id in ``snapshotState`` and prints every
buffered list whose id is ``<=`` the completed one in ``notifyCheckpointComplete``. In Jet terms:

- ``process``: items go into the *open* transaction (a list);
- ``save_to_snapshot``: nothing to do before the barrier (the state is saved in the prepare step);
- ``snapshot_commit_prepare``: the open transaction becomes *prepared* under a new id; every prepared,
  unpublished transaction is saved to the snapshot (``broadcast_key`` so that, whatever the parallelism after a
  restart, every processor sees them and the owner publishes them);
- ``snapshot_commit_finish(True)``: publish the prepared transactions, oldest first; ``False``: keep them, a
  later successful snapshot publishes them;
- ``restore_from_snapshot``: transactions restored from the snapshot were prepared before it completed, so they
  are published now; the publisher must be **idempotent** per transaction id (the crash may have come after
  they were published), which :class:`TransactionLog` is;
- ``complete()`` (bounded input): publish what remains.

Items after the last completed snapshot are never published by a failed execution: the restarted job replays
them from the source, so each item is published exactly once. Run it (a PIPELINED, EXACTLY_ONCE job)::

    python examples/exactly_once_sink.py OUT_DIR [COUNT]

It writes ``OUT_DIR/<processor>-<transaction>.txt`` files, one line per item.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable

from dag import DAG
from edges import between
from processors import AbstractProcessor, SourceBuilder, broadcast_key
from processors.api.snapshot_keys import BroadcastKey

_TXN = "exactly-once-sink.txn"


class TransactionLog:
    """An idempotent publisher: transaction ``(processor, id)`` becomes the file ``<processor>-<id>.txt``,
    written atomically once; publishing it again does nothing."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)

    def __call__(self, txn: tuple[int, int], items: list) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.directory / f"{txn[0]}-{txn[1]}.txt"
        if final.exists():
            return
        temp = self.directory / f".{final.name}.tmp"
        temp.write_text("".join(f"{item}\n" for item in items))
        os.replace(temp, final)


class ExactlyOnceSinkP(AbstractProcessor):
    """The sink's processor (see the module docstring); ``publish(txn_id, items)`` must be idempotent."""

    def __init__(self, publish: Callable[[tuple[int, int], list], Any]):
        super().__init__()
        self.publish = publish
        self.open: list = []
        self.prepared: dict[tuple[int, int], list] = {}  # txn id -> items, in preparation order
        self.waiting: list[list[tuple[int, int]]] = []   # per prepare not finished yet, the txn ids it prepared
        self.failed: list[tuple[int, int]] = []          # prepared by snapshots that failed
        self.next_txn = 0

    def init_processor(self, context: Any) -> None:
        self.index = context.global_processor_index
        self.total = context.total_parallelism

    def try_process0(self, item: Any) -> bool:
        self.open.append(item)
        return True

    def snapshot_commit_prepare(self) -> bool:
        group = []
        if self.open:
            txn = (self.index, self.next_txn)
            self.next_txn += 1
            self.prepared[txn], self.open = self.open, []
            group.append(txn)
        self.waiting.append(group)
        for txn, items in self.prepared.items():
            if not self.try_emit_to_snapshot(broadcast_key((_TXN, txn)), items):
                return False  # the runtime's snapshot bucket does not refuse; a test outbox might
        return True

    def snapshot_commit_finish(self, success: bool) -> bool:
        group = self.waiting.pop(0) if self.waiting else []
        if not success:
            self.failed.extend(group)
            return True
        for txn in self.failed + group:  # older transactions left by failed snapshots first
            self.publish(txn, self.prepared.pop(txn))
        self.failed = []
        return True

    def restore_from_snapshot_entry(self, key: Any, value: Any) -> None:
        if not (isinstance(key, BroadcastKey) and key.key[0] == _TXN):
            raise ValueError(f"unexpected snapshot key {key!r}")
        owner, number = key.key[1]
        if owner == self.index:
            self.next_txn = max(self.next_txn, number + 1)
        if owner % self.total == self.index:  # the owner of a transaction publishes it
            self.publish((owner, number), value)

    def complete(self) -> bool:
        for txn in list(self.prepared):
            self.publish(txn, self.prepared.pop(txn))
        if self.open:
            self.publish((self.index, self.next_txn), self.open)
            self.next_txn, self.open = self.next_txn + 1, []
        return True


def exactly_once_sink_p(publish: Callable[[tuple[int, int], list], Any]) -> Callable[[], ExactlyOnceSinkP]:
    """The sink's supplier: ``dag.new_vertex("sink", exactly_once_sink_p(TransactionLog("out")))``."""
    return lambda: ExactlyOnceSinkP(publish)


def sequence_source(count: int | None):
    """The seed tutorial's fault-tolerant sequence source (step 19): emits 0, 1, 2, ... (``count`` items, or
    for ever when ``count`` is None); its position is saved in every snapshot and restored after a restart."""

    def fill(state: dict, buf: Any) -> None:
        for _ in range(100):
            if count is not None and state["next"] >= count:
                buf.close()
                return
            buf.add(state["next"])
            state["next"] += 1

    def restore(state: dict, saved: list) -> None:
        state["next"] = saved[0]

    builder = SourceBuilder.stream if count is None else SourceBuilder.batch
    return (builder("sequence", lambda ctx: {"next": 0})
            .fill_buffer_fn(fill)
            .create_snapshot_fn(lambda state: state["next"])
            .restore_snapshot_fn(restore)
            .build())


def build_dag(directory: str | os.PathLike, count: int | None = None) -> DAG:
    """sequence source -> exactly-once sink writing transaction files into ``directory``."""
    dag = DAG()
    source = dag.new_vertex("sequence", sequence_source(count))
    sink = dag.new_vertex("sink", exactly_once_sink_p(TransactionLog(directory)), local_parallelism=1)
    dag.edge(between(source, sink))
    return dag


def job(directory: str = "exactly-once-out", count: int = 10_000):
    """``jetspark run examples/exactly_once_sink.py --guarantee exactly_once [--directory DIR] [--count N]``:
    the DAG; the transaction files land in ``directory``."""
    from jetspark_cli.spec import JobSpec

    directory = os.path.abspath(directory)  # the sink's processor may run in another working directory
    return JobSpec(build_dag(directory, count), report=lambda engine, _job: print(f"wrote {directory}"),
                   name="exactly-once-sink")


def main(argv: list[str]) -> int:  # pragma: no cover - needs a PIPELINED runtime with snapshots
    from dag import Engine, EngineConfig, JobConfig, ProcessingGuarantee

    directory = argv[1] if len(argv) > 1 else "exactly-once-out"
    count = int(argv[2]) if len(argv) > 2 else 10_000
    with Engine(EngineConfig(master="local[2]")) as engine:
        config = JobConfig(processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE, snapshot_interval_ms=500)
        engine.new_job(build_dag(directory, count), config).join(timeout=300)
    print(f"wrote {directory}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv))
