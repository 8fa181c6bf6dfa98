"""What the plan tests share (``test_query_plans.py``, ``test_citus_routing.py``): the loaded ledger and the ids
their routes name, the statements a request issues, and the walk over a PostgreSQL plan's nodes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from bench._explain import RecordingDatabase
from starlette.testclient import TestClient
from tests.support import Ledger

from ledgermirror import dataset
from ledgermirror.db.sql import Statement
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.runtime import Prepared


async def load_ids(url: str) -> dict[str, str]:
    conn = await asyncpg.connect(url)
    try:
        await dataset.load(conn, "small", seed=3)
        row = await conn.fetchrow(
            "select e.id, e.public_key, encode(e.evm_address, 'hex') as evm from entity e "
            "where e.type = 'ACCOUNT' and e.evm_address is not null and e.public_key is not null "
            "and exists (select 1 from crypto_allowance where owner = e.id) order by e.id limit 1"
        )
        token = await conn.fetchrow("select token_id from token order by token_id limit 1")
        block = await conn.fetchrow(
            "select index, hash, consensus_end from record_file order by index desc limit 1"
        )
        assert row is not None and token is not None and block is not None
        transaction = await conn.fetchrow(
            "select payer_account_id, valid_start_ns, encode(transaction_hash, 'hex') as hash from transaction "
            "where type = 14 order by consensus_timestamp desc limit 1"
        )
        assert transaction is not None
        contract = await conn.fetchrow("select id from entity where type = 'CONTRACT' order by id limit 1")
        assert contract is not None
        seconds, nanos = divmod(transaction["valid_start_ns"], 10**9)
        nft = await conn.fetchrow(
            "select token_id, serial_number from nft_history order by token_id, serial_number limit 1"
        )
        hook = await conn.fetchrow("select owner_id, hook_id from hook_storage order by owner_id, hook_id limit 1")
        fungible = await conn.fetchrow(
            "select token_id from token where type = 'FUNGIBLE_COMMON' order by token_id limit 1"
        )
        message = await conn.fetchrow(
            "select topic_id, consensus_timestamp from topic_message order by consensus_timestamp limit 1"
        )
        schedule = await conn.fetchrow("select schedule_id, creator_account_id from schedule limit 1")
        log = await conn.fetchrow(
            "select contract_id, consensus_timestamp, topic0, encode(transaction_hash, 'hex') as hash "
            "from contract_log order by consensus_timestamp desc limit 1"
        )
        assert message is not None and schedule is not None and log is not None
        assert nft is not None and hook is not None and fungible is not None
        return {
            "txid": f"0.0.{transaction['payer_account_id']}-{seconds}-{nanos:09d}",
            "contract_entity": f"0.0.{contract['id']}",
            "txhash": transaction["hash"],
            "topic": f"0.0.{message['topic_id']}",
            "message_ts": format_ns(message["consensus_timestamp"]),
            "schedule": f"0.0.{schedule['schedule_id']}",
            "creator": f"0.0.{schedule['creator_account_id']}",
            "account": f"0.0.{row['id']}",
            "evm": row["evm"],
            "key": row["public_key"],
            "token": f"0.0.{token['token_id']}",
            "block": str(block["index"]),
            "hash": block["hash"],
            "ts": f"{block['consensus_end'] // 10**9}.{block['consensus_end'] % 10**9:09d}",
            "nft_token": f"0.0.{nft['token_id']}",
            "serial": str(nft["serial_number"]),
            "fungible": f"0.0.{fungible['token_id']}",
            "hook_owner": f"0.0.{hook['owner_id']}",
            "hook": str(hook["hook_id"]),
            "contract": f"0.0.{log['contract_id']}",
            "log_ts": format_ns(log["consensus_timestamp"]),
            "log_day_before": format_ns(log["consensus_timestamp"] - 86_400 * 10**9),
            "event": bytes(log["topic0"]).hex(),
            "contract_hash": log["hash"],
        }
    finally:
        await conn.close()


@pytest.fixture(scope="module")
def loaded(database: Prepared) -> Iterator[dict[str, str]]:
    """The ``small`` synthetic ledger (seed 3) for the module, and the ids the route templates name."""
    Ledger(database.owner_url).reset()
    yield asyncio.run(load_ids(database.owner_url))
    Ledger(database.owner_url).reset()


def statements_of(client: TestClient, path: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Statement]]:
    """The answer to ``path`` (read, never from the response cache) and every statement the API issued for it."""
    ctx = client.app.state.ctx  # type: ignore[attr-defined]
    ctx.cache.clear()
    recorder = RecordingDatabase(ctx.database)
    monkeypatch.setattr(ctx, "db", recorder)
    response = client.get(path)
    return response, recorder.statements


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of a plan (``EXPLAIN (FORMAT JSON)``'s ``Plan``), depth first."""
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)
