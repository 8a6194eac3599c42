"""connectors.kafka imports no client library and no engine until used; a missing confluent-kafka is an
ImportError naming the extra (the modules' docstring examples: ``test_connector_doctests.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from connectors.kafka_client import confluent

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from connectors.kafka import KafkaSinks, KafkaSources, stream_kafka_p, write_kafka_p
from pipeline import Pipeline
p = Pipeline.create()
(p.read_from(KafkaSources.kafka({"bootstrap.servers": "b:9092"}, "in")).with_native_timestamps(0)
 .write_to(KafkaSinks.kafka({"bootstrap.servers": "b:9092"}, "out")))
p.to_dag().to_dot()
print(json.dumps(sorted(m for m in ("confluent_kafka", "pyspark", "py4j") if m in sys.modules)))
"""


def test_import_and_dag_building_load_neither_confluent_kafka_nor_pyspark():
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(REPO)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_missing_confluent_kafka_then_import_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "confluent_kafka", None)  # makes `import confluent_kafka` fail
    with pytest.raises(ImportError, match=r"pip install 'jetspark\[kafka\]'"):
        confluent()
