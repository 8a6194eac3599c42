from __future__ import annotations

import pydantic
import pytest

from edges import EdgeConfig, RoutingPolicy


def test_edge_config_when_default_then_queue_size_1024():
    assert EdgeConfig().queue_size == 1024


@pytest.mark.parametrize("bad", [0, -1, "12", 1.5, True])
def test_edge_config_when_queue_size_not_positive_int_then_rejected(bad):
    with pytest.raises(pydantic.ValidationError, match="queue_size"):
        EdgeConfig(queue_size=bad)


def test_edge_config_when_unknown_field_then_rejected():
    with pytest.raises(pydantic.ValidationError, match="packet_size_limit"):
        EdgeConfig(packet_size_limit=3)


def test_edge_config_when_assigned_then_frozen():
    config = EdgeConfig(queue_size=8)
    with pytest.raises(pydantic.ValidationError):
        config.queue_size = 16
    assert config == EdgeConfig(queue_size=8) and hash(config) == hash(EdgeConfig(queue_size=8))


def test_routing_policy_when_listed_then_jet_order_and_lower_case_values():
    assert [p.name for p in RoutingPolicy] == ["UNICAST", "ISOLATED", "PARTITIONED", "BROADCAST", "FANOUT"]
    assert all(p.value == p.name.lower() for p in RoutingPolicy)
