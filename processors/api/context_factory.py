"""``ContextFactory``: how ``*_using_context_p`` processors create and destroy a shared context object
(Jet 3's ``ContextFactory``), e.g. a parser, a client or a lookup table.

``create_fn(context)`` receives the processor's :class:`~processors.api.context.Context` (a zero-argument
function is accepted too) and returns the context object; ``destroy_fn(obj)`` releases it when the
processor closes. A factory is immutable: the ``with_*`` and ``non_cooperative`` methods return new ones.

>>> f = ContextFactory.with_create_fn(lambda: {"a": 1}).with_destroy_fn(lambda obj: obj.clear())
>>> obj = f.create(None); obj, f.is_cooperative
({'a': 1}, True)
>>> f.non_cooperative().is_cooperative
False
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

__all__ = ["ContextFactory"]


def _takes_argument(fn: Callable) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: assume the documented form
        return True
    return any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params
    )


class ContextFactory:
    """Creates (``create``) and destroys (``destroy``) the context object of a ``*_using_context_p`` processor."""

    __slots__ = ("_create_fn", "_destroy_fn", "_cooperative", "_create_takes_context")

    def __init__(
        self,
        create_fn: Callable[..., Any],
        destroy_fn: Callable[[Any], None] | None = None,
        cooperative: bool = True,
    ):
        if not callable(create_fn):
            raise TypeError(f"ContextFactory create_fn must be callable, got {create_fn!r}")
        if destroy_fn is not None and not callable(destroy_fn):
            raise TypeError(f"ContextFactory destroy_fn must be callable or None, got {destroy_fn!r}")
        self._create_fn = create_fn
        self._destroy_fn = destroy_fn
        self._cooperative = bool(cooperative)
        self._create_takes_context = _takes_argument(create_fn)

    @staticmethod
    def with_create_fn(create_fn: Callable[..., Any]) -> "ContextFactory":
        """A cooperative factory with this ``create_fn`` and no ``destroy_fn``."""
        return ContextFactory(create_fn)

    def with_destroy_fn(self, destroy_fn: Callable[[Any], None]) -> "ContextFactory":
        """A copy of this factory that calls ``destroy_fn(obj)`` when the processor closes."""
        return ContextFactory(self._create_fn, destroy_fn, self._cooperative)

    def non_cooperative(self) -> "ContextFactory":
        """A copy whose processors are non-cooperative (the context object may block, e.g. do I/O)."""
        return ContextFactory(self._create_fn, self._destroy_fn, False)

    @property
    def create_fn(self) -> Callable[..., Any]:
        """The function creating the context object."""
        return self._create_fn

    @property
    def destroy_fn(self) -> Callable[[Any], None] | None:
        """The function destroying the context object, or None."""
        return self._destroy_fn

    @property
    def is_cooperative(self) -> bool:
        """Whether processors using this factory may stay cooperative."""
        return self._cooperative

    def create(self, context: Any) -> Any:
        """Create the context object for a processor with this ``context``."""
        return self._create_fn(context) if self._create_takes_context else self._create_fn()

    def destroy(self, obj: Any) -> None:
        """Destroy ``obj`` (no-op without a ``destroy_fn``)."""
        if self._destroy_fn is not None:
            self._destroy_fn(obj)

    def __getstate__(self):
        return (self._create_fn, self._destroy_fn, self._cooperative, self._create_takes_context)

    def __setstate__(self, state):
        self._create_fn, self._destroy_fn, self._cooperative, self._create_takes_context = state

    def __repr__(self) -> str:
        return (
            f"ContextFactory(create_fn={self._create_fn!r}, destroy_fn={self._destroy_fn!r}, "
            f"cooperative={self._cooperative})"
        )
