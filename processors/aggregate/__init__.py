"""Aggregate operations (Jet's ``AggregateOperation`` and ``AggregateOperations``): the primitives of an
aggregation, their fluent builder and the library of ready ones. Processors in :mod:`processors.library` and
:mod:`processors.windowing` run them.
"""
