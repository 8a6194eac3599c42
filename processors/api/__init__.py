"""The Processor API: what a processor's author programs against (Jet's ``com.hazelcast.jet.core``).

``Processor``/``AbstractProcessor`` with their ``Inbox``, ``Outbox`` and ``Context``; ``Traverser``; the
``Watermark`` item; processor suppliers (how a vertex makes its processors); snapshot keys; ``Functions``.
Nothing here runs a processor: :mod:`processors.execution` does that.
"""
