"""The statements of the API's hot routes can be routed to one Citus shard group: every distributed table they
read (``db/citus.DISTRIBUTED``) is read through a condition on its distribution column (``column = value``, ``=
ANY(...)``, or a join on it), so Citus can send the statement to the one worker holding that entity's rows.

Citus is not installed here: the plans are PostgreSQL's (hash and merge joins and sequential scans off, so each
scan shows the condition it is driven by). Routes that read by time across every entity (the global lists:
``/transactions``, ``/blocks``, ``/contracts/results``) are multi-shard by nature, as in the reference, and
are not listed."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest
from bench._explain import RecordingDatabase
from starlette.testclient import TestClient
from tests.api.test_query_plans import _load
from tests.support import Ledger

from ledgermirror.db.citus import DISTRIBUTED
from ledgermirror.db.sql import Statement
from ledgermirror.runtime import Prepared

COLUMN = {item.table: item.column for item in DISTRIBUTED}
HOT_ROUTES = [
    "/api/v1/accounts/{account}?transactions=false",
    "/api/v1/accounts/{account}/tokens",
    "/api/v1/accounts/{account}/allowances/crypto",
    "/api/v1/accounts/{account}/allowances/tokens",
    "/api/v1/accounts/{account}/allowances/nfts",
    "/api/v1/accounts/{account}/rewards",
    "/api/v1/tokens/{token}",
    "/api/v1/tokens/{token}/nfts",
    "/api/v1/topics/{topic}/messages",
    "/api/v1/topics/{topic}",
    "/api/v1/contracts/{contract_entity}",
    "/api/v1/contracts/{contract_entity}/results",
    "/api/v1/contracts/{contract_entity}/results/logs",
    "/api/v1/contracts/{contract_entity}/state",
    "/api/v1/schedules/{schedule}",
]


@pytest.fixture(scope="module")
def loaded(database: Prepared) -> Iterator[dict[str, str]]:
    Ledger(database.owner_url).reset()
    yield asyncio.run(_load(database.owner_url))
    Ledger(database.owner_url).reset()


def _unrouted(plan: dict[str, Any]) -> list[str]:
    """The distributed tables a plan reads without a condition on their distribution column."""
    found = []
    table = plan.get("Relation Name")
    if table in COLUMN:
        conditions = " ".join(str(plan.get(key, "")) for key in ("Index Cond", "Recheck Cond", "Filter"))
        column = re.escape(COLUMN[table])
        if not re.search(rf"\b{column}\)?(::\w+)? = ", conditions):
            found.append(f"{table} ({plan['Node Type']}: {conditions.strip() or 'no condition'})")
    for child in plan.get("Plans", []):
        found += _unrouted(child)
    return found


async def _unrouted_of(url: str, statements: list[Statement]) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        for setting in ("enable_seqscan", "enable_hashjoin", "enable_mergejoin"):
            await conn.execute(f"set {setting} = off")
        found = []
        for statement in statements:
            text = await conn.fetchval("explain (format json) " + statement.text, *statement.args)
            found += [f"{item} in: {statement.text[:160]}" for item in _unrouted(json.loads(text)[0]["Plan"])]
        return found
    finally:
        await conn.close()


MULTI_SHARD = {
    "/api/v1/accounts/{account}/nfts": "nft",
}
"""Hot routes that stay multi-shard under the reference's layout, and the table that makes them so: ``nft`` is
distributed by ``token_id`` (a token's NFTs together), and an account's NFTs span every token. The reference has
the same fan-out; an ``nft`` copy by owner would be the cure, at the price of a second write per change."""


@pytest.mark.parametrize("template", HOT_ROUTES)
def test_a_hot_route_reads_each_distributed_table_by_its_distribution_column(
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
    assert recorder.statements
    assert asyncio.run(_unrouted_of(database.owner_url, recorder.statements)) == []


@pytest.mark.parametrize("template", MULTI_SHARD)
def test_a_multi_shard_hot_route_is_known_for_the_table_that_makes_it_so(
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
    assert session_client.get(template.format(**loaded)).status_code == 200
    unrouted = asyncio.run(_unrouted_of(database.owner_url, recorder.statements))
    assert unrouted and {item.split(" ", 1)[0] for item in unrouted} == {MULTI_SHARD[template]}
