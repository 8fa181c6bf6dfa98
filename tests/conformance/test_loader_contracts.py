"""The loader's contract rows: the reference harness's defaults and conversions for results (and their hash
rows), logs, state changes, actions, storage state and Ethereum transactions, and the derived
``contract_transaction`` rows."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
from tests.support import Ledger

from ledgermirror.runtime import Prepared


def fetch(url: str, query: str) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        conn = await asyncpg.connect(url)
        try:
            return [dict(row) for row in await conn.fetch(query)]
        finally:
            await conn.close()

    return asyncio.run(run())


def test_contract_result_defaults_and_hash_row(ledger: Ledger, database: Prepared) -> None:
    ledger.load(
        {
            "contractresults": [
                {"contract_id": 5001, "consensus_timestamp": 10, "created_contract_ids": [7001, "0.0.7002"]},
                {
                    "contract_id": "0.0.5002",
                    "consensus_timestamp": "11",
                    "bloom": "0x0102",
                    "call_result": "0x3",
                    "transaction_hash": "0x" + "ab" * 32,
                    "evmAddress": "ignored: not one of the 19 inserted columns",
                },
            ]
        }
    )
    rows = fetch(database.owner_url, "select * from contract_result order by consensus_timestamp")
    assert rows[0] == {
        "function_parameters": bytes([1, 1, 2, 2, 3, 3]), "gas_limit": 1000, "function_result": None,
        "gas_used": None, "consensus_timestamp": 10, "amount": 0, "bloom": None, "call_result": None,
        "contract_id": 5001, "created_contract_ids": [7001, 7002], "error_message": "", "payer_account_id": 102,
        "sender_id": 101, "failed_initcode": None, "transaction_hash": bytes(range(32)), "transaction_index": 1,
        "transaction_result": 22, "transaction_nonce": 0, "gas_consumed": None,
    }  # fmt: skip
    assert (rows[1]["bloom"], rows[1]["call_result"]) == (bytes([1, 2]), bytes([3]))  # odd hex left-padded
    hashes = fetch(database.owner_url, "select * from contract_transaction_hash order by consensus_timestamp")
    assert [(row["consensus_timestamp"], row["entity_id"], row["hash"]) for row in hashes] == [
        (10, 5001, bytes(range(32))),
        (11, 5002, bytes.fromhex("ab" * 32)),
    ]
    assert {(row["payer_account_id"], row["transaction_result"]) for row in hashes} == {(102, 22)}


def test_log_and_state_change_defaults(ledger: Ledger, database: Prepared) -> None:
    ledger.load(
        {
            "contractlogs": [{"consensus_timestamp": 20, "topic3": None, "root_contract_id": 5001}],
            "contractStateChanges": [{"consensus_timestamp": 20, "contract_id": 5001, "value_written": None}],
        }
    )
    (log,) = fetch(database.owner_url, "select * from contract_log")
    assert log["bloom"] == log["data"] == bytes([1, 0x23])
    assert log["topic0"].hex() == "97c1fc0a6ed5551bc831571325e9bdb365d06803100dc20648640ba24ce69750"
    assert log["topic3"] is None
    assert (log["contract_id"], log["root_contract_id"], log["payer_account_id"], log["index"]) == (
        1,
        5001,
        102,
        0,
    )
    (change,) = fetch(database.owner_url, "select * from contract_state_change")
    assert change == {
        "consensus_timestamp": 20, "contract_id": 5001, "payer_account_id": 2, "slot": b"\x01",
        "value_read": bytes([1, 1]), "value_written": None, "migration": False,
    }  # fmt: skip


def test_contract_transactions_are_derived_per_timestamp(ledger: Ledger, database: Prepared) -> None:
    ledger.load(
        {
            "contractresults": [{"consensus_timestamp": 30, "contract_id": 5001, "payer_account_id": 300}],
            "contractlogs": [
                {"consensus_timestamp": "30", "contract_id": 5002},  # the same key as the number 30
                {"consensus_timestamp": 31, "contract_id": 5003},
            ],
            "contractStateChanges": [{"consensus_timestamp": 30, "contract_id": 5001}],
        }
    )
    rows = fetch(
        database.owner_url,
        "select consensus_timestamp, entity_id, payer_account_id, contract_ids from contract_transaction "
        "order by consensus_timestamp, entity_id",
    )
    at_30 = [5001, 300, 5002, 102, 2]  # results first, then logs, then state changes; contract before payer
    assert rows == [
        {"consensus_timestamp": 30, "entity_id": entity, "payer_account_id": 300, "contract_ids": at_30}
        for entity in sorted(at_30)
    ] + [
        {"consensus_timestamp": 31, "entity_id": entity, "payer_account_id": 102, "contract_ids": [5003, 102]}
        for entity in (102, 5003)
    ]


def test_action_state_and_ethereum_transaction_defaults(ledger: Ledger, database: Prepared) -> None:
    ledger.load(
        {
            "contractactions": [{"recipient_account": 9, "input": "0xab", "caller": "0.0.8002"}],
            "contractStates": [{"contract_id": 5001}, {"contract_id": 5001, "slot": "0x02", "value": "0x0a"}],
            "ethereumtransactions": [
                {"_value_description": "dropped", "authorization_list": [{"nonce": 1}], "call_data_id": 1001}
            ],
        }
    )
    (action,) = fetch(database.owner_url, "select * from contract_action")
    assert action == {
        "call_depth": 1, "call_type": 1, "caller": 8002, "caller_type": "CONTRACT",
        "consensus_timestamp": 1234510001, "gas": 10000, "gas_used": 5000, "index": 1, "input": bytes([0xAB]),
        "recipient_account": 9, "recipient_address": None, "recipient_contract": None, "result_data": None,
        "result_data_type": 11, "value": 100, "call_operation_type": 1, "payer_account_id": 102,
    }  # fmt: skip
    states = fetch(
        database.owner_url, "select slot, value, modified_timestamp from contract_state order by length(slot)"
    )
    assert states == [
        {"slot": bytes([2]), "value": bytes([10]), "modified_timestamp": 1664365660048675000},
        {"slot": bytes(31) + b"\x01", "value": b"1", "modified_timestamp": 1664365660048675000},  # a number: text
    ]
    (ethereum,) = fetch(database.owner_url, "select * from ethereum_transaction")
    assert ethereum["data"] == bytes(5)  # "0x000000000": odd length, left-padded
    assert ethereum["gas_price"] == bytes.fromhex("ad78ebc5ac620000")
    assert (ethereum["payer_account_id"], ethereum["call_data_id"], ethereum["type"]) == (5001, 1001, 2)
    assert ethereum["authorization_list"] == '[{"nonce": 1}]'  # jsonb's own text
    assert ethereum["value"] == bytes([0])
