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
from typing import Any

import asyncpg
import pytest
from starlette.testclient import TestClient
from tests.api.plans import loaded as loaded  # noqa: PLC0414 (the module fixture, used by name)
from tests.api.plans import nodes, statements_of

from ledgermirror.db.citus import DISTRIBUTED
from ledgermirror.db.sql import Statement
from ledgermirror.runtime import Prepared

COLUMN = {item.table: item.column for item in DISTRIBUTED}
HOT_ROUTES = [
    "/api/v1/accounts/{account}?transactions=false",
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


def _aliases(plan: dict[str, Any]) -> dict[str, str]:
    """Each scan's alias in a plan, and the table it reads."""
    return {
        str(node.get("Alias", node["Relation Name"])): str(node["Relation Name"])
        for node in nodes(plan)
        if "Relation Name" in node
    }


def _routed(conditions: str, column: str, aliases: dict[str, str]) -> bool:
    """Whether ``conditions`` pin ``column`` to given values (a constant, a parameter, an array of them), or to
    the distribution column of another table of the statement (a colocated join)."""
    for match in re.finditer(rf"\b{re.escape(column)}\)?(?:::\w+)? = (?:ANY \()?\(?([^)\s]+)", conditions):
        value = match.group(1)
        if value.startswith(("'", "$")) or value[0].isdigit():
            return True
        alias, _, other = value.partition(".")
        if other and COLUMN.get(aliases.get(alias, "")) == other:
            return True
    return False


def _unrouted(plan: dict[str, Any]) -> list[str]:
    """The distributed tables a plan reads without pinning their distribution column."""
    aliases = _aliases(plan)
    found = []
    for node in nodes(plan):
        table = node.get("Relation Name")
        if table in COLUMN:
            conditions = " ".join(str(node.get(key, "")) for key in ("Index Cond", "Recheck Cond", "Filter"))
            if not _routed(conditions, COLUMN[table], aliases):
                found.append(f"{table} ({node['Node Type']}: {conditions.strip() or 'no condition'})")
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
    "/api/v1/accounts/{account}/tokens": "token",
}
"""Hot routes that stay multi-shard under the reference's layout, and the table that makes them so: ``nft`` is
distributed by ``token_id`` (a token's NFTs together), and an account's NFTs span every token; an account's
token associations (``token_account``, by ``account_id``) join each token's row (``token``, by ``token_id``),
on other shards. The reference has the same fan-out; the cures (an ``nft`` copy by owner, the few columns of
``token`` the list shows kept on ``token_account``) cost a second write per change."""


@pytest.mark.parametrize("template", HOT_ROUTES)
def test_a_hot_route_reads_each_distributed_table_by_its_distribution_column(
    session_client: TestClient,
    database: Prepared,
    loaded: dict[str, str],
    template: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    response, statements = statements_of(session_client, template.format(**loaded), monkeypatch)
    assert response.status_code == 200, response.text
    assert statements
    assert asyncio.run(_unrouted_of(database.owner_url, statements)) == []


@pytest.mark.parametrize("template", MULTI_SHARD)
def test_a_multi_shard_hot_route_is_known_for_the_table_that_makes_it_so(
    session_client: TestClient,
    database: Prepared,
    loaded: dict[str, str],
    template: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    response, statements = statements_of(session_client, template.format(**loaded), monkeypatch)
    assert response.status_code == 200
    unrouted = asyncio.run(_unrouted_of(database.owner_url, statements))
    assert unrouted and {item.split(" ", 1)[0] for item in unrouted} == {MULTI_SHARD[template]}
