"""The loader's topic message, lookup, schedule and signature rows: the reference harness's defaults and
conversions, and the lookup rows generated for the topicMessageLookup matrix."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from tests.support import Ledger

from ledgermirror.conformance.loader import load_setup
from ledgermirror.runtime import Prepared


def fetch(url: str, query: str) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        conn = await asyncpg.connect(url)
        try:
            return [dict(row) for row in await conn.fetch(query)]
        finally:
            await conn.close()

    return asyncio.run(run())


def test_topic_message_defaults_and_conversions(ledger: Ledger, database: Prepared) -> None:
    ledger.load(
        {
            "topicmessages": [
                {"consensus_timestamp": "5", "sequence_number": 1, "topic_id": 7},
                {
                    "consensus_timestamp": "6",
                    "sequence_number": 2,
                    "topic_id": "0.0.7",
                    "message": ["1", "2"],
                    "running_hash": "\\x0102",
                    "chunk_num": 1,
                    "chunk_total": 2,
                    "initial_transaction_id": [10, 6, 8, -46, -123, -40, -52, 4, 18, 2, 24, 3],
                },
            ]
        }
    )
    rows = fetch(database.owner_url, "select * from topic_message order by consensus_timestamp")
    assert rows[0] | {"initial_transaction_id": None} == {
        "consensus_timestamp": 5, "message": b"message", "running_hash": b"running_hash", "sequence_number": 1,
        "running_hash_version": 2, "chunk_num": None, "chunk_total": None, "payer_account_id": 3,
        "valid_start_timestamp": None, "topic_id": 7, "initial_transaction_id": None,
    }  # fmt: skip
    assert rows[1]["message"] == b'{"1","2"}'  # an array goes as node-postgres' array literal
    assert rows[1]["running_hash"] == bytes([1, 2])
    assert rows[1]["initial_transaction_id"] == bytes(
        [10, 6, 8, 210, 133, 216, 204, 4, 18, 2, 24, 3]
    )  # shard/realm 0: not written


def test_schedule_and_signature_defaults(ledger: Ledger, database: Prepared) -> None:
    ledger.load(
        {
            "schedules": [{"consensus_timestamp": "5", "schedule_id": "0.0.2000"}],
            "transactionsignatures": [
                {
                    "consensus_timestamp": "5",
                    "public_key_prefix": [1, 2],
                    "entity_id": "0.0.2000",
                    "signature": "ab",
                }
            ],
        }
    )
    (schedule,) = fetch(database.owner_url, "select * from schedule")
    assert schedule == {
        "consensus_timestamp": 5, "creator_account_id": 1024, "executed_timestamp": None, "payer_account_id": 1024,
        "schedule_id": 2000, "transaction_body": bytes([1, 1, 2, 2, 3, 3]), "expiration_time": None,
        "wait_for_expiry": False,
    }  # fmt: skip
    (signature,) = fetch(database.owner_url, "select * from transaction_signature")
    assert signature == {
        "consensus_timestamp": 5, "public_key_prefix": bytes([1, 2]), "entity_id": 2000, "signature": b"ab",
        "type": None,
    }  # fmt: skip


@pytest.mark.parametrize("given", [False, True])
def test_lookup_rows_generated_per_topic_and_month(ledger: Ledger, database: Prepared, given: bool) -> None:
    february, march = 1_234_567_890_000_000_000, 1_236_567_890_000_000_000
    setup: dict[str, Any] = {
        "topicmessages": [
            {"consensus_timestamp": str(february + 1), "sequence_number": 1, "topic_id": 7},
            {"consensus_timestamp": str(february + 2), "sequence_number": 2, "topic_id": 7},
            {"consensus_timestamp": str(march), "sequence_number": 3, "topic_id": 7},
            {"consensus_timestamp": str(march + 1), "sequence_number": 1, "topic_id": 8},
        ]
    }
    if given:
        setup["topicmessagelookups"] = [
            {"partition": "p", "sequence_number_range": "[1,9]", "timestamp_range": "[1,9]", "topic_id": 7}
        ]

    async def run() -> None:
        conn = await asyncpg.connect(database.owner_url)
        try:
            await load_setup(conn, setup, spec="test", topic_message_lookup=True)
        finally:
            await conn.close()

    ledger.reset()
    asyncio.run(run())
    query = (
        "select topic_id, partition, sequence_number_range::text as s, timestamp_range::text as t "
        "from topic_message_lookup order by topic_id, partition"
    )
    rows = fetch(database.owner_url, query)
    if given:
        assert rows == [{"topic_id": 7, "partition": "p", "s": "[1,10)", "t": "[1,10)"}]
        return
    assert rows == [
        {
            "topic_id": 7,
            "partition": "topic_message_p2009_02",
            "s": "[1,3)",
            "t": f"[{february + 1},{february + 3})",
        },
        {"topic_id": 7, "partition": "topic_message_p2009_03", "s": "[3,4)", "t": f"[{march},{march + 1})"},
        {"topic_id": 8, "partition": "topic_message_p2009_03", "s": "[1,2)", "t": f"[{march + 1},{march + 2})"},
    ]
