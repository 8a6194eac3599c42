"""Importing and using the engine-free packages must not load pyspark/py4j nor start a JVM."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import importlib.util, json, os, sys
sys.path.insert(0, sys.argv[1])
import dag, edges, processors

touched, missing, broken = [], [], []
for package, names in ((edges, edges.__all__), (processors, processors.__all__),
                       (dag, ["DAG", "Vertex", "DagDescription", "DagError", "DagValidationError", "CycleError",
                              "ProcessorContractError", "JobFailedError"])):
    for name in names:
        module = getattr(package, "_EXPORTS", {}).get(name)
        if module and importlib.util.find_spec(module) is None:
            missing.append(name)  # that module is not written yet
            continue
        try:
            getattr(package, name)
            touched.append(name)
        except Exception as exc:
            broken.append(f"{package.__name__}.{name}: {type(exc).__name__}: {exc}")

# use the model end to end
from processors import Processor
class Nop(Processor):
    pass
d = dag.DAG()
a, b = d.new_vertex("a", Nop), d.new_vertex("b", Nop, 2)
d.edge(edges.between(a, b).partitioned(str).distributed())
d.to_dot(); d.describe().model_dump_json(); d.to_networkx(); list(d)

# and a pipeline, lowered
import pipeline
p = pipeline.Pipeline.create()
words = p.read_from(pipeline.Sources.list("text")).flat_map(str.split)
words.grouping_key(str).aggregate(processors.counting()).write_to(pipeline.Sinks.map("counts"))
words.hash_join(p.read_from(pipeline.TestSources.items(("a", 1))), pipeline.JoinClause.join_map_entries(str),
                lambda w, n: (w, n)).write_to(pipeline.Sinks.logger())
p.to_dag().to_dot()
stream = pipeline.Pipeline.create()
(stream.read_from(pipeline.Sources.map_journal("t")).with_timestamps(lambda e: 1, 0).map(str)
 .grouping_key(str).window(pipeline.WindowDefinition.sliding(10, 5)).aggregate(processors.counting())
 .write_to(pipeline.Sinks.list("x")))
stream.read_from(pipeline.TestSources.item_stream(5)).with_native_timestamps(0).write_to(pipeline.Sinks.noop())
stream.to_dot()

children = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
            children.append(stat.split("(", 1)[1].split(")", 1)[0])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j"))
print(json.dumps({"loaded": loaded, "children": children, "touched": touched, "missing": missing, "broken": broken}))
"""


def test_import_when_engine_free_packages_used_then_no_pyspark_py4j_or_jvm():
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(REPO)], capture_output=True, text=True, check=True, timeout=120
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["broken"] == []
    assert report["loaded"] == [], f"engine-free imports loaded {report['loaded']}"
    assert report["children"] == [], f"engine-free imports started processes {report['children']}"
    assert {"DAG", "Vertex", "between", "Partitioner", "Processor"} <= set(report["touched"])
