"""jetspark processors: the Processor API, the library of ready processors, aggregate operations,
traversers and ``verify_processor`` (Jet's TestSupport). Engine-free: nothing here imports pyspark.

Every public name is importable from ``processors`` directly. Behind it the sub-packages hold the roles:
``api`` (what a processor's author programs against), ``execution`` (the engine-free kernel that runs a
processor: the tasklet's state machine), ``library`` (stateless and aggregating processors), ``aggregate``
(aggregate operations), ``windowing`` (event time and windows), ``io`` (sources and sinks); ``testing`` is
``verify_processor``. Names load lazily, so importing the package is cheap (``docs/architecture.md``).

>>> from processors import map_p, verify_processor
>>> verify_processor(map_p(lambda x: x * 2)).input([1, 2]).expect_output([2, 4])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jetspark_base.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "Watermark": "processors.api.watermark",
    "Inbox": "processors.api.inbox",
    "Outbox": "processors.api.outbox",
    "Context": "processors.api.context",
    "ContextFactory": "processors.api.context_factory",
    "Processor": "processors.api.processor",
    "AbstractProcessor": "processors.api.processor",
    "FlatMapper": "processors.api.processor",
    "ProcessorSupplier": "processors.api.suppliers",
    "ProcessorMetaSupplier": "processors.api.suppliers",
    "Traverser": "processors.api.traverser",
    "traverse_iterable": "processors.api.traverser",
    "traverse_items": "processors.api.traverser",
    "traverse_array": "processors.api.traverser",
    "lazy": "processors.api.traverser",
    "empty": "processors.api.traverser",
    "whole_item": "processors.api.functions",
    "entry_key": "processors.api.functions",
    "entry_value": "processors.api.functions",
    "entry": "processors.api.functions",
    "verify_processor": "processors.testing",
    "SAME_ITEMS_ANY_ORDER": "processors.testing",
    "AggregateOperation": "processors.aggregate.operation",
    "counting": "processors.aggregate.aggregations",
    "summing": "processors.aggregate.aggregations",
    "averaging": "processors.aggregate.aggregations",
    "min_by": "processors.aggregate.aggregations",
    "max_by": "processors.aggregate.aggregations",
    "to_list": "processors.aggregate.aggregations",
    "to_set": "processors.aggregate.aggregations",
    "to_map": "processors.aggregate.aggregations",
    "all_of": "processors.aggregate.aggregations",
    "mapping": "processors.aggregate.aggregations",
    "reducing": "processors.aggregate.aggregations",
    "pick_any": "processors.aggregate.aggregations",
    "sorting": "processors.aggregate.aggregations",
    "concatenating": "processors.aggregate.aggregations",
    "grouping_by": "processors.aggregate.aggregations",
    "top_n": "processors.aggregate.aggregations",
    "bottom_n": "processors.aggregate.aggregations",
    "aggregate_operation2": "processors.aggregate.aggregations",
    "aggregate_operation3": "processors.aggregate.aggregations",
    "noop_p": "processors.library.stateless",
    "map_p": "processors.library.stateless",
    "filter_p": "processors.library.stateless",
    "flat_map_p": "processors.library.stateless",
    "map_using_context_p": "processors.library.stateless",
    "filter_using_context_p": "processors.library.stateless",
    "flat_map_using_context_p": "processors.library.stateless",
    "aggregate_p": "processors.library.aggregating",
    "accumulate_p": "processors.library.aggregating",
    "combine_p": "processors.library.aggregating",
    "aggregate_by_key_p": "processors.library.aggregating",
    "accumulate_by_key_p": "processors.library.aggregating",
    "combine_by_key_p": "processors.library.aggregating",
    "sort_p": "processors.library.aggregating",
    "peek_input_p": "processors.library.diagnostic",
    "peek_output_p": "processors.library.diagnostic",
    "peek_snapshot_p": "processors.library.diagnostic",
    "write_logger_p": "processors.library.diagnostic",
    "read_map_p": "processors.io.collections",
    "read_list_p": "processors.io.collections",
    "write_map_p": "processors.io.collections",
    "write_list_p": "processors.io.collections",
    "read_files_p": "processors.io.files",
    "write_file_p": "processors.io.files",
    "write_buffered_p": "processors.library.buffered",
    "SourceBuilder": "processors.io.connector_builders",
    "SinkBuilder": "processors.io.connector_builders",
    "read_text_p": "processors.io.spark_text",
    "stream_socket_p": "processors.io.text_streams",
    "stream_files_p": "processors.io.text_streams",
    "stream_map_p": "processors.io.map_journal",
    "JournalInitialPosition": "processors.io.event_journal",
    "EventJournalMapEvent": "processors.io.event_journal",
    "EventType": "processors.io.event_journal",
    "write_text_p": "processors.io.spark_text",
    "MIN_WATERMARK": "processors.windowing.definitions",
    "SlidingWindowPolicy": "processors.windowing.definitions",
    "sliding_win_policy": "processors.windowing.definitions",
    "tumbling_win_policy": "processors.windowing.definitions",
    "TimestampKind": "processors.windowing.definitions",
    "TimestampedEntry": "processors.windowing.definitions",
    "WindowResult": "processors.windowing.definitions",
    "BroadcastKey": "processors.api.snapshot_keys",
    "broadcast_key": "processors.api.snapshot_keys",
    "WatermarkPolicy": "processors.windowing.watermark_policies",
    "limiting_lag": "processors.windowing.watermark_policies",
    "limiting_lag_and_delay": "processors.windowing.watermark_policies",
    "limiting_lag_and_lull": "processors.windowing.watermark_policies",
    "limiting_timestamp_and_wall_clock_lag": "processors.windowing.watermark_policies",
    "WatermarkEmissionPolicy": "processors.windowing.watermark_policies",
    "no_throttling": "processors.windowing.watermark_policies",
    "emit_by_min_step": "processors.windowing.watermark_policies",
    "emit_by_frame": "processors.windowing.watermark_policies",
    "WmGenParams": "processors.windowing.event_time",
    "wm_gen_params": "processors.windowing.event_time",
    "no_watermarks": "processors.windowing.event_time",
    "EventTimeMapper": "processors.windowing.event_time",
    "insert_watermarks_p": "processors.windowing.insert_watermarks",
    "aggregate_to_sliding_window_p": "processors.windowing.sliding_window",
    "accumulate_by_frame_p": "processors.windowing.sliding_window",
    "combine_to_sliding_window_p": "processors.windowing.sliding_window",
    "aggregate_to_session_window_p": "processors.windowing.session_window",
    "SnapshotKey": "processors.api.snapshot_keys",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("processors", _EXPORTS, globals())


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from processors.api.watermark import Watermark
    from processors.api.inbox import Inbox
    from processors.api.outbox import Outbox
    from processors.api.context import Context
    from processors.api.context_factory import ContextFactory
    from processors.api.processor import Processor, AbstractProcessor, FlatMapper
    from processors.api.suppliers import ProcessorSupplier, ProcessorMetaSupplier
    from processors.api.traverser import Traverser, traverse_iterable, traverse_items, traverse_array, lazy, empty
    from processors.api.functions import whole_item, entry_key, entry_value, entry
    from processors.testing import verify_processor, SAME_ITEMS_ANY_ORDER
    from processors.aggregate.operation import AggregateOperation
    from processors.aggregate.aggregations import counting, summing, averaging, min_by, max_by, to_list, to_set, to_map, all_of, mapping, reducing, pick_any, sorting, concatenating, grouping_by, top_n, bottom_n, aggregate_operation2, aggregate_operation3
    from processors.library.stateless import noop_p, map_p, filter_p, flat_map_p, map_using_context_p, filter_using_context_p, flat_map_using_context_p
    from processors.library.aggregating import aggregate_p, accumulate_p, combine_p, aggregate_by_key_p, accumulate_by_key_p, combine_by_key_p, sort_p
    from processors.library.diagnostic import peek_input_p, peek_output_p, peek_snapshot_p, write_logger_p
    from processors.io.collections import read_map_p, read_list_p, write_map_p, write_list_p
    from processors.io.files import read_files_p, write_file_p
    from processors.library.buffered import write_buffered_p
    from processors.io.connector_builders import SourceBuilder, SinkBuilder
    from processors.io.spark_text import read_text_p, write_text_p
    from processors.io.text_streams import stream_socket_p, stream_files_p
    from processors.io.map_journal import stream_map_p
    from processors.io.event_journal import JournalInitialPosition, EventJournalMapEvent, EventType
    from processors.windowing.definitions import MIN_WATERMARK, SlidingWindowPolicy, sliding_win_policy, tumbling_win_policy, TimestampKind, TimestampedEntry, WindowResult
    from processors.windowing.watermark_policies import WatermarkPolicy, limiting_lag, limiting_lag_and_delay, limiting_lag_and_lull, limiting_timestamp_and_wall_clock_lag, WatermarkEmissionPolicy, no_throttling, emit_by_min_step, emit_by_frame
    from processors.windowing.event_time import WmGenParams, wm_gen_params, no_watermarks, EventTimeMapper
    from processors.windowing.insert_watermarks import insert_watermarks_p
    from processors.windowing.sliding_window import aggregate_to_sliding_window_p, accumulate_by_frame_p, combine_to_sliding_window_p
    from processors.windowing.session_window import aggregate_to_session_window_p
    from processors.api.snapshot_keys import BroadcastKey, SnapshotKey, broadcast_key
