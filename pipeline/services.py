"""Services: Jet 4's ``ServiceFactories`` and the ``*_using_service`` stage operations.

Jet 4 replaced context factories with *service factories*; a service is whatever object the stage's function
needs (a client, a model, a lookup table). jetspark lowers a service factory to a
:class:`~processors.api.context_factory.ContextFactory`, so ``map_using_service`` runs on the same processors as
``map_using_context`` (vertex ``map-using-service``):

- ``ServiceFactories.non_shared_service(create_fn, destroy_fn)``: one service per processor;
- ``ServiceFactories.shared_service(create_fn, destroy_fn)``: one service per member (per Python worker
  process): the first processor to start creates it, the others of the same job reuse it, the last one to
  close destroys it (a process-wide table keyed by the job and the factory, reference-counted);
- ``.to_non_cooperative()``: the service may block (I/O), so its processors get threads of their own.

``create_fn(ctx)`` receives the processor's :class:`~processors.api.context.Context` (Jet's
``ProcessorSupplier.Context``); a function without arguments is accepted too.

>>> f = ServiceFactories.shared_service(lambda ctx: {"rate": 2})
>>> f.is_shared, f.is_cooperative, f.to_non_cooperative().is_cooperative
(True, True, False)
"""

from __future__ import annotations

import inspect
import threading
import uuid
from collections.abc import Callable
from typing import Any

from processors.api.context_factory import ContextFactory

__all__ = ["ServiceFactory", "ServiceFactories", "KeyedServiceFn"]

_shared: dict[tuple, list] = {}  # (job id, factory id) -> [service, processors using it, key]
_by_service: dict[int, list] = {}  # id(service) -> its slot in _shared, for destroy(service)
_shared_lock = threading.Lock()


def _call_create(create_fn: Callable[..., Any], context: Any) -> Any:
    try:
        takes = any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
                    for p in inspect.signature(create_fn).parameters.values())
    except (TypeError, ValueError):
        takes = True
    return create_fn(context) if takes else create_fn()


class _Create:
    """A context factory's ``create_fn(context)``: a new service, or the member's shared one."""

    def __init__(self, create_fn: Callable[..., Any], shared_id: str | None):
        self.create_fn = create_fn
        self.shared_id = shared_id

    def __call__(self, context: Any) -> Any:
        if self.shared_id is None:
            return _call_create(self.create_fn, context)
        key = (getattr(context, "job_id", None), self.shared_id)
        with _shared_lock:
            slot = _shared.get(key)
            if slot is None:
                slot = _shared[key] = [_call_create(self.create_fn, context), 0, key]
                _by_service[id(slot[0])] = slot
            slot[1] += 1
            return slot[0]


class _Destroy:
    """A context factory's ``destroy_fn``: destroys a non-shared service, or releases a shared one (the last
    processor destroys it)."""

    def __init__(self, destroy_fn: Callable[[Any], Any] | None):
        self.destroy_fn = destroy_fn

    def __call__(self, service: Any) -> None:
        with _shared_lock:
            slot = _by_service.get(id(service))
            if slot is not None and slot[0] is service:
                slot[1] -= 1
                if slot[1] > 0:
                    return
                del _by_service[id(service)]
                _shared.pop(slot[2], None)
        if self.destroy_fn is not None:
            self.destroy_fn(service)


class ServiceFactory:
    """How a stage creates and destroys its service (Jet's ``ServiceFactory``); immutable."""

    def __init__(self, create_fn: Callable[..., Any], destroy_fn: Callable[[Any], Any] | None, shared: bool,
                 cooperative: bool = True, shared_id: str | None = None):
        if not callable(create_fn):
            raise TypeError(f"ServiceFactories: create_fn must be callable, got {create_fn!r:.80}")
        if destroy_fn is not None and not callable(destroy_fn):
            raise TypeError(f"ServiceFactories: destroy_fn must be callable or None, got {destroy_fn!r:.80}")
        self.create_fn = create_fn
        self.destroy_fn = destroy_fn
        self.is_shared = shared
        self.is_cooperative = cooperative
        self._shared_id = (shared_id or uuid.uuid4().hex) if shared else None

    def to_non_cooperative(self) -> ServiceFactory:
        """The same factory, its processors non-cooperative (the service may block)."""
        return ServiceFactory(self.create_fn, self.destroy_fn, self.is_shared, False, self._shared_id)

    def to_context_factory(self) -> ContextFactory:
        """The context factory the ``*_using_service`` processors run with: its context object is the service
        (so the stage's function is called as it is, ``fn(service, item)``)."""
        return ContextFactory(_Create(self.create_fn, self._shared_id), _Destroy(self.destroy_fn),
                              self.is_cooperative)

    def __repr__(self) -> str:
        kind = "shared_service" if self.is_shared else "non_shared_service"
        return f"ServiceFactories.{kind}({getattr(self.create_fn, '__name__', self.create_fn)!r})"


class ServiceFactories:
    """Factories of service factories (Jet's ``ServiceFactories``)."""

    @staticmethod
    def shared_service(create_fn: Callable[..., Any],
                       destroy_fn: Callable[[Any], Any] | None = None) -> ServiceFactory:
        """One service per member, shared by the stage's processors there (it must be thread-safe)."""
        return ServiceFactory(create_fn, destroy_fn, shared=True)

    @staticmethod
    def non_shared_service(create_fn: Callable[..., Any],
                           destroy_fn: Callable[[Any], Any] | None = None) -> ServiceFactory:
        """One service per processor."""
        return ServiceFactory(create_fn, destroy_fn, shared=False)


class KeyedServiceFn:
    """``fn(service, key_fn(item), item)`` as a context function (the keyed forms)."""

    def __init__(self, fn: Callable[[Any, Any, Any], Any], key_fn: Callable[[Any], Any]):
        self.fn = fn
        self.key_fn = key_fn

    def __call__(self, service: Any, item: Any) -> Any:
        return self.fn(service, self.key_fn(item), item)
