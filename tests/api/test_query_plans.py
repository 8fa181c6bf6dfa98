"""Every query the API sends has an index behind it.

A synthetic ledger is loaded, a representative request of every endpoint is sent, and each statement the API
issued is explained with sequential scans disabled: PostgreSQL then still scans a table sequentially only when
no index can serve the query, which is what this test forbids. (On a small data set the planner would rightly
prefer sequential scans, so the plain plans say nothing; `bench/` checks the chosen plans at mainnet shape.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import asyncpg
import pytest
from bench._explain import RecordingDatabase, explain, seq_scan_tables
from starlette.testclient import TestClient
from tests.support import Ledger

from ledgermirror import dataset
from ledgermirror.db.sql import Statement
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.runtime import Prepared


async def _load(url: str) -> dict[str, str]:
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


URLS = [
    "/api/v1/tokens?limit=5",
    "/api/v1/tokens?token.id=gt:{token}&order=desc",
    "/api/v1/tokens?account.id={account}",
    "/api/v1/tokens?publickey={key}",
    "/api/v1/tokens?type=NON_FUNGIBLE_UNIQUE",
    "/api/v1/accounts?limit=5",
    "/api/v1/accounts?account.id=gte:{account}&limit=3&order=desc",
    "/api/v1/accounts?account.publickey={key}",
    "/api/v1/accounts/{account}",
    "/api/v1/accounts/{evm}",
    "/api/v1/accounts/{account}?timestamp=lte:{ts}",
    "/api/v1/accounts/{account}/allowances/crypto",
    "/api/v1/accounts/{account}/allowances/tokens",
    "/api/v1/accounts/{account}/allowances/nfts",
    "/api/v1/accounts/{account}/rewards",
    "/api/v1/accounts/{account}/nfts",
    "/api/v1/accounts/{account}/airdrops/outstanding",
    "/api/v1/accounts/{account}/airdrops/pending",
    "/api/v1/network/supply",
    "/api/v1/network/supply?timestamp=lte:{ts}",
    "/api/v1/network/stake",
    "/api/v1/network/nodes",
    "/api/v1/network/exchangerate",
    "/api/v1/network/fees",
    "/api/v1/blocks?limit=5",
    "/api/v1/blocks?block.number=gt:5&limit=2",
    "/api/v1/blocks/{block}",
    "/api/v1/blocks/0x{hash}",
    # topics, schedules, balances
    "/api/v1/topics/{topic}",
    "/api/v1/topics/{topic}/messages?limit=5",
    "/api/v1/topics/{topic}/messages?sequencenumber=gt:3&order=desc",
    "/api/v1/topics/{topic}/messages?timestamp=gt:{message_ts}&encoding=utf-8",
    "/api/v1/topics/{topic}/messages/2",
    "/api/v1/topics/messages/{message_ts}",
    "/api/v1/schedules?limit=5",
    "/api/v1/schedules?account.id={creator}",
    "/api/v1/schedules?schedule.id=gt:{schedule}&order=desc",
    "/api/v1/schedules/{schedule}",
    "/api/v1/balances",
    "/api/v1/balances?account.id={account}",
    "/api/v1/balances?account.id={evm}",
    "/api/v1/balances?account.publickey={key}&account.balance=gt:0",
    "/api/v1/balances?timestamp={ts}&order=asc",
    "/api/v1/balances?timestamp={ts}&account.id=gte:{account}",
    "/api/v1/balances?timestamp={ts}&account.publickey={key}",
    # transactions
    "/api/v1/transactions",
    "/api/v1/transactions?order=asc&limit=5",
    "/api/v1/transactions?timestamp=lte:{ts}&timestamp=ne:{ts}",
    "/api/v1/transactions?transactiontype=TOKENMINT",
    "/api/v1/transactions?result=fail",
    "/api/v1/transactions?type=credit",
    "/api/v1/transactions?account.id={account}",
    "/api/v1/transactions?account.id={account}&type=debit&result=success",
    "/api/v1/transactions?account.id={account}&transactiontype=CRYPTOTRANSFER",
    "/api/v1/transactions?account.id=gte:{account}&account.id=lt:0.0.1100",
    "/api/v1/transactions?account.id=0.0.98&limit=3",
    "/api/v1/transactions/{txid}",
    "/api/v1/transactions/{txid}?nonce=0&scheduled=false",
    "/api/v1/transactions/{txhash}",
    # contracts, one contract, its state
    "/api/v1/contracts",
    "/api/v1/contracts?contract.id=gte:{contract_entity}&order=asc",
    "/api/v1/contracts?contract.id={contract_entity}&contract.id=0.0.1",
    "/api/v1/contracts/{contract_entity}",
    "/api/v1/contracts/{contract_entity}?timestamp=lte:{ts}",
    "/api/v1/contracts/{contract_entity}/state",
    "/api/v1/contracts/{contract_entity}/state?slot=gt:1&slot=lte:0x2d&order=desc",
    "/api/v1/contracts/{contract_entity}/state?timestamp=lte:{ts}&slot=gt:1",
    # token routes, account tokens, hooks, registered nodes
    "/api/v1/tokens/{token}",
    "/api/v1/tokens/{token}?timestamp=lte:{ts}",
    "/api/v1/tokens/{fungible}/balances?limit=5",
    "/api/v1/tokens/{fungible}/balances?account.id=gt:{account}&account.balance=gt:0",
    "/api/v1/tokens/{fungible}/balances?account.publickey={key}",
    "/api/v1/tokens/{fungible}/balances?timestamp=lte:{ts}",
    "/api/v1/tokens/{fungible}/balances?timestamp=lte:{ts}&account.publickey={key}",
    "/api/v1/tokens/{nft_token}/nfts",
    "/api/v1/tokens/{nft_token}/nfts?serialnumber=gt:1&account.id=gt:1",
    "/api/v1/tokens/{nft_token}/nfts/{serial}",
    "/api/v1/tokens/{nft_token}/nfts/{serial}/transactions",
    "/api/v1/tokens/{nft_token}/nfts/{serial}/transactions?timestamp=gt:1&order=asc",
    "/api/v1/accounts/{account}/tokens",
    "/api/v1/accounts/{account}/tokens?token.id=gt:{token}&order=desc",
    "/api/v1/accounts/{hook_owner}/hooks",
    "/api/v1/accounts/{hook_owner}/hooks?hook.id=gte:1&hook.id=lte:2",
    "/api/v1/accounts/{hook_owner}/hooks/{hook}/storage",
    "/api/v1/accounts/{hook_owner}/hooks/{hook}/storage?key=gt:0x01&order=desc",
    "/api/v1/accounts/{hook_owner}/hooks/{hook}/storage?timestamp=lte:{ts}",
    "/api/v1/network/registered-nodes",
    "/api/v1/network/registered-nodes?type=BLOCK_NODE&registerednode.id=gte:1",
    # contract logs and actions
    "/api/v1/contracts/results/logs",
    "/api/v1/contracts/results/logs?order=asc&limit=5",
    "/api/v1/contracts/results/logs?timestamp=gte:{log_day_before}&timestamp=lte:{log_ts}&index=gt:0",
    "/api/v1/contracts/results/logs?topic0={event}&timestamp=gte:{log_day_before}&timestamp=lte:{log_ts}",
    "/api/v1/contracts/results/logs?transaction.hash={contract_hash}",
    "/api/v1/contracts/{contract}/results/logs",
    "/api/v1/contracts/{contract}/results/logs?timestamp=lte:{log_ts}&index=lt:1&order=desc",
    "/api/v1/contracts/{contract}/results/logs?topic0={event}&timestamp={log_ts}",
    "/api/v1/contracts/results/{contract_hash}/actions",
    "/api/v1/contracts/results/{txid}/actions",
]


@pytest.fixture(scope="module")
def loaded(database: Prepared) -> Iterator[dict[str, str]]:
    Ledger(database.owner_url).reset()
    yield asyncio.run(_load(database.owner_url))
    Ledger(database.owner_url).reset()


async def _seq_scans(url: str, statements: list[Statement]) -> list[str]:
    conn = await asyncpg.connect(url)
    found: list[str] = []
    try:
        await conn.execute("set enable_seqscan = off")
        for statement in statements:
            plan = await explain(conn, statement)
            found += [f"{name}: {statement.text[:120]}" for name in seq_scan_tables(plan)]
    finally:
        await conn.close()
    return found


@pytest.mark.parametrize("template", URLS)
def test_every_query_has_an_index(
    session_client: TestClient,
    database: Prepared,
    loaded: dict[str, str],
    template: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctx = session_client.app.state.ctx  # type: ignore[attr-defined]
    ctx.cache.clear()
    recorder = RecordingDatabase(ctx.database)
    monkeypatch.setattr(ctx, "db", recorder)
    response = session_client.get(template.format(**loaded))
    assert response.status_code == 200, response.text
    assert recorder.statements, "the request issued no query"
    assert asyncio.run(_seq_scans(database.owner_url, recorder.statements)) == []


def _indexes(plan: dict[str, object]) -> list[str]:
    found = [str(plan["Index Name"])] if "Index Name" in plan else []
    for child in plan.get("Plans", []):  # type: ignore[attr-defined]
        found += _indexes(child)
    return found


def _literal(value: object) -> str:
    """A test's own bound value (integers, integer lists) as SQL text, typed by the prepared statement."""
    if isinstance(value, list):
        return "'{" + ",".join(str(int(item)) for item in value) + "}'"
    assert isinstance(value, int)
    return str(int(value))


async def _generic_plan_indexes(url: str, statement: Statement) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("set plan_cache_mode = force_generic_plan")
        await conn.execute("prepare page as " + statement.text)
        values = ", ".join(_literal(value) for value in statement.args)
        text = await conn.fetchval(f"explain (format json) execute page({values})")
    finally:
        await conn.close()
    return _indexes(json.loads(text)[0]["Plan"])


@pytest.mark.parametrize(
    "template",
    [
        "/api/v1/transactions?account.id={account}",
        "/api/v1/transactions?account.id={account}&type=credit",
        "/api/v1/transactions?account.id={account}&account.id=0.0.1002",
    ],
)
def test_generic_plans_of_account_pages_read_the_account_indexes(
    session_client: TestClient,
    database: Prepared,
    loaded: dict[str, str],
    template: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool's prepared statements switch to a generic plan after a few runs; for a page of one account's
    transactions that plan must still read each source through the account's index, not walk every transaction
    in time order (what PostgreSQL picks when it cannot see the values of unknown timestamp bounds or an array)."""
    ctx = session_client.app.state.ctx  # type: ignore[attr-defined]
    ctx.cache.clear()
    recorder = RecordingDatabase(ctx.database)
    monkeypatch.setattr(ctx, "db", recorder)
    assert session_client.get(template.format(**loaded)).status_code == 200
    (page,) = [statement for statement in recorder.statements if " union" in statement.text]
    used = asyncio.run(_generic_plan_indexes(database.owner_url, page))
    assert "crypto_transfer__entity_id_consensus_timestamp" in used
    assert not {"transaction_pkey", "crypto_transfer__consensus_timestamp"} & set(used), used
