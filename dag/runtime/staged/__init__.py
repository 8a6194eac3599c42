"""The staged runtime (``ExecutionMode.STAGED``): a DAG runs as Spark stages, one stage after another, each
vertex an RDD whose partitions are its processors (the lowering table of :mod:`dag.planner.lowering`).
"""
