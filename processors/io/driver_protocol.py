"""The messages processors exchange with the driver over ``context.driver`` (the job's channel), one topic each.

Processors (task side) only know these topic names and bodies; ``dag.runtime.common.driver_topics`` registers the
driver's handlers. Bodies are plain dicts; items and events travel pickled inside the channel's authenticated
frames. ``request`` waits for the reply; ``send`` is one-way (messages of one connection are handled in order,
so a later request's reply means every earlier send was handled).

| topic | kind | body | reply |
|---|---|---|---|
| ``journal.start`` | request | ``map`` (``kind``: ``"map"``, the default, or ``"replicated"``), ``index``, ``total``, ``initial`` (a ``JournalInitialPosition`` value) | ``partitions`` (this reader's share: ``p % total == index``), ``offsets`` (one per partition) |
| ``journal.read`` | request | ``map`` (and ``kind``), ``partitions``, ``offsets``, ``max`` (events per partition) | ``events`` (a list per partition), ``offsets`` (the next ones), ``lost`` (count) |
| ``collection.slice`` | request | ``kind`` (``"map"``/``"list"``/``"replicated"``), ``name``, ``index``, ``count`` | the ``index``-th of ``count`` contiguous slices (a map's as ``(key, value)`` entries) |
| ``map.get`` | request | ``name``, ``keys`` (``kind`` as for ``journal.start``) | the keys' values, ``None`` for a missing key (``map_using_imap``) |
| ``sink.list`` | send | ``name``, ``items`` | — (appended to ``engine.get_list(name)``) |
| ``sink.map`` | send | ``name``, ``items`` (``(key, value)`` entries) | — (put into ``engine.get_map(name)``) |
| ``sink.map.apply`` | send | ``name``, ``items`` (``(table, key, sequence, action, value)``, ``action`` one of ``APPLY_PUT``, ``APPLY_DELETE``, ``APPLY_TRUNCATE``) | — (put or remove the key unless ``sequence`` is not newer than the key's last applied one or the table's last truncate; a truncate removes the keys the table put before it) |
| ``sink.apply`` | request | ``vertex`` (a driver-applied sink, ``processors.io.driver_apply``), ``items`` | ``None``, or the failure of a user function on the driver: ``message``, ``exc_type``, ``exc_message`` |
| ``sink.flush`` | request | ``{}`` | ``True`` once every earlier message of the connection was handled |

>>> JOURNAL_READ
'journal.read'
"""

from __future__ import annotations

from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = [
    "JOURNAL_START", "JOURNAL_READ", "COLLECTION_SLICE", "MAP_GET", "SINK_LIST", "SINK_MAP", "SINK_MAP_APPLY",
    "SINK_APPLY", "SINK_FLUSH", "SINK_STAGE", "SINK_SEAL", "APPLY_PUT", "APPLY_DELETE", "APPLY_TRUNCATE",
    "require_driver",
]

JOURNAL_START = "journal.start"
JOURNAL_READ = "journal.read"
COLLECTION_SLICE = "collection.slice"
MAP_GET = "map.get"
SINK_LIST = "sink.list"
SINK_MAP = "sink.map"
SINK_MAP_APPLY = "sink.map.apply"  # CdcSinks.map: ordered puts and removes, older sequences ignored
APPLY_PUT, APPLY_DELETE, APPLY_TRUNCATE = "put", "delete", "truncate"  # the actions of sink.map.apply's items
SINK_APPLY = "sink.apply"  # driver-applied sinks (map merging/updating, observables, reliable topics)
SINK_FLUSH = "sink.flush"
SINK_STAGE = "sink.stage"  # EXACTLY_ONCE: {"vertex", "g", "kind", "name", "items"}, staged until a snapshot covers it
SINK_SEAL = "sink.seal"    # EXACTLY_ONCE: {"vertex", "g"}: the staged items belong to the snapshot being taken


def require_driver(context: Any, what: str) -> Any:
    """``context.driver``, or a ``DagValidationError`` saying that ``what`` needs a running engine job."""
    driver = getattr(context, "driver", None)
    if driver is None:
        raise DagValidationError(
            f"vertex '{getattr(context, 'vertex_name', '?')}': {what} reads or writes the engine's driver-side "
            "collections, so it runs only inside a PIPELINED Engine job (the processor's Context has no driver "
            "channel); in a unit test pass Context(driver=...) with a client of a DriverChannel"
        )
    return driver
