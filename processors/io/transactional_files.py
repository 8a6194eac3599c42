"""``write_file_p(directory, ..., exactly_once=True)``: a two-phase-commit file sink (Jet 4.0's exactly-once
``WriteFileP``, Flink's ``TwoPhaseCommitSinkFunction``).

Exactly-once applies when the job's ``processing_guarantee`` is ``EXACTLY_ONCE``; under any other guarantee the
processor behaves as the plain ``write_file_p`` (one file per processor, renamed into place in ``complete()``;
appended to live in a stream job).

A *transaction* is one file of one processor, ``txn = (owner index, sequence)``; it moves through three names,
every one but the last hidden (a leading ``.``, as the contract wants for work in progress)::

    .<owner>-<seq>.tmp        open: process() appends lines
    .<owner>-<seq>.prepared   snapshot_commit_prepare(): flushed, fsync-ed, closed, renamed; the id is saved
                              to the snapshot (under a broadcast key) and a new transaction opens lazily
    <owner>-<seq>             committed by snapshot_commit_finish(True): an atomic rename, visible

- ``snapshot_commit_finish(success)`` is called once per prepare, in order: ``True`` commits that snapshot's
  transaction and any older one still prepared (a failed snapshot leaves its transaction prepared, committed by
  the next success); ``False`` commits nothing. It never emits.
- Restore: every processor receives every saved transaction id (broadcast keys) and commits those whose owner
  index ``o`` it now owns (``o mod total_parallelism == its index``), so a parallelism change loses none.
  Committing is idempotent (a transaction already renamed, or unknown, is skipped).
- Leftovers: once restore is over (or at the first processing call of a fresh start), the processor deletes
  the ``.tmp`` and ``.prepared`` files of the owners it owns that it did not just commit: they belong to
  transactions after the restored snapshot, whose items will be replayed.
- The records of prepared, failed and restored transactions are shared with the exactly-once JDBC sink
  (``processors.io.prepared_transactions``).
- Sequences only grow: a restored processor continues after the highest sequence it saw, so a committed id is
  never reused.
- ``complete()`` (a bounded job's end) commits everything still open or prepared: what remains is published.
  A failure after that point and before the job ends may repeat that last part (Jet has the same window).

>>> from processors import Context
>>> p = TransactionalWriteFileP(str(tmp), str, "utf-8")                           # doctest: +SKIP
>>> p.init(outbox, Context(processing_guarantee=ProcessingGuarantee.EXACTLY_ONCE))  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

from processors.io.file_publish import is_exactly_once
from processors.io.file_writer import WriteFileP, _write_lines
from processors.io.prepared_transactions import PreparedTransactions, owns

__all__ = ["TransactionalWriteFileP"]

_log = logging.getLogger("jetspark.write_file_p")
_TXN_KEY = "write_file_p.txn"
_STAGED = re.compile(r"^\.(\d+)-(\d+)\.(tmp|prepared)$")


class TransactionalWriteFileP(WriteFileP):
    """The processor of ``write_file_p(..., exactly_once=True)`` (see the module docstring)."""

    def __init__(self, directory, to_string_fn, encoding):
        super().__init__(directory, to_string_fn, encoding)
        self._transactional = False
        self._index = 0
        self._total = 1
        self._seq = 0
        self._open: Any = None  # file object of the open transaction, or None
        self._txns: PreparedTransactions[int] = PreparedTransactions(_TXN_KEY)  # the sequences it prepared
        self._offer_to_snapshot: Any = None
        self._started = False

    def init(self, outbox, context) -> None:
        if not is_exactly_once(context):
            super().init(outbox, context)
            return
        self._transactional = True
        self._offer_to_snapshot = outbox.offer_to_snapshot
        self._vertex = context.vertex_name
        self._index, self._total = context.global_processor_index, context.total_parallelism
        Path(self._directory).mkdir(parents=True, exist_ok=True)

    # ---- names -------------------------------------------------------------------------------------------
    def _path(self, owner: int, seq: int, state: str) -> Path:
        directory = Path(self._directory)
        return directory / f"{owner}-{seq}" if state == "final" else directory / f".{owner}-{seq}.{state}"

    # ---- processing --------------------------------------------------------------------------------------
    def process(self, ordinal: int, inbox) -> None:
        if not self._transactional:
            super().process(ordinal, inbox)
            return
        self._start()
        if self._open is None:
            self._open = open(self._path(self._index, self._seq, "tmp"), "w", encoding=self._encoding, newline="")
        _write_lines(self, self._open, inbox.take_all())

    def try_process(self) -> bool:
        if not self._transactional:
            return super().try_process()
        self._start()
        return True

    def complete(self) -> bool:
        if not self._transactional:
            return super().complete()
        self._start()
        self._prepare_open_transaction()
        self._txns.commit_all(self._commit_own)
        return True

    # ---- two-phase commit --------------------------------------------------------------------------------
    def snapshot_commit_prepare(self) -> bool:
        if not self._transactional:
            return True
        self._start()
        self._prepare_open_transaction()
        self._txns.save(self._offer_to_snapshot, self._own_id, self._what())
        return True

    def _what(self) -> str:
        return f"write_file_p (vertex '{self._vertex}')"

    def _own_id(self, seq: int) -> tuple[int, int]:
        """``(owner, sequence)`` of this processor's transaction ``seq``."""
        return self._index, seq

    def _prepare_open_transaction(self) -> None:
        """Close the open transaction and mark it prepared (a new prepare group, maybe empty)."""
        group: list[int] = []
        if self._open is not None:
            self._open.flush()
            os.fsync(self._open.fileno())
            self._open.close()
            self._open = None
            os.replace(self._path(self._index, self._seq, "tmp"), self._path(self._index, self._seq, "prepared"))
            group.append(self._seq)
            self._seq += 1
        self._txns.add_prepared(group)

    def snapshot_commit_finish(self, success: bool) -> bool:
        if self._transactional:
            self._txns.finish(success, self._commit_own)
        return True

    def _commit_own(self, seqs: list[int]) -> None:
        self._commit(self._index, seqs)

    def _commit(self, owner: int, seqs: list[int]) -> None:
        for seq in seqs:
            prepared = self._path(owner, seq, "prepared")
            if prepared.exists():
                os.replace(prepared, self._path(owner, seq, "final"))

    # ---- restore -----------------------------------------------------------------------------------------
    def restore_from_snapshot(self, inbox) -> None:
        self._seq = max(self._seq, self._txns.restore(inbox, self._index, self._total, self._what()))

    def finish_snapshot_restore(self) -> bool:
        if self._transactional:
            for owner, seq in sorted(self._txns.restored):
                self._commit(owner, [seq])
            self._start()
        return True

    def _start(self) -> None:
        """Once, before the first write: delete the staged files of owned transactions after the snapshot."""
        if self._started:
            return
        self._started = True
        for path in Path(self._directory).iterdir():
            m = _STAGED.match(path.name)
            if m is None:
                continue
            owner, seq = int(m.group(1)), int(m.group(2))
            if owns(owner, self._index, self._total):
                if owner == self._index:
                    self._seq = max(self._seq, seq + 1)  # never reuse a sequence, even an aborted one
                _log.info("write_file_p (vertex '%s'): aborting transaction file %s", self._vertex, path)
                path.unlink(missing_ok=True)

    def close(self) -> None:
        if not self._transactional:
            super().close()
            return
        if self._open is not None:  # an open transaction is aborted: its items will be replayed
            self._open.close()
            self._open = None
            self._path(self._index, self._seq, "tmp").unlink(missing_ok=True)
