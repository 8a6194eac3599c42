"""The embedded engine does not listen on the network in local mode: driver RPC and block manager on
loopback, no Spark UI unless the user asks for it (then on loopback too)."""

from __future__ import annotations

import pytest

from dag import EngineConfig
from dag.runtime.common.cluster import on_this_machine
from dag.runtime.common.session import _defaults


def _listening_ipv4() -> dict[int, str]:
    """Listening TCP ports of this machine -> the address they are bound to (from /proc/net/tcp*)."""
    ports = {}
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(name, encoding="ascii").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            if state != "0A":  # LISTEN
                continue
            addr, port = local.split(":")
            ports[int(port, 16)] = addr
    return ports


def _is_loopback(hex_addr: str) -> bool:
    if len(hex_addr) == 8:  # IPv4, little-endian
        return hex_addr.endswith("7F")
    return hex_addr in ("00000000000000000000000001000000", "0000000000000000FFFF00000100007F")


def test_defaults_when_local_master_then_loopback_and_no_ui():
    for master in ("local[2]", "local", "local-cluster[2,1,1024]"):
        conf = _defaults(EngineConfig(master=master))
        assert conf["spark.driver.bindAddress"] == "127.0.0.1" and conf["spark.driver.host"] == "127.0.0.1"
        assert conf["spark.ui.enabled"] == "false"
        assert "spark.task.maxFailures" not in conf  # Spark may retry lost tasks
    conf = _defaults(EngineConfig(master="spark://cluster:7077", secure=False))
    assert "spark.driver.bindAddress" not in conf and not on_this_machine("yarn")


@pytest.mark.spark
def test_engine_when_local_then_driver_ports_bound_to_loopback_only(engine):
    conf = engine.spark.sparkContext.getConf()
    assert conf.get("spark.driver.bindAddress") == "127.0.0.1"
    listening = _listening_ipv4()
    for key in ("spark.driver.port", "spark.blockManager.port"):
        port = conf.get(key)
        if port is None or int(port) == 0:
            continue
        assert int(port) in listening and _is_loopback(listening[int(port)]), (key, port, listening.get(int(port)))
    driver_port = int(conf.get("spark.driver.port"))
    assert _is_loopback(listening[driver_port])
    assert engine.spark.sparkContext.uiWebUrl is None


def test_defaults_when_local_master_then_driver_memory_sized_for_long_lines(monkeypatch):
    """Spark's 1 GB driver heap died on a 200 MB line (read_text_p); local mode now sizes it, the user wins."""
    from dag.runtime.common.session import local_driver_memory

    monkeypatch.delenv("SPARK_DRIVER_MEMORY", raising=False)
    memory = _defaults(EngineConfig(master="local[2]"))["spark.driver.memory"]
    assert memory == local_driver_memory() and 2 <= int(memory.rstrip("g")) <= 8
    assert "spark.driver.memory" not in _defaults(EngineConfig(master="spark://cluster:7077", secure=False))
    monkeypatch.setenv("SPARK_DRIVER_MEMORY", "3g")
    assert "spark.driver.memory" not in _defaults(EngineConfig(master="local[2]"))
