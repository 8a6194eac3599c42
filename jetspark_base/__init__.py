"""jetspark's base layer: what every other package shares and nothing of ours is imported by.

- :mod:`jetspark_base.errors`: the one error hierarchy (``DagError`` and its family);
- :mod:`jetspark_base.guarantee`: ``ProcessingGuarantee``;
- :mod:`jetspark_base.lazy_exports`: the lazy public names of ``dag`` and ``processors`` (``lazy_exports``).

Users import these names from their public homes (``from dag import DagError, ProcessingGuarantee``;
``dag.errors`` re-exports the whole hierarchy); the packages ``edges``, ``processors``, ``dag``, ``pipeline``
and ``connectors`` import them from here, so the layers form no circle:

    jetspark_base  <-  edges  <-  processors  <-  dag  <-  pipeline  <-  connectors, jetspark_cli
"""
