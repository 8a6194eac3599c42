"""Importing the PostgreSQL connectors and building pipelines with them loads no client library and no engine:
psycopg is imported only when a job runs, pyspark never by these modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import connectors, connectors.jdbc, processors.io.jdbc_two_phase, connectors.cdc, connectors.cdc_source
import connectors.cdc_sink, connectors.cdc_records, connectors.pgoutput, pipeline.jdbc_factories
from connectors.cdc import CdcSinks, PostgresCdcSources
from pipeline import Pipeline, Sinks, Sources

connect = lambda: None
p = Pipeline.create()
p.read_from(Sources.jdbc(connect, "select 1")).write_to(Sinks.jdbc("insert into t values (%s)", connect))
p.read_from(Sources.jdbc(connect, lambda c, n, i: [])).write_to(
    Sinks.jdbc_builder().update_query("insert into t values (%s)").connection_fn(connect).exactly_once(True).build())
cdc = (PostgresCdcSources.postgres("cdc").set_database_address("h").set_database_password("pw")
       .set_table_whitelist("public\\.t").build())
p.read_from(cdc).with_native_timestamps(0).write_to(CdcSinks.map("m", lambda r: 1, lambda r: 2))
dot = p.to_dag().to_dot()
print(json.dumps({"loaded": sorted(m for m in ("psycopg", "pyspark", "py4j") if m in sys.modules),
                  "names": [n for n in ("jdbcSource", "jdbcSink", "cdc", "mapCdcSink(m)") if n in dot],
                  "password_shown": "pw" in repr(cdc.supplier._config)}))
"""


def test_connectors_when_imported_and_pipelines_built_then_no_client_or_engine_loaded():
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(REPO)], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result == {"loaded": [], "names": ["jdbcSource", "jdbcSink", "cdc", "mapCdcSink(m)"],
                      "password_shown": False}
