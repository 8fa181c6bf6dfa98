"""``bench/generate --layout reference`` on the test server: the reference's tables partitioned, the API's answers
to every scenario's requests the same as on our layout."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from bench._driver import Post
from bench._explain import sample_from_api
from bench._scenarios import SCENARIOS, SEPARATE_SERVICES

from bench import _generate
from ledgermirror import dataset
from ledgermirror.api.app import create_app
from ledgermirror.conformance.inprocess import Lifespan, get
from ledgermirror.db.migrate import migrate
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

_REQUESTS = 4


def _database_url(owner_url: str, name: str) -> str:
    return urlunsplit(urlsplit(owner_url)._replace(path="/" + name))


async def _answers(url: str) -> dict[str, tuple[int, Any]]:
    app = create_app(Settings(response_cache_entries=0), url)
    answers: dict[str, tuple[int, Any]] = {}
    async with Lifespan(app):
        data = await sample_from_api(app)
        for name, builder in SCENARIOS.items():
            if name in SEPARATE_SERVICES:
                continue
            next_path = builder(data, random.Random(3))
            previous: str | None = None
            for _ in range(_REQUESTS):
                request = next_path(previous)
                if isinstance(request, Post):
                    break
                reply = await get(app, request)
                body = json.loads(reply.body) if reply.body else None
                answers[request] = (reply.status, body)
                previous = body.get("links", {}).get("next") if isinstance(body, dict) else None
    return answers


async def _layout_round_trip(url: str) -> tuple[dict[str, tuple[int, Any]], dict[str, tuple[int, Any]], Any]:
    conn = await asyncpg.connect(url)
    try:
        await migrate(conn)
        await dataset.load(conn, "small", seed=1)
        before = await _answers(url)
        partitioned = await _generate.apply_reference_layout(conn, "mirror_api")
        assert await _generate.apply_reference_layout(conn, "mirror_api") == partitioned  # again: a no-op
        after = await _answers(url)
        catalog = await conn.fetch(
            """select parent.relname as parent, count(*) as partitions
               from pg_inherits join pg_class parent on parent.oid = inhparent
               join pg_class child on child.oid = inhrelid and child.relkind = 'r'
               group by parent.relname order by parent.relname"""
        )
        indexes = await conn.fetch("select indexname from pg_indexes where tablename in ('token', 'address_book')")
        months = await conn.fetchval(
            "select count(distinct date_trunc('month', to_timestamp(consensus_timestamp / 1e9))) "
            "from account_balance"
        )
        return before, after, (partitioned, catalog, [row["indexname"] for row in indexes], months)
    finally:
        await conn.close()


def test_reference_layout_partitions_the_tables_and_keeps_every_answer(database: Prepared) -> None:
    name = "reference_layout_check"
    maintenance = _database_url(database.owner_url, "postgres")

    async def create() -> None:
        conn = await asyncpg.connect(maintenance)
        try:
            await conn.execute(f"drop database if exists {name}")
            await conn.execute(f"create database {name}")
        finally:
            await conn.close()

    async def drop() -> None:
        conn = await asyncpg.connect(maintenance)
        try:
            await conn.execute(f"drop database if exists {name} with (force)")
        finally:
            await conn.close()

    asyncio.run(create())
    try:
        before, after, (partitioned, catalog, indexes, months) = asyncio.run(
            _layout_round_trip(_database_url(database.owner_url, name))
        )
    finally:
        asyncio.run(drop())
    assert partitioned == ["account_balance", "token_balance", "transaction_hash"]
    counts = {row["parent"]: row["partitions"] for row in catalog}
    assert counts["transaction_hash"] == 32
    assert counts["account_balance"] == counts["token_balance"] == months + 1  # one per month, and the default
    assert "token__type_token_id" not in indexes
    assert "address_book__file_id_start_consensus_timestamp" not in indexes
    assert any("/balances?" in url and "timestamp=" in url for url in before)
    by_hash = [status for url, (status, _) in before.items() if "/transactions/" in url and len(url) > 96]
    assert by_hash and set(by_hash) == {200}  # hash lookups found their rows
    assert sum(status == 200 for status, _ in before.values()) > len(before) * 0.9
    assert after == before
