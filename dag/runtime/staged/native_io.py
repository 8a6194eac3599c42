"""Spark-native text I/O for the runtime-bound suppliers of ``processors/io/spark_text.py``.

- ``source_rdd(sc, supplier, parallelism)``: the lines under ``supplier.path`` as an RDD with exactly
  ``parallelism`` partitions (partition g feeds the vertex's processor g). ``textFile`` is asked for at least
  ``parallelism`` splits; more are merged with ``coalesce`` (narrow, order kept), fewer (tiny or few
  unsplittable files) are spread with ``repartition`` (a shuffle). A path that matches nothing is a
  ``DagValidationError`` naming it, raised here, before any job runs.
- ``run_sink(rdd, supplier)``: ``saveAsTextFile(supplier.path)`` of ``supplier.to_string_fn(item)``. An
  existing output path is a ``DagValidationError`` (Spark never overwrites); it is checked with Hadoop's
  ``FileSystem`` of the path, so it works for every scheme Spark supports.

pyspark is only touched through the objects passed in; nothing here imports it at module level.
"""

from __future__ import annotations

from typing import Any

from jetspark_base.errors import DagValidationError

__all__ = ["source_rdd", "run_sink"]


def source_rdd(sc: Any, supplier: Any, parallelism: int) -> Any:
    """``RDD[str]`` of the lines of ``supplier.path`` with exactly ``parallelism`` partitions."""
    if not isinstance(parallelism, int) or parallelism < 1:
        raise DagValidationError(
            f"read_text_p({supplier.path!r}): parallelism must be an int >= 1, got {parallelism!r}"
        )
    rdd = sc.textFile(supplier.path, minPartitions=parallelism)
    try:
        splits = rdd.getNumPartitions()
    except Exception as exc:  # py4j's Py4JJavaError wrapping Hadoop's InvalidInputException
        if "InvalidInputException" in str(exc) or "does not exist" in str(exc):
            raise DagValidationError(
                f"read_text_p: input path '{supplier.path}' does not exist or matches no file; check the path "
                "(local paths are read on every executor, so they must exist there too)"
            ) from None
        raise
    if splits > parallelism:
        return rdd.coalesce(parallelism)
    if splits < parallelism:
        return rdd.repartition(parallelism)
    return rdd


def run_sink(rdd: Any, supplier: Any) -> None:
    """Write ``rdd``'s items as text lines to ``supplier.path`` with ``saveAsTextFile``."""
    path = supplier.path
    if _path_exists(rdd.context, path):
        raise DagValidationError(
            f"write_text_p: output path '{path}' already exists and Spark's text writer never overwrites; delete "
            "it or choose another path"
        )
    to_string_fn = supplier.to_string_fn
    if to_string_fn is not str:
        rdd = rdd.map(to_string_fn)
    rdd.saveAsTextFile(path)


def _path_exists(sc: Any, path: str) -> bool:
    """Whether ``path`` exists, asked of the Hadoop file system that owns it."""
    jvm = sc._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return bool(hadoop_path.getFileSystem(sc._jsc.hadoopConfiguration()).exists(hadoop_path))
