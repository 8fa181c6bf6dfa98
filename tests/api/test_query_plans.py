"""Every query the API sends has an index behind it.

A synthetic ledger is loaded, a representative request of every endpoint is sent, and each statement the API
issued is explained with sequential scans disabled: PostgreSQL then still scans a table sequentially only when
no index can serve the query, which is what this test forbids. (On a small data set the planner would rightly
prefer sequential scans, so the plain plans say nothing; `bench/` checks the chosen plans at mainnet shape.)
"""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest
from bench._explain import explain, seq_scan_tables
from starlette.testclient import TestClient
from tests.api.plans import loaded as loaded  # noqa: PLC0414 (the module fixture, used by name)
from tests.api.plans import nodes, statements_of

from ledgermirror.db.sql import Statement
from ledgermirror.runtime import Prepared

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
    response, statements = statements_of(session_client, template.format(**loaded), monkeypatch)
    assert response.status_code == 200, response.text
    assert statements, "the request issued no query"
    assert asyncio.run(_seq_scans(database.owner_url, statements)) == []


def _indexes(plan: dict[str, object]) -> list[str]:
    return [str(node["Index Name"]) for node in nodes(plan) if "Index Name" in node]


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
    response, statements = statements_of(session_client, template.format(**loaded), monkeypatch)
    assert response.status_code == 200
    (page,) = [statement for statement in statements if " union" in statement.text]
    used = asyncio.run(_generic_plan_indexes(database.owner_url, page))
    assert "crypto_transfer__entity_id_consensus_timestamp" in used
    assert not {"transaction_pkey", "crypto_transfer__consensus_timestamp"} & set(used), used
