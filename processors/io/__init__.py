"""Sources and sinks: files, Spark's text I/O, the driver's collections and their journals, observables,
text streams, and ``SourceBuilder``/``SinkBuilder`` for custom connectors.
"""
