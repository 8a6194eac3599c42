"""What a source or sink of a pipeline is: :class:`BatchSource`, :class:`StreamSource` and :class:`Sink`.

A descriptor holds the vertex name Jet 4 gives the source or sink and the processor supplier that runs it;
the factories build them (``Sources``/``Sinks``/``TestSources`` in :mod:`pipeline.connectors`, which calls on
:mod:`pipeline.file_sources`, :mod:`pipeline.stream_factories`, :mod:`pipeline.jdbc_factories`,
:mod:`pipeline.rolling_files`, :mod:`pipeline.socket_sink`, and the connectors of the ``connectors``
package). This module sits below all of them and imports none.

>>> BatchSource("listSource(text)", supplier=None)
BatchSource('listSource(text)')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = ["BatchSource", "StreamSource", "Sink", "collection_name"]


class BatchSource:
    """A bounded source: the vertex ``name`` and the ``supplier`` it runs. ``post_fn(item)``: applied to every
    item right after the source (``None`` drops it), e.g. ``Sources.map``'s predicate and projection, run in
    a ``NAME-select`` vertex after the source's (a driver-side source is a Spark operation, not processors)."""

    def __init__(self, name: str, supplier: Any, post_fn: Callable[[Any], Any] | None = None):
        self.name = name
        self.supplier = supplier
        self.post_fn = post_fn

    def __repr__(self) -> str:
        return f"BatchSource({self.name!r})"


class StreamSource:
    """An unbounded source: the vertex ``name``, the ``supplier`` it runs without timestamps and, when the
    source can apply timestamps itself, ``timestamped_fn(params) -> supplier`` (its items then leave it as
    ``JetEvent`` with watermarks). ``native_timestamps``: the source has timestamps of its own
    (``with_native_timestamps``); ``accepts_timestamp_fn``: ``timestamped_fn`` also applies a user
    ``timestamp_fn`` (else ``with_timestamps`` adds an ``-add-timestamps`` vertex)."""

    def __init__(self, name: str, supplier: Any, timestamped_fn: Callable[[Any], Any] | None = None,
                 native_timestamps: bool = False, accepts_timestamp_fn: bool = False):
        self.name = name
        self.supplier = supplier
        self.timestamped_fn = timestamped_fn
        self.native_timestamps = native_timestamps
        self.accepts_timestamp_fn = accepts_timestamp_fn

    def __repr__(self) -> str:
        return f"StreamSource({self.name!r})"


class Sink:
    """A sink: the vertex ``name`` and the ``supplier`` it runs."""

    def __init__(self, name: str, supplier: Any):
        self.name = name
        self.supplier = supplier

    def __repr__(self) -> str:
        return f"Sink({self.name!r})"


def collection_name(owner: str, collection: Any, kind: str) -> str:
    """The name of a driver ``kind`` ("map" or "list"): ``collection`` is the name, or the object
    ``engine.get_map``/``get_list`` returned (Jet takes the IMap/IList or its name). A wrong argument's error
    shows its type and a short prefix of it, never a whole map."""
    if isinstance(collection, str) and collection:
        return collection
    name = getattr(collection, "name", None)
    if not isinstance(collection, str) and isinstance(name, str) and name:
        return name
    raise DagValidationError(
        f"{owner}: expected the {kind}'s name (a non-empty str) or the {kind} from engine.get_{kind}(name), got "
        f"{type(collection).__name__} {repr(collection)[:60]}{'...' if len(repr(collection)) > 60 else ''}; "
        f"e.g. {owner.split('(')[0]}(engine.get_{kind}('input')) or {owner.split('(')[0]}('input')")
