"""Nodes (HIP-869), node stake updates, freeze and PRNG."""

from __future__ import annotations

from google.protobuf import wrappers_pb2
from tests.importer.handlers.items import (
    PAYER,
    SECOND,
    T0,
    account,
    basic,
    body,
    encoded,
    fetch,
    file,
    import_items,
    module,
    record_item,
    timestamp,
)
from tests.support import Ledger

DAY = 86_400 * SECOND


def test_node_create_update_delete(ledger: Ledger) -> None:
    t1, t2, t3 = T0 + 1, T0 + 2, T0 + 3
    admin = basic.Key(ed25519=b"\x04" * 32)
    proxy = basic.ServiceEndpoint(ipAddressV4=bytes([10, 1, 2, 3]), port=443)
    create = module("node_create_pb2").NodeCreateTransactionBody(
        account_id=account(3), admin_key=admin, decline_reward=True, grpc_proxy_endpoint=proxy,
        associated_registered_node=[7],
    )  # fmt: skip
    update = module("node_update_pb2").NodeUpdateTransactionBody(
        node_id=5, decline_reward=wrappers_pb2.BoolValue(value=False), grpc_proxy_endpoint=basic.ServiceEndpoint()
    )
    delete = module("node_delete_pb2").NodeDeleteTransactionBody(node_id=5)
    items = [
        record_item(body("nodeCreate", create), at=t1, receipt={"node_id": 5}),
        record_item(body("nodeUpdate", update), at=t2),
        record_item(body("nodeDelete", delete), at=t3),
    ]
    import_items(ledger.url, *items)
    node = fetch(ledger.url, "select * from node")[0]
    assert node["node_id"] == 5
    assert node["account_id"] == 3
    assert node["admin_key"] == admin.SerializeToString()
    assert node["created_timestamp"] == t1
    assert node["decline_reward"] is False
    assert node["deleted"] is True
    assert node["grpc_proxy_endpoint"] is None  # the default endpoint of the update cleared it
    assert node["associated_registered_nodes"] == [7]
    history = fetch(ledger.url, "select * from node_history order by lower(timestamp_range)")
    assert [(row["timestamp_range"].lower, row["timestamp_range"].upper) for row in history] == [
        (t1, t2),
        (t2, t3),
    ]
    assert history[0]["grpc_proxy_endpoint"] == '{"port": 443, "domain_name": "", "ip_address_v4": "10.1.2.3"}'
    transactions = fetch(
        ledger.url, "select transaction_bytes, transaction_record_bytes, entity_id from transaction"
    )
    assert all(row["transaction_bytes"] and row["transaction_record_bytes"] for row in transactions)
    assert transactions[0]["transaction_bytes"] == items[0].transaction_bytes
    assert transactions[0]["transaction_record_bytes"] == items[0].record_bytes
    assert [row["entity_id"] for row in transactions] == [3, None, None]


def test_node_stake_update(ledger: Ledger) -> None:
    at = T0 - T0 % DAY + DAY + 5 * SECOND
    stake = module("node_stake_update_pb2")
    message = stake.NodeStakeUpdateTransactionBody(
        end_of_staking_period=timestamp(at - 5 * SECOND - 1),
        node_stake=[
            stake.NodeStake(node_id=0, max_stake=90, min_stake=10, reward_rate=3, stake=50, stake_rewarded=40,
                            stake_not_rewarded=10),
            stake.NodeStake(node_id=1, max_stake=80, min_stake=5, reward_rate=4, stake=60, stake_rewarded=55,
                            stake_not_rewarded=5),
        ],
        max_staking_reward_rate_per_hbar=17, node_reward_fee_fraction=basic.Fraction(numerator=1, denominator=10),
        staking_periods_stored=365, staking_period=1440,
        staking_reward_fee_fraction=basic.Fraction(numerator=2, denominator=10), staking_start_threshold=25,
        staking_reward_rate=100, reserved_staking_rewards=7, unreserved_staking_reward_balance=8,
        reward_balance_threshold=9, max_stake_rewarded=10, max_total_reward=11,
    )  # fmt: skip
    import_items(ledger.url, record_item(body("node_stake_update", message), at=at))
    network = fetch(ledger.url, "select * from network_stake")[0]
    assert network == {
        "consensus_timestamp": at, "epoch_day": at // DAY - 1, "max_staking_reward_rate_per_hbar": 17,
        "node_reward_fee_denominator": 10, "node_reward_fee_numerator": 1, "stake_total": 110,
        "staking_period": at - 5 * SECOND - 1, "staking_period_duration": 1440, "staking_periods_stored": 365,
        "staking_reward_fee_denominator": 10, "staking_reward_fee_numerator": 2, "staking_reward_rate": 100,
        "staking_start_threshold": 25, "max_stake_rewarded": 10, "max_total_reward": 11,
        "reserved_staking_rewards": 7, "reward_balance_threshold": 9, "unreserved_staking_reward_balance": 8,
    }  # fmt: skip
    nodes = fetch(ledger.url, "select * from node_stake order by node_id")
    assert nodes[1] == {
        "consensus_timestamp": at, "epoch_day": at // DAY - 1, "node_id": 1, "reward_rate": 4, "stake": 60,
        "stake_rewarded": 55, "staking_period": at - 5 * SECOND - 1, "max_stake": 80, "min_stake": 5,
        "stake_not_rewarded": 5,
    }  # fmt: skip
    assert len(nodes) == 2


def test_failed_node_stake_update_writes_nothing_of_its_own(ledger: Ledger) -> None:
    message = module("node_stake_update_pb2").NodeStakeUpdateTransactionBody()
    import_items(ledger.url, record_item(body("node_stake_update", message), at=T0, status=7))
    assert fetch(ledger.url, "select count(*) from network_stake") == [{"count": 0}]


def test_freeze_both_forms(ledger: Ledger) -> None:
    freeze = module("freeze_pb2")
    day = T0 - T0 % DAY
    modern = freeze.FreezeTransactionBody(
        start_time=timestamp(T0 + 3600 * SECOND), update_file=file(150), file_hash=b"\x09" * 48, freeze_type=2
    )
    legacy = freeze.FreezeTransactionBody(startHour=23, startMin=30, endHour=0, endMin=15)
    import_items(
        ledger.url,
        record_item(body("freeze", modern), at=T0),
        record_item(body("freeze", legacy), at=T0 + 1),
    )
    rows = fetch(ledger.url, "select * from network_freeze order by consensus_timestamp")
    assert rows == [
        {"consensus_timestamp": T0, "end_time": None, "file_hash": b"\x09" * 48, "file_id": 150,
         "payer_account_id": PAYER, "start_time": T0 + 3600 * SECOND, "type": 2},
        {"consensus_timestamp": T0 + 1, "end_time": day + DAY + 15 * 60 * SECOND, "file_hash": b"",
         "file_id": None, "payer_account_id": PAYER, "start_time": day + (23 * 60 + 30) * 60 * SECOND, "type": 0},
    ]  # fmt: skip
    entity_ids = fetch(ledger.url, "select entity_id from transaction order by consensus_timestamp")
    assert entity_ids == [{"entity_id": encoded(150)}, {"entity_id": None}]


def test_prng(ledger: Ledger) -> None:
    prng = module("util_prng_pb2").UtilPrngTransactionBody
    import_items(
        ledger.url,
        record_item(body("util_prng", prng()), at=T0, prng_bytes=b"\x07" * 48),
        record_item(body("util_prng", prng(range=100)), at=T0 + 1, prng_number=42),
        record_item(body("util_prng", prng(range=5)), at=T0 + 2, status=7),
    )
    rows = fetch(ledger.url, "select * from prng order by consensus_timestamp")
    assert rows == [
        {"consensus_timestamp": T0, "payer_account_id": PAYER, "range": 0, "prng_bytes": b"\x07" * 48,
         "prng_number": None},
        {"consensus_timestamp": T0 + 1, "payer_account_id": PAYER, "range": 100, "prng_bytes": None,
         "prng_number": 42},
    ]  # fmt: skip
