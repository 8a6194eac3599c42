"""Executing a :class:`~dag.planner.physical_plan.PhysicalPlan` on a SparkContext (driver side).

``PlanRun`` walks the stages in order. For each stage it

1. creates the processor suppliers of its vertices on the driver (``meta_suppliers.py``); they travel to the
   tasks inside the stage function;
2. collects and broadcasts the inputs of its broadcast edges (``SparkContext.broadcast``, destroyed at the end
   of the job): when one is missing, every broadcast edge whose sending stage is built by then is collected in
   the same Spark job (``sc.union`` of their senders' records, each record tagged with its edge), so a DAG with
   several small broadcast inputs (the TF-IDF stopwords and document count) pays for one job, not one each;
3. builds its input RDD: nothing for sources (``parallelize``; a driver source planned ``dealt`` gets a
   ``dealer.Dealer`` that its tasks ask on the job's channel), or per inbound edge the records of the
   sending stage through the edge's operation (``coalesce``, ``repartition``, ``partitionBy`` with the one
   module-level identity partitioner), unioned partition-aligned in ascending priority;
4. ``mapPartitionsWithIndex`` with the :class:`~dag.runtime.staged.task.StageTask`; several outbound edges: the
   tagged output is persisted (MEMORY_AND_DISK) once, except for a driver source read once per edge
   (``read_per_edge``): it has no RDD of its own, each edge's records are a dealt copy of it that Spark runs in
   the consumer's tasks;
5. runs the stage's action when its tail is a leaf (``count()``, ``runJob`` per group of partitions into a driver
   collection, ``saveAsTextFile``), with a Spark job description naming the vertices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from jetspark_base.errors import JobFailedError
from dag.planner.physical_plan import EdgeOp, EdgePlan, PhysicalPlan, Route, StagePlan, VertexKind, VertexPlan
from dag.runtime.staged.dealer import TOPIC as DEAL_TOPIC
from dag.runtime.staged.dealer import Dealer
from dag.runtime.common.driver_collections import gc_paused
from dag.runtime.common.driver_topics import slice_bounds
from dag.runtime.common.failures import encode_failure, mark_origin
from dag.runtime.common.logforward import driver_level
from dag.runtime.common.meta_suppliers import MetaSuppliers
from dag.runtime.common.metrics import EMITTED, RECEIVED
from dag.runtime.common.senders import send, sender_spec, senders_of
from dag.runtime.staged.task import BroadcastInput, StageTask, VertexTask
from processors.io.collections import check_entry

__all__ = ["PlanRun", "target_partition"]


def target_partition(key: int) -> int:
    """The partitioner of every keyed edge: record key t is the target processor t. One function object, so
    all keyed inputs of a vertex share a partitioner and ``union`` keeps their partitions aligned."""
    return key


def _all_items(items: Iterator[Any]) -> Iterator[Any]:
    return items


def _collected(sc: Any, rdd: Any, partitions: list[int]) -> list:
    """``sc.runJob(rdd, _all_items, partitions)`` with the collector paused while the driver unpickles the results
    (``gc_paused``), not while the job runs. PySpark's ``runJob`` does both in one call, so this makes its two
    steps itself, through the internals that ``runJob`` uses; without them it is ``runJob``."""
    try:
        from pyspark.util import _load_from_socket

        mapped = rdd.mapPartitions(_all_items)
        run, java_rdd, deserializer = sc._jvm.PythonRDD.runJob, mapped._jrdd, mapped._jrdd_deserializer  # noqa: SLF001
        java_context = sc._jsc.sc()  # noqa: SLF001
    except (ImportError, AttributeError):  # another PySpark: its own runJob
        return sc.runJob(rdd, _all_items, partitions)
    sock_info = run(java_context, java_rdd, partitions)
    with gc_paused(), _load_from_socket(sock_info, deserializer) as stream:
        return list(stream)


_UNMARKED = (EdgeOp.FUSED, EdgeOp.ACCUMULATE_FUSED, EdgeOp.COALESCE)
"""Edges whose receivers need no list of senders for watermark coalescing here: a fused edge has one upstream
processor, an absorbed accumulate vertex runs no processor, a coalesce edge's senders are Spark's grouping."""


def _coalesced_groups(rdd: Any) -> list[list[int]]:
    """For each partition of a ``coalesce``-d RDD, the parent partitions (= senders) Spark put into it."""
    return [list(part.parentsIndices()) for part in rdd._jrdd.rdd().partitions()]


def _tagged(edge_index: int, records: Iterator[tuple[int, list]]) -> Iterator[tuple[int, int, list]]:
    """A broadcast sender's ``(member, batch)`` records tagged with their edge's index in the collection job."""
    return ((edge_index, member, batch) for member, batch in records)


class TaggedSender:
    """Reads one ordinal of a persisted tagged output and sends it on an edge (runs in tasks)."""

    def __init__(self, spec: Any, ordinal: int, counts_vertex: str | None, accumulator: Any, vertex: str,
                 channel: Any = None):
        self.spec, self.ordinal, self.counts_vertex = spec, ordinal, counts_vertex
        self.accumulator, self.vertex, self.channel = accumulator, vertex, channel

    def __call__(self, g: int, records: Iterator[Any]) -> Iterator[Any]:
        ordinal = self.ordinal
        counts: dict | None = {} if self.counts_vertex else None
        try:
            yield from send(self.spec, g, (batch for o, batch in records if o == ordinal), counts)
        except Exception as exc:
            mark_origin(exc, self.counts_vertex or self.vertex, g)
            raise encode_failure(exc, [self.vertex], g, self.channel) from None
        if counts and self.accumulator is not None:
            name = self.counts_vertex
            self.accumulator.add({(name, g, RECEIVED, 0): counts.get("received", 0),
                                  (name, g, EMITTED, 0): counts.get("emitted", 0)})


class PlanRun:
    """One execution of a plan (see the module docstring)."""

    def __init__(self, sc: Any, dag: Any, plan: PhysicalPlan, *, job_id: int, job_name: str, guarantee: Any,
                 accumulator: Any, collections: Any, describe: Callable[[str], None], channel: Any = None,
                 serve: Callable[[str, Callable], None] | None = None):
        self.sc, self.dag, self.plan, self.channel = sc, dag, plan, channel
        self.serve = serve  # registers a handler on the job's channel (JobChannel.register), for dealt sources
        self.dealers: dict[tuple[str, int | None], Dealer] = {}  # (vertex, ordinal when read per edge)
        self.job_id, self.job_name, self.guarantee = job_id, job_name, guarantee
        self.accumulator, self.collections, self.describe = accumulator, collections, describe
        self.stage_rdds: dict[int, Any] = {}
        self.persisted: list[Any] = []
        self.broadcasts: list[Any] = []
        self.collected: dict[int, BroadcastInput] = {}   # id(EdgePlan) -> its collected broadcast input
        self.metas = MetaSuppliers(job_id=job_id, job_name=job_name, members=plan.members, guarantee=guarantee)

    # ------------------------------------------------------------------ lifecycle
    def run(self) -> None:
        for stage in self.plan.stages:
            if self.plan.vertices[stage.tail].read_per_edge:
                continue  # read in its consumers' tasks (_sender_records)
            rdd = self._build_stage(stage)
            if stage.action is not None:
                self._run_action(stage, rdd)

    def close(self, error: BaseException | None) -> None:
        """Close the meta suppliers, unpersist outputs, destroy broadcasts (always, also after a failure)."""
        first = self.metas.close(error)
        for rdd in self.persisted:
            rdd.unpersist()
        for handle in self.broadcasts:
            try:
                handle.destroy()
            except Exception:  # noqa: BLE001 - best effort cleanup
                pass
        if first is not None and error is None:
            raise first

    # ------------------------------------------------------------------ stages
    def _vertex_task(self, vp: VertexPlan, previous: str | None) -> VertexTask:
        vt = VertexTask(
            name=vp.name, kind=vp.kind, local_parallelism=vp.local_parallelism, members=self.plan.members,
            priorities={ep.dest_ordinal: ep.priority for ep in vp.inbound},
            capacities=[ep.queue_size for ep in vp.outbound], job_id=self.job_id, guarantee=self.guarantee,
            combine=vp.combine_substitute,
        )
        if vp.dealt:
            vt.dealt, vt.channel = True, self.channel
        if previous is not None:
            vt.fused_ordinal = next(ep.dest_ordinal for ep in vp.inbound if ep.source == previous)
        if vp.kind is VertexKind.PROCESSOR and vp.combine_substitute is None:
            vt.suppliers = self._suppliers(vp)
            vt.channel = self.channel
            vt.log_levels = [driver_level(f"jetspark.{vp.name}#{g}") for g in range(vp.total_parallelism)]
        for ep in vp.inbound:
            if ep.op is EdgeOp.BROADCAST:
                vt.broadcasts.append(self._broadcast(ep))
            if ep.op not in _UNMARKED and ep.pre_aggregation is None:  # a coalesce edge: _build_stage
                spec = sender_spec(ep, self.plan.members, self.plan.partition_count)
                vt.senders[ep.dest_ordinal] = senders_of(spec, ep.source_parallelism)
        return vt

    def _suppliers(self, vp: VertexPlan) -> list[Any]:
        """Each member's ``ProcessorSupplier`` of the vertex's meta supplier."""
        return self.metas.open(vp, self.dag.get_vertex(vp.name).meta_supplier)

    def _build_stage(self, stage: StagePlan) -> Any:
        vertices = self.plan.vertices
        chain, previous = [], None
        for name in stage.vertices:
            chain.append(self._vertex_task(vertices[name], previous))
            previous = name
        head = vertices[stage.head]
        inputs = sorted((ep for ep in head.inbound if ep.op is not EdgeOp.BROADCAST),
                        key=lambda ep: (ep.priority, ep.dest_ordinal))
        rdd = self._input_rdd(head, inputs)
        if inputs and inputs[0].op is EdgeOp.COALESCE:  # the only input: Spark grouped the senders
            chain[0].senders[inputs[0].dest_ordinal] = _coalesced_groups(rdd)
        keyed = bool(inputs) and inputs[0].op in (EdgeOp.PARTITION_BY, EdgeOp.REPARTITION)
        task = StageTask(stage.id, chain, keyed_input=keyed, output="drain", accumulator=self.accumulator,
                         channel=self.channel)
        self._set_output(task, vertices[stage.tail])
        if stage.loop:
            task.loop_from = len(stage.vertices) - len(stage.loop)
        out = rdd.mapPartitionsWithIndex(task)
        if task.output == "tagged":
            from pyspark import StorageLevel

            out = out.persist(StorageLevel.MEMORY_AND_DISK)
            self.persisted.append(out)
        out.setName(f"{self.job_name}: stage {stage.id} [{', '.join(stage.vertices + stage.absorbed)}]")
        self.stage_rdds[stage.id] = out
        return out

    def _set_output(self, task: StageTask, tail: VertexPlan) -> None:
        if tail.is_leaf:
            task.output = "items" if tail.kind.is_sink_only else "drain"
        elif tail.persisted:
            task.output = "tagged"
        else:
            edge, counts_vertex = self._sending_edge(tail.outbound[0])
            task.output, task.sender = "send", sender_spec(edge, self.plan.members, self.plan.partition_count)
            task.sender_counts_vertex = counts_vertex

    def _sending_edge(self, ep: EdgePlan) -> tuple[EdgePlan, str | None]:
        """The edge whose sender runs for ``ep`` (an absorbed accumulate vertex sends on its outbound edge)."""
        if ep.op is EdgeOp.ACCUMULATE_FUSED:
            absorbed = self.plan.vertices[ep.dest]
            return absorbed.outbound[0], absorbed.name
        return ep, None

    def _input_rdd(self, head: VertexPlan, inputs: list[EdgePlan]) -> Any:
        p = head.total_parallelism
        if not inputs:
            if head.kind is VertexKind.DRIVER_SOURCE and head.dealt:
                self._deal(head, None)
                return self.sc.parallelize(range(p), p)
            if head.kind is VertexKind.DRIVER_SOURCE:
                return self.sc.parallelize(self._driver_slices(head), p)
            if head.kind is VertexKind.SPARK_TEXT_SOURCE:
                from dag.runtime.staged import native_io

                return native_io.source_rdd(self.sc, self.dag.get_vertex(head.name).meta_supplier, p)
            return self.sc.parallelize([], p)
        parts = [self._edge_rdd(ep) for ep in inputs]
        if len(parts) == 1:
            return parts[0]
        union = self.sc.union(parts)
        if union.getNumPartitions() != p:  # Spark did not recognise the shared partitioner
            raise JobFailedError(f"internal error: the union of the inputs of vertex '{head.name}' has "
                                 f"{union.getNumPartitions()} partitions instead of {p} (not partition-aligned)",
                                 job_name=self.job_name, vertex=head.name)
        return union

    def _edge_rdd(self, ep: EdgePlan) -> Any:
        records = self._sender_records(ep)
        if ep.op is EdgeOp.COALESCE:
            return records.coalesce(ep.dest_parallelism)
        if ep.op in (EdgeOp.REPARTITION, EdgeOp.PARTITION_BY):  # the sender dealt a repartition's items round-robin
            return records.partitionBy(ep.dest_parallelism, target_partition)
        return records  # NARROW

    def _sender_records(self, ep: EdgePlan) -> Any:
        """The records the sending side produces for ``ep`` (from the sender's stage)."""
        site, ordinal, counts_vertex = ep.source, ep.source_ordinal, None
        if ep.pre_aggregation is not None and ep.pre_aggregation.absorbed_vertex:
            absorbed = self.plan.vertices[ep.pre_aggregation.absorbed_vertex]
            site, ordinal, counts_vertex = absorbed.absorbed_into, absorbed.inbound[0].source_ordinal, absorbed.name
        source = self.plan.vertices[site]
        if source.read_per_edge:
            return self._read_for_edge(source, ep)
        stage_rdd = self.stage_rdds[source.stage]
        if not source.persisted:
            return stage_rdd  # the stage task already ran this edge's sender
        spec = sender_spec(ep, self.plan.members, self.plan.partition_count)
        return stage_rdd.mapPartitionsWithIndex(TaggedSender(spec, ordinal, counts_vertex, self.accumulator, site,
                                                                self.channel))

    def _read_for_edge(self, source: VertexPlan, ep: EdgePlan) -> Any:
        """A driver source read once per edge (``VertexPlan.read_per_edge``): its copy for ``ep``, dealt on demand
        as the consumer's tasks ask (not persisted, so Spark runs it in the consumer's tasks)."""
        vt = self._vertex_task(source, None)
        vt.emit_only = ep.source_ordinal
        self._deal(source, ep.source_ordinal)
        task = StageTask(source.stage, [vt], keyed_input=False, output="send", accumulator=self.accumulator,
                         channel=self.channel, sender=sender_spec(ep, self.plan.members, self.plan.partition_count))
        p = source.total_parallelism
        return self.sc.parallelize(range(p), p).mapPartitionsWithIndex(task)

    def _broadcast(self, ep: EdgePlan) -> BroadcastInput:
        if id(ep) not in self.collected:
            self._collect_broadcasts()
        return self.collected[id(ep)]

    def _collect_broadcasts(self) -> None:
        """Collect, in one Spark job, every broadcast edge whose sending stage is built and that is not collected
        yet; broadcast each edge's ``{member: [batch, ...]}``."""
        vertices = self.plan.vertices
        ready = [ep for ep in self.plan.edges if ep.op is EdgeOp.BROADCAST and id(ep) not in self.collected
                 and vertices[ep.source].stage in self.stage_rdds]
        self.describe(f"collect {', '.join(repr(ep.source) for ep in ready)} for broadcast edge"
                      f"{'s' if len(ready) > 1 else ''} {', '.join(ep.label for ep in ready)}")
        parts = [self._sender_records(ep).mapPartitions(partial(_tagged, i)) for i, ep in enumerate(ready)]
        data: list[dict[int, list]] = [{} for _ in ready]
        for i, member, batch in (parts[0] if len(parts) == 1 else self.sc.union(parts)).collect():
            data[i].setdefault(member, []).append(batch)
        for ep, by_member in zip(ready, data):
            handle = self.sc.broadcast(by_member)
            self.broadcasts.append(handle)
            self.collected[id(ep)] = BroadcastInput(ep.dest_ordinal, ep.priority, handle,
                                                    ep.route is Route.BROADCAST_MEMBER)

    def _driver_items(self, vp: VertexPlan) -> list:
        kind, name = vp.runtime_arg
        return list(self.collections.get(kind, name).items()) if kind == "map" else \
            list(self.collections.get(kind, name))

    def _driver_slices(self, vp: VertexPlan) -> list[list]:
        items = self._driver_items(vp)
        bounds = (slice_bounds(len(items), g, vp.total_parallelism) for g in range(vp.total_parallelism))
        return [items[start:end] for start, end in bounds]

    def _deal(self, vp: VertexPlan, ordinal: int | None) -> None:
        """Deal the driver source's entries on demand (``dag/runtime/staged/dealer.py``): the tasks ask the job's
        channel. ``ordinal``: the outbound edge of a source read once per edge (each has its own dealer), else
        ``None``."""
        if self.serve is None or self.channel is None:
            raise JobFailedError(f"internal error: driver source '{vp.name}' is planned to deal its entries on "
                                 "demand but the run has no job channel", job_name=self.job_name, vertex=vp.name)
        if not self.dealers:
            self.serve(DEAL_TOPIC, lambda body: self.dealers[body["vertex"], body["ordinal"]].chunk(body["g"],
                                                                                                    body["i"]))
        self.dealers[vp.name, ordinal] = Dealer(self._driver_items(vp), vp.total_parallelism)

    # ------------------------------------------------------------------ actions
    def _run_action(self, stage: StagePlan, rdd: Any) -> None:
        tail = self.plan.vertices[stage.tail]
        self.describe(f"{', '.join(stage.vertices)}: {stage.action}")
        if tail.kind is VertexKind.DRIVER_SINK:
            self._fill_collection(tail, rdd)
        elif tail.kind is VertexKind.SPARK_TEXT_SINK:
            from dag.runtime.staged import native_io

            native_io.run_sink(rdd, self.dag.get_vertex(tail.name).meta_supplier)
        else:
            rdd.count()

    def _driver_groups(self, rdd: Any) -> Iterator[list]:
        """The items of ``rdd`` on the driver, a list per group: one Spark job per group of
        ``defaultParallelism`` partitions, so the partitions of a group run in parallel (``toLocalIterator`` ran
        them one by one) while the driver holds at most one group's output at a time."""
        n, step = rdd.getNumPartitions(), max(1, self.sc.defaultParallelism)
        for start in range(0, n, step):
            yield _collected(self.sc, rdd, list(range(start, min(n, start + step))))

    def _fill_collection(self, vp: VertexPlan, rdd: Any) -> None:
        """Write the sink's items into its driver-side list or map, a group's list at a time (a map journals
        the group's puts in bulk, ``JournaledMap.put_entries``)."""
        kind, name = vp.runtime_arg
        target = self.collections.get(kind, name)
        sink = self.dag.get_vertex(vp.name).meta_supplier
        if hasattr(sink, "apply_items"):  # a driver-applied sink (processors/io/driver_apply.py)
            for items in self._driver_groups(rdd):
                sink.apply_items(target, items, vp.name)
            return
        if kind == "list":
            for items in self._driver_groups(rdd):
                target.extend(items)
            return
        check = partial(check_entry, vertex=vp.name, map_name=name)
        for items in self._driver_groups(rdd):
            target.put_entries(items, check)
