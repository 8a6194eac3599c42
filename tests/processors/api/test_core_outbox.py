from __future__ import annotations

import pytest

from dag.errors import DagValidationError, ProcessorContractError
from processors import Outbox


def test_outbox_when_bucket_full_then_offer_returns_false():
    box = Outbox([2])
    assert box.offer("a") and box.offer("b")
    assert not box.offer("c")
    assert box.has_unfinished_item()
    assert box.drain(0) == ["a", "b"]
    box.reset()
    assert box.offer("c") and not box.has_unfinished_item()
    assert box.bucket_count() == 1


def test_outbox_when_different_item_after_refusal_then_contract_error_names_owner_and_rule():
    box = Outbox([1], owner="processor MyP of vertex 'v'")
    box.call = "process(ordinal=0)"
    assert box.offer("a")
    assert not box.offer("b")
    box.drain(0)
    box.reset()
    with pytest.raises(ProcessorContractError) as err:
        box.offer("c")
    msg = str(err.value)
    assert "MyP" in msg and "vertex 'v'" in msg and "process(ordinal=0)" in msg
    assert "different item" in msg and "'b'" in msg and "'c'" in msg


def test_outbox_when_different_ordinals_after_refusal_then_contract_error():
    box = Outbox([1, 1])
    assert box.offer("a", 0)
    assert not box.offer("b", 0)
    box.drain(0)
    box.reset()
    with pytest.raises(ProcessorContractError, match="different ordinals"):
        box.offer("b", 1)


def test_outbox_when_offered_again_without_reset_then_contract_error():
    box = Outbox([1])
    box.offer("a")
    assert not box.offer("b")
    with pytest.raises(ProcessorContractError, match="called again after it returned False"):
        box.offer("b")


def test_outbox_when_equal_item_after_refusal_then_accepted():
    box = Outbox([1])
    box.offer(["x"])
    assert not box.offer(["y", 1])
    box.drain(0)
    box.reset()
    assert box.offer(["y", 1])  # an equal (not identical) item is the same item


def test_outbox_when_multi_ordinal_offer_refused_then_retry_fills_only_remaining_buckets():
    box = Outbox([2, 1, 2])
    assert box.offer("a", 1)
    assert not box.offer("b")  # buckets 0 and 2 would accept, 1 is full
    assert box.drain(0) == ["b"] and box.drain(1) == ["a"] and box.drain(2) == []
    box.reset()
    assert box.offer("b")
    assert box.drain(0) == [] and box.drain(1) == ["b"] and box.drain(2) == ["b"]


def test_outbox_when_list_of_ordinals_then_only_those_buckets():
    box = Outbox([5, 5, 5])
    assert box.offer("a", [0, 2])
    assert box.bucket(0) == ["a"] and box.bucket(1) == [] and box.bucket(2) == ["a"]


@pytest.mark.parametrize("ordinal", [3, -2, [0, 3], "0", 1.0])
def test_outbox_when_bad_ordinal_then_contract_error(ordinal):
    box = Outbox([1, 1, 1], owner="processor P")
    with pytest.raises(ProcessorContractError, match="ordinal"):
        box.offer("a", ordinal)


def test_outbox_when_none_offered_then_contract_error():
    with pytest.raises(ProcessorContractError, match="None"):
        Outbox([1]).offer(None)


def test_outbox_when_no_buckets_then_offer_to_all_accepts():
    box = Outbox([])
    assert box.offer("a") and box.bucket_count() == 0


def test_outbox_when_no_buckets_then_offer_many_accepts_all_and_empty_lists():
    # a sink's outbox has no bucket; a wrapped sink processor offers its (empty) outputs with offer_many
    box = Outbox([])
    assert box.offer_many([]) == 0
    assert box.offer_many([1, 2, 3]) == 3
    assert box.offer_many([1, 2, 3], 1) == 3


def test_outbox_snapshot_when_no_snapshot_bucket_then_contract_error():
    with pytest.raises(ProcessorContractError, match="no snapshot bucket"):
        Outbox([1]).offer_to_snapshot("k", "v")


def test_outbox_snapshot_refusal_rules():
    box = Outbox([1], snapshot_capacity=1)
    assert box.offer_to_snapshot("k", 1)
    assert not box.offer_to_snapshot("k2", 2)
    assert box.has_unfinished_item()
    assert box.drain_snapshot() == [("k", 1)]
    box.reset()
    with pytest.raises(ProcessorContractError, match="different snapshot entry"):
        box.offer_to_snapshot("k3", 3)


def test_outbox_snapshot_when_same_entry_retried_then_accepted():
    box = Outbox([1], snapshot_capacity=1)
    box.offer_to_snapshot("k", 1)
    assert not box.offer_to_snapshot("k2", 2)
    box.drain_snapshot()
    box.reset()
    assert box.offer_to_snapshot("k2", 2) and not box.has_unfinished_item()


def test_outbox_when_blocked_then_new_items_refused_but_pending_item_accepted():
    box = Outbox([1])
    box.offer("a")
    assert not box.offer("b")
    box.drain(0)
    box.reset()
    box.block()
    assert box.offer("b"), "the pending item passes a blocked outbox"
    assert not box.offer("c"), "a new item is refused while blocked"
    box.drain(0)
    box.reset()
    box.unblock()
    assert box.offer("c")


def test_outbox_is_full():
    box = Outbox([1, 2])
    box.offer("a")
    assert box.is_full(0) and not box.is_full(1)


@pytest.mark.parametrize("caps", [[0], [-1], ["3"]])
def test_outbox_when_bad_capacity_then_validation_error(caps):
    with pytest.raises(DagValidationError, match="capacity"):
        Outbox(caps)


def test_offer_many_when_items_fit_partly_then_takes_what_fits_without_a_refusal():
    box = Outbox([3, 2])
    assert box.offer_many(["a", "b", "c", "d"]) == 2  # ordinal -1: the fullest bucket decides
    assert box.drain(0) == ["a", "b"] and box.drain(1) == ["a", "b"]
    assert not box.has_unfinished_item()
    box.reset()
    assert box.offer_many(["a", "b", "c", "d"], 2) == 4


def test_offer_many_when_a_refused_item_is_pending_then_it_goes_first():
    box = Outbox([1])
    assert box.offer("x") and not box.offer("y")
    box.drain(0)
    box.reset()
    with pytest.raises(ProcessorContractError, match="different item"):
        box.offer_many(["z", "y"])


def test_offer_many_when_list_holds_none_then_contract_error():
    box = Outbox([8])
    with pytest.raises(ProcessorContractError, match="None"):
        box.offer_many(["a", None])


def test_offer_many_when_ordinal_list_then_same_as_item_by_item():
    box = Outbox([2, 5, 5])
    assert box.offer_many(["a", "b", "c"], 0, [1, 2]) == 3
    assert box.drain(0) == [] and box.drain(1) == ["a", "b", "c"] and box.drain(2) == ["a", "b", "c"]
