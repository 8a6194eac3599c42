"""jetspark processors: the Processor API, the library of ready processors, aggregate operations,
traversers and ``verify_processor`` (Jet's TestSupport). Engine-free: nothing here imports pyspark.

Every public name is importable from ``processors`` directly; sub-modules are one topic each (see
``docs/architecture.md``). Names load lazily, so importing the package is cheap.

>>> from processors import map_p, verify_processor
>>> verify_processor(map_p(lambda x: x * 2)).input([1, 2]).expect_output([2, 4])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "Watermark": "processors.watermark",
    "Inbox": "processors.inbox",
    "Outbox": "processors.outbox",
    "Context": "processors.context",
    "ContextFactory": "processors.context_factory",
    "Processor": "processors.processor",
    "AbstractProcessor": "processors.processor",
    "FlatMapper": "processors.processor",
    "ProcessorSupplier": "processors.suppliers",
    "ProcessorMetaSupplier": "processors.suppliers",
    "Traverser": "processors.traverser",
    "traverse_iterable": "processors.traverser",
    "traverse_items": "processors.traverser",
    "traverse_array": "processors.traverser",
    "lazy": "processors.traverser",
    "empty": "processors.traverser",
    "whole_item": "processors.functions",
    "entry_key": "processors.functions",
    "entry_value": "processors.functions",
    "entry": "processors.functions",
    "verify_processor": "processors.testing",
    "SAME_ITEMS_ANY_ORDER": "processors.testing",
    "AggregateOperation": "processors.aggregate",
    "counting": "processors.aggregations",
    "summing": "processors.aggregations",
    "averaging": "processors.aggregations",
    "min_by": "processors.aggregations",
    "max_by": "processors.aggregations",
    "to_list": "processors.aggregations",
    "to_set": "processors.aggregations",
    "to_map": "processors.aggregations",
    "all_of": "processors.aggregations",
    "mapping": "processors.aggregations",
    "reducing": "processors.aggregations",
    "pick_any": "processors.aggregations",
    "sorting": "processors.aggregations",
    "concatenating": "processors.aggregations",
    "grouping_by": "processors.aggregations",
    "top_n": "processors.aggregations",
    "bottom_n": "processors.aggregations",
    "aggregate_operation2": "processors.aggregations",
    "aggregate_operation3": "processors.aggregations",
    "noop_p": "processors.stateless",
    "map_p": "processors.stateless",
    "filter_p": "processors.stateless",
    "flat_map_p": "processors.stateless",
    "map_using_context_p": "processors.stateless",
    "filter_using_context_p": "processors.stateless",
    "flat_map_using_context_p": "processors.stateless",
    "aggregate_p": "processors.aggregating",
    "accumulate_p": "processors.aggregating",
    "combine_p": "processors.aggregating",
    "aggregate_by_key_p": "processors.aggregating",
    "accumulate_by_key_p": "processors.aggregating",
    "combine_by_key_p": "processors.aggregating",
    "sort_p": "processors.aggregating",
    "peek_input_p": "processors.diagnostic",
    "peek_output_p": "processors.diagnostic",
    "peek_snapshot_p": "processors.diagnostic",
    "write_logger_p": "processors.diagnostic",
    "read_map_p": "processors.collections_io",
    "read_list_p": "processors.collections_io",
    "write_map_p": "processors.collections_io",
    "write_list_p": "processors.collections_io",
    "read_files_p": "processors.files",
    "write_file_p": "processors.files",
    "write_buffered_p": "processors.buffered",
    "SourceBuilder": "processors.builders",
    "SinkBuilder": "processors.builders",
    "read_text_p": "processors.spark_text",
    "stream_socket_p": "processors.stream_sources",
    "stream_files_p": "processors.stream_sources",
    "stream_map_p": "processors.map_journal",
    "JournalInitialPosition": "processors.event_journal",
    "EventJournalMapEvent": "processors.event_journal",
    "EventType": "processors.event_journal",
    "write_text_p": "processors.spark_text",
    "MIN_WATERMARK": "processors.windows",
    "SlidingWindowPolicy": "processors.windows",
    "sliding_win_policy": "processors.windows",
    "tumbling_win_policy": "processors.windows",
    "TimestampKind": "processors.windows",
    "TimestampedEntry": "processors.windows",
    "WindowResult": "processors.windows",
    "BroadcastKey": "processors.windows",
    "broadcast_key": "processors.windows",
    "WatermarkPolicy": "processors.watermark_policies",
    "limiting_lag": "processors.watermark_policies",
    "limiting_lag_and_delay": "processors.watermark_policies",
    "limiting_lag_and_lull": "processors.watermark_policies",
    "limiting_timestamp_and_wall_clock_lag": "processors.watermark_policies",
    "WatermarkEmissionPolicy": "processors.watermark_policies",
    "no_throttling": "processors.watermark_policies",
    "emit_by_min_step": "processors.watermark_policies",
    "emit_by_frame": "processors.watermark_policies",
    "WmGenParams": "processors.event_time",
    "wm_gen_params": "processors.event_time",
    "no_watermarks": "processors.event_time",
    "EventTimeMapper": "processors.event_time",
    "insert_watermarks_p": "processors.insert_watermarks",
    "aggregate_to_sliding_window_p": "processors.sliding_window",
    "accumulate_by_frame_p": "processors.sliding_window",
    "combine_to_sliding_window_p": "processors.sliding_window",
    "aggregate_to_session_window_p": "processors.session_window",
    "SnapshotKey": "processors.snapshot_keys",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'processors' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from processors.watermark import Watermark
    from processors.inbox import Inbox
    from processors.outbox import Outbox
    from processors.context import Context
    from processors.context_factory import ContextFactory
    from processors.processor import Processor, AbstractProcessor, FlatMapper
    from processors.suppliers import ProcessorSupplier, ProcessorMetaSupplier
    from processors.traverser import Traverser, traverse_iterable, traverse_items, traverse_array, lazy, empty
    from processors.functions import whole_item, entry_key, entry_value, entry
    from processors.testing import verify_processor, SAME_ITEMS_ANY_ORDER
    from processors.aggregate import AggregateOperation
    from processors.aggregations import counting, summing, averaging, min_by, max_by, to_list, to_set, to_map, all_of, mapping, reducing, pick_any, sorting, concatenating, grouping_by, top_n, bottom_n, aggregate_operation2, aggregate_operation3
    from processors.stateless import noop_p, map_p, filter_p, flat_map_p, map_using_context_p, filter_using_context_p, flat_map_using_context_p
    from processors.aggregating import aggregate_p, accumulate_p, combine_p, aggregate_by_key_p, accumulate_by_key_p, combine_by_key_p, sort_p
    from processors.diagnostic import peek_input_p, peek_output_p, peek_snapshot_p, write_logger_p
    from processors.collections_io import read_map_p, read_list_p, write_map_p, write_list_p
    from processors.files import read_files_p, write_file_p
    from processors.buffered import write_buffered_p
    from processors.builders import SourceBuilder, SinkBuilder
    from processors.spark_text import read_text_p, write_text_p
    from processors.stream_sources import stream_socket_p, stream_files_p
    from processors.map_journal import stream_map_p
    from processors.event_journal import JournalInitialPosition, EventJournalMapEvent, EventType
    from processors.windows import MIN_WATERMARK, SlidingWindowPolicy, sliding_win_policy, tumbling_win_policy, TimestampKind, TimestampedEntry, WindowResult, BroadcastKey, broadcast_key
    from processors.watermark_policies import WatermarkPolicy, limiting_lag, limiting_lag_and_delay, limiting_lag_and_lull, limiting_timestamp_and_wall_clock_lag, WatermarkEmissionPolicy, no_throttling, emit_by_min_step, emit_by_frame
    from processors.event_time import WmGenParams, wm_gen_params, no_watermarks, EventTimeMapper
    from processors.insert_watermarks import insert_watermarks_p
    from processors.sliding_window import aggregate_to_sliding_window_p, accumulate_by_frame_p, combine_to_sliding_window_p
    from processors.session_window import aggregate_to_session_window_p
    from processors.snapshot_keys import SnapshotKey
