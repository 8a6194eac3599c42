"""Configuration of the engine and of one job: frozen pydantic models, unknown fields rejected.

``EngineConfig`` says where and how jobs run (Spark master, members, parallelism, the planner's optimisations);
``JobConfig`` names one job and carries Jet's processing-guarantee settings. Fields left ``None`` mean
"use the default", which the engine works out when it starts (see each field).

>>> EngineConfig(master="local[2]", members=2).members
2
>>> JobConfig(name="word-count").processing_guarantee
<ProcessingGuarantee.NONE: 'NONE'>
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from jetspark_base.guarantee import ProcessingGuarantee

__all__ = ["EngineConfig", "ExecutionMode", "JobConfig", "ProcessingGuarantee"]


class ExecutionMode(str, Enum):
    """How a job runs. ``STAGED``: one Spark stage per chain of vertices, a vertex starts after its inputs are
    done (bounded DAGs only). ``PIPELINED``: every processor of every vertex runs at once inside one
    gang-scheduled Spark stage and items flow through the edges as they are produced (Jet's model; needed for
    stream sources)."""

    STAGED = "STAGED"
    PIPELINED = "PIPELINED"


def _is_secret_setting(key: str) -> bool:
    """Whether a Spark setting holds a secret (``spark.authenticate.secret``, ``...password``, ``...token``)."""
    lowered = key.lower()
    return any(word in lowered for word in ("secret", "password", "token", "credential"))


class EngineConfig(BaseModel):
    """How an :class:`~dag.runtime.engine.Engine` runs jobs.

    >>> EngineConfig(spark_conf={"spark.ui.enabled": "false"}).partition_count
    271
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __repr_args__(self):  # the printed form hides secrets: a Spark setting whose name says it holds one
        for name, value in super().__repr_args__():
            if name == "spark_conf":
                value = {k: ("***" if _is_secret_setting(k) else v) for k, v in value.items()}
            yield name, value

    master: str = Field("local[*]", description="Spark master URL: local[*], local[2], local-cluster[2,1,1024], "
                                                "spark://host:7077, yarn, ... Ignored when the engine borrows a session.")
    app_name: str = Field("jetspark", description="Spark application name (shown in the Spark UI).")
    members: int | None = Field(None, gt=0, description="Logical cluster members M. A vertex with local parallelism L "
                                "has L*M processors; processor g belongs to member g // L. None: 1 in local mode, the "
                                "number of executors on a cluster.")
    default_local_parallelism: int | None = Field(None, gt=0, description="Local parallelism of vertices that set "
                                                  "none. None: Spark's default parallelism // members (at least 1).")
    partition_count: int = Field(271, gt=0, description="Number of partitions of partitioned edges (Jet's 271); the "
                                 "partition p of a key goes to processor p mod (L*M) (distributed) or p mod L (local).")
    spark_conf: dict[str, str] = Field(default_factory=dict, description="Extra Spark settings for a session the "
                                       "engine creates; they win over the engine's own defaults.")
    progress: bool = Field(False, description="Show a progress line per Spark stage on the terminal (stderr).")
    fuse_narrow_edges: bool = Field(True, description="Run chains of narrow (equal-parallelism unicast/isolated) "
                                    "edges in one Spark task with no serialization between processors.")
    pre_aggregate: bool = Field(True, description="Combine by key on the sending side of a partitioned edge into "
                                "accumulate/aggregate/combine_by_key_p (as Spark's reduceByKey does).")
    snapshot_dir: str | None = Field(None, description="Directory for the snapshots of PIPELINED jobs with "
                                     "processing_guarantee EXACTLY_ONCE or AT_LEAST_ONCE. None: a temporary directory "
                                     "in local mode (deleted when the engine closes); on a cluster it is required and "
                                     "must be a path every executor and the driver share (NFS, a mounted volume).")
    widen_stateless: bool = Field(True, description="Give a stateless built-in vertex (map_p, flat_map_p, ...) "
                                  "between unicast edges its consumer's local parallelism, and a driver sink its "
                                  "upstream's, where results cannot change (dag/planner/widening.py): a "
                                  "local_parallelism=1 vertex then feeds its consumer without a shuffle of its "
                                  "output.")
    fuse_accumulate: bool = Field(True, description="Run the accumulate vertex of X -> local partitioned -> "
                                  "accumulate_by_key_p -> distributed partitioned -> combine_by_key_p inside X's "
                                  "task, making the pattern one map-side-combining shuffle.")
    deal_driver_sources: bool = Field(True, description="Hand the entries of a driver source (read_map_p, "
                                      "read_list_p) whose outbound edges are all unicast to its processors on "
                                      "demand, in shrinking chunks over the job's channel, instead of equal-count "
                                      "slices: a processor that finishes early takes more, so entries of very "
                                      "different cost (files of different sizes) do not leave one task running "
                                      "alone (dag/runtime/staged/dealer.py). STAGED jobs.")
    web_ui_port: int | None = Field(None, ge=0, le=65535, description="Serve a live web page of the engine's "
                                    "jobs and Prometheus' /metrics on this port (dag/runtime/webui): None = off, 0 = "
                                    "any free port. It binds to 127.0.0.1 in local mode (spark.driver.host on a "
                                    "cluster) and answers only requests carrying the engine's token "
                                    "(engine.web_ui_url).")
    python_env_archive: str | None = Field(None, description="On a cluster: a venv-pack or conda-pack archive "
                                           "(.tar.gz, .tgz, .tar or .zip; a local file or a URL Spark fetches, "
                                           "e.g. hdfs://...) that every executor unpacks and runs its Python "
                                           "from (spark.archives=PATH#environment, spark.pyspark.python="
                                           "./environment/bin/python). Make one with 'jetspark pack-env "
                                           "OUT.tar.gz'. None: the executors' own Python (spark.pyspark.python, "
                                           "else PYSPARK_PYTHON, else python3). Not for local masters.")
    secure: bool | None = Field(None, description="Spark's RPC authentication and encryption (spark.authenticate, "
                                "spark.network.crypto.enabled). The secret: spark_conf's spark.authenticate.secret, "
                                "else the JETSPARK_CLUSTER_SECRET environment variable, else a generated one (by "
                                "Spark on YARN, Kubernetes and local masters, by jetspark on local-cluster); a "
                                "standalone master (spark://) accepts only the secret it was started with, so there "
                                "one must be given. None: True on a cluster, False in local mode (local, local[N], "
                                "local-cluster[...], where nothing listens beyond loopback).")
    co_partition: bool = Field(True, description="Route the pre-aggregated input of a by-key aggregator "
                               "(aggregate_by_key_p, accumulate_by_key_p, combine_by_key_p) that emits (key, "
                               "result) entries straight to the processors its entries go to next, when the "
                               "partitioned edge after it keys them by a function that provably reads only the "
                               "key (entry_key, lambda e: e[0][1], ...) and both vertices have the same "
                               "parallelism on one member: the aggregator and its consumer then share a stage "
                               "and one shuffle disappears (dag/planner/aggregation.py). STAGED jobs.")
    tight_loops: bool = Field(True, description="Run a fused chain of built-in stateless processors (map_p, "
                              "filter_p, flat_map_p and their *_using_context_p variants) that ends in a "
                              "by-key accumulation (pre-aggregated or fused accumulate edge) as one generated "
                              "loop of nested for statements, without lists between the processors "
                              "(dag/planner/loops.py).")


class JobConfig(BaseModel):
    """Settings of one job (Jet's ``JobConfig``).

    >>> JobConfig().snapshot_interval_ms
    10000
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str | None = Field(None, description="Job name; None: the engine names it job-<id>. Names must be unique "
                             "among the engine's jobs.")
    processing_guarantee: ProcessingGuarantee = Field(ProcessingGuarantee.NONE, description="Passed to processors "
                                                      "via their Context; batch jobs on Spark take no snapshots.")
    snapshot_interval_ms: int = Field(10000, ge=0, description="Jet's snapshot interval: the delay from the completion "
                                      "of one snapshot to the start of the next (PIPELINED jobs with a guarantee "
                                      "other than NONE; unused by STAGED jobs).")
    max_restarts: int = Field(10, ge=0, description="How many times in a row a PIPELINED job with a guarantee other "
                              "than NONE is restarted from its last snapshot after a RestartableError or a lost "
                              "task/worker/executor; the count resets when a snapshot completes after a restart. "
                              "One more failure fails the job with the last error. 0: never restart.")
    restart_delay_ms: int = Field(200, ge=0, description="Pause between a failed execution of a PIPELINED job and "
                                  "its restart from the last snapshot (guarantee other than NONE), so that a "
                                  "failure that repeats at once does not spin.")
    execution_mode: ExecutionMode | None = Field(None, description="STAGED or PIPELINED; None: PIPELINED when the "
                                                 "DAG has a stream source, else STAGED.")
    max_watermark_retain_ms: int | None = Field(None, ge=-1, description="Jet's maxWatermarkRetainMillis: a top "
                                                "watermark held back this long by a lagging input is forwarded "
                                                "anyway. None (or Jet's -1): no limit.")
