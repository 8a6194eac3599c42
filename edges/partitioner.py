"""Partitioners: map a partitioning key to a partition number in ``0..partition_count-1``.

Equal keys must land in the same partition in every process and on every machine. Python's ``hash()`` of
``str``/``bytes`` is salted per process, so the default partitioner never uses it: :func:`stable_hash` computes
``zlib.crc32`` over a canonical byte encoding of the key. The encoding follows Python equality for the usual key
types (``1 == 1.0 == True`` share one encoding, as do ``0.0`` and ``-0.0``), so keys that a ``dict`` would merge
also share a partition:

=====================  ==============================================================================
type                   encoding hashed with ``zlib.crc32``
=====================  ==============================================================================
``str``                its UTF-8 bytes (fast path, no tag)
``int``, ``bool``      tag ``i`` + two's complement little-endian bytes (fast path)
``float``              integral values as the equal ``int``; others tag ``f`` + IEEE 754 double
``bytes``/bytearray    tag ``b`` + the bytes
``None``               tag ``n``
``tuple``              tag ``t`` + item count + each item's encoding, length-prefixed
``frozenset``/``set``  tag ``s`` + the sorted encodings of the items (iteration order is salted)
anything else          tag ``p`` + ``pickle.dumps(key, protocol=4)``
=====================  ==============================================================================

``Partitioner.HASH_CODE`` is Jet's ``HASH_CODE`` (``hash(key) % partition_count``): faster, but stable only because
the engine pins ``PYTHONHASHSEED`` for every worker it starts. Do not use it for data that crosses processes you
did not start through the engine.

>>> Partitioner.default().get_partition("word", 271) == stable_hash("word") % 271
True
"""

from __future__ import annotations

import pickle
import struct
import zlib
from collections.abc import Callable
from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = ["DefaultPartitioner", "HashCodePartitioner", "Partitioner", "stable_hash"]

_crc32 = zlib.crc32
_pack_double = struct.Struct("<d").pack
_pack_length = struct.Struct("<I").pack


def _int_bytes(value: int) -> bytes:
    return b"i" + value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)


def _encode(key: Any) -> bytes:
    """The canonical byte encoding of ``key`` (see the module docstring)."""
    kind = type(key)
    if kind is str:
        return key.encode("utf-8", "surrogatepass")
    if kind is int or kind is bool:
        return _int_bytes(key)
    if kind is float:
        if key.is_integer():
            return _int_bytes(int(key))
        return b"f" + _pack_double(key)
    if key is None:
        return b"n"
    if isinstance(key, tuple):
        parts = [b"t", _pack_length(len(key))]
        for item in key:
            encoded = _encode(item)
            parts.append(_pack_length(len(encoded)))
            parts.append(encoded)
        return b"".join(parts)
    if isinstance(key, (bytes, bytearray, memoryview)):
        return b"b" + bytes(key)
    if isinstance(key, str):  # str subclasses (StrEnum, ...) hash as the equal str
        return str.encode(key, "utf-8", "surrogatepass")
    if isinstance(key, int):  # int subclasses other than bool (IntEnum, ...)
        return _int_bytes(int(key))
    if isinstance(key, float):
        return _encode(float(key))
    if isinstance(key, (frozenset, set)):
        encoded_items = sorted(_encode(item) for item in key)
        return b"s" + b"".join(_pack_length(len(e)) + e for e in encoded_items)
    return b"p" + pickle.dumps(key, protocol=4)


def stable_hash(key: Any) -> int:
    """A non-negative 32-bit hash of ``key`` that is the same in every process (unlike ``hash()``).

    >>> stable_hash("a") == stable_hash("a")
    True
    >>> stable_hash(1) == stable_hash(1.0) == stable_hash(True)
    True
    """
    if type(key) is str:
        return _crc32(key.encode("utf-8", "surrogatepass"))
    return _crc32(_encode(key))


class Partitioner:
    """Maps a key to a partition. Subclass it and implement :meth:`get_partition`, or pass any object that has
    a ``get_partition(key, partition_count)`` method to ``edge.partitioned(key_fn, partitioner)``.

    >>> class First(Partitioner):
    ...     def get_partition(self, key, partition_count):
    ...         return ord(key[0]) % partition_count
    >>> First().get_partition("b", 4)
    2
    """

    HASH_CODE: Partitioner  # set below: Jet's HASH_CODE, ``hash(key) % partition_count``

    def get_partition(self, key: Any, partition_count: int) -> int:
        """Return the partition of ``key``, an int in ``0..partition_count-1``."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_partition(key, partition_count)")

    @staticmethod
    def default() -> DefaultPartitioner:
        """The stable default partitioner (``stable_hash(key) % partition_count``)."""
        return _DEFAULT

    @staticmethod
    def of(fn: Callable[[Any, int], int]) -> Partitioner:
        """Wrap a function ``fn(key, partition_count) -> int`` as a partitioner.

        >>> Partitioner.of(lambda key, n: 42).get_partition("x", 271)
        42
        """
        if not callable(fn):
            raise DagValidationError(f"Partitioner.of() needs a function (key, partition_count) -> int, got {fn!r}")
        return _FunctionPartitioner(fn)


class DefaultPartitioner(Partitioner):
    """The stable default: ``stable_hash(key) % partition_count``; the same in every process and machine."""

    __slots__ = ()

    def get_partition(self, key: Any, partition_count: int) -> int:
        if type(key) is str:
            return _crc32(key.encode("utf-8", "surrogatepass")) % partition_count
        return _crc32(_encode(key)) % partition_count

    def get_partitions(self, keys: Any, partition_count: int) -> list[int]:
        """``[get_partition(k, partition_count) for k in keys]`` in one loop (no method call per key)."""
        return [_crc32(k.encode("utf-8", "surrogatepass") if type(k) is str else _encode(k)) % partition_count
                for k in keys]

    def __repr__(self) -> str:
        return "Partitioner.default()"

    def __reduce__(self):
        return (Partitioner.default, ())


class HashCodePartitioner(Partitioner):
    """Jet's ``Partitioner.HASH_CODE``: ``hash(key) % partition_count``.

    Stable across processes only because the engine pins ``PYTHONHASHSEED`` for the workers it starts; prefer
    :meth:`Partitioner.default` unless profiling shows the difference matters.
    """

    __slots__ = ()

    def get_partition(self, key: Any, partition_count: int) -> int:
        return hash(key) % partition_count

    def get_partitions(self, keys: Any, partition_count: int) -> list[int]:
        """``[get_partition(k, partition_count) for k in keys]`` in one loop (no method call per key)."""
        return [h % partition_count for h in map(hash, keys)]

    def __repr__(self) -> str:
        return "Partitioner.HASH_CODE"

    def __reduce__(self):
        return (_hash_code, ())


class _FunctionPartitioner(Partitioner):
    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any, int], int]):
        self.fn = fn

    def get_partition(self, key: Any, partition_count: int) -> int:
        return self.fn(key, partition_count)

    def __repr__(self) -> str:
        return f"Partitioner.of({self.fn!r})"


def _hash_code() -> HashCodePartitioner:
    return Partitioner.HASH_CODE  # type: ignore[return-value]


_DEFAULT = DefaultPartitioner()
Partitioner.HASH_CODE = HashCodePartitioner()
