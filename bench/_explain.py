"""``bench/explain``: the plan of every query the API issues for each scenario, and a verdict on each.

The API runs in this process on the loaded database; a recording database records every statement a
scenario's requests send; each is explained, and a sequential scan of a large table fails the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
from bench._driver import Post
from bench._scenarios import (
    HASHED_TRANSACTIONS,
    SCENARIOS,
    SEPARATE_SERVICES,
    Sample,
    moments,
    sample_contracts,
    sample_topics,
    transaction_hashes,
)

from ledgermirror.api.app import create_app
from ledgermirror.conformance.inprocess import Lifespan, Reply, get, send_request
from ledgermirror.db.pool import Database
from ledgermirror.db.sql import Statement
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings


class RecordingDatabase(Database):
    """The API's database door, noting every statement that passes through it."""

    def __init__(self, inner: Database) -> None:
        super().__init__(inner.pool, inner.acquire_timeout)
        self.statements: list[Statement] = []

    async def fetch(self, statement: Statement) -> list[asyncpg.Record]:
        self.statements.append(statement)
        return await super().fetch(statement)

    async def fetchval(self, text: str, *args: Any) -> Any:
        self.statements.append(Statement(text, args))
        return await super().fetchval(text, *args)


@dataclass(frozen=True, slots=True)
class Finding:
    url: str
    table: str
    rows: float
    sql: str


def seq_scan_tables(plan: dict[str, Any]) -> list[str]:
    found = [plan["Relation Name"]] if plan.get("Node Type") == "Seq Scan" else []
    for child in plan.get("Plans", []):
        found += seq_scan_tables(child)
    return found


async def explain(conn: asyncpg.Connection, statement: Statement) -> dict[str, Any]:
    text = await conn.fetchval("explain (format json) " + statement.text, *statement.args)
    plan: dict[str, Any] = json.loads(text)[0]["Plan"]
    return plan


async def table_rows(conn: asyncpg.Connection) -> dict[str, float]:
    rows = await conn.fetch("select relname, reltuples from pg_class where relkind in ('r', 'p')")
    return {row["relname"]: float(row["reltuples"]) for row in rows}


async def sample_from_api(app: Any) -> Sample:
    async def fetch(path: str) -> Any:
        reply = await get(app, path)
        return json.loads(reply.body)

    accounts = (await fetch("/api/v1/accounts?limit=50&account.id=gte:0.0.1001&balance=false"))["accounts"]
    tokens = (await fetch("/api/v1/tokens?limit=50"))["tokens"]
    blocks = (await fetch("/api/v1/blocks?limit=10&order=desc"))["blocks"]
    topics, sequences, stamps = await sample_topics(fetch)
    transactions = (await fetch("/api/v1/transactions?limit=50"))["transactions"]
    return Sample(
        accounts=[a["account"] for a in accounts],
        evm_addresses=[a["evm_address"] for a in accounts if a.get("evm_address")],
        aliases=[a["alias"] for a in accounts if a.get("alias")],
        tokens=[t["token_id"] for t in tokens],
        blocks=[str(b["number"]) for b in blocks],
        block_hashes=[b["hash"] for b in blocks],
        topics=topics,
        sequences=sequences,
        message_timestamps=stamps,
        transactions=[t["transaction_id"] for t in transactions],
        transaction_hashes=transaction_hashes((await fetch(HASHED_TRANSACTIONS))["transactions"]),
        moments=moments(blocks),
        contracts=await sample_contracts(fetch),
    )


async def send_in_process(app: Any, request: str | Post) -> tuple[str, Reply]:
    """One scenario request through the app in this process: its label (``POST <path>`` or the URL) and the
    reply."""
    if isinstance(request, Post):
        headers = {"content-type": request.content_type}
        return "POST " + request.path, await send_request(app, "POST", request.path, headers, request.body)
    return request, await get(app, request)


async def run(api_url: str, owner_url: str, *, requests: int, min_rows: float, out: Any) -> list[Finding]:
    app = create_app(Settings(response_cache_entries=0), api_url)
    findings: list[Finding] = []
    conn = await asyncpg.connect(owner_url)
    try:
        sizes = await table_rows(conn)
        async with Lifespan(app):
            recorder = RecordingDatabase(app.state.ctx.database)
            app.state.ctx.db = recorder
            data = await sample_from_api(app)
            for name, builder in SCENARIOS.items():
                if name in SEPARATE_SERVICES:
                    continue
                next_path = builder(data, random.Random(7))
                previous: str | None = None
                print(f"## {name}", file=out)
                for _ in range(requests):
                    request = next_path(previous)
                    recorder.statements.clear()
                    url, reply = await send_in_process(app, request)
                    previous = json.loads(reply.body).get("links", {}).get("next") if reply.status == 200 else None
                    for statement in recorder.statements:
                        plan = await explain(conn, statement)
                        scans = [t for t in seq_scan_tables(plan) if sizes.get(t, 0) >= min_rows]
                        verdict = "SEQ SCAN " + ", ".join(scans) if scans else "ok"
                        print(f"{verdict:<12} {url}\n    {plan['Node Type']} cost={plan['Total Cost']}", file=out)
                        findings += [Finding(url, t, sizes[t], statement.text) for t in scans]
    finally:
        await conn.close()
    return findings


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/explain", description=__doc__)
    p.add_argument("--data-dir", help="the embedded database folder bench/generate filled (default: settings)")
    p.add_argument("--requests", type=int, default=6, help="requests per scenario")
    p.add_argument("--min-rows", type=float, default=10_000, help="a table this large must not be scanned")
    args = p.parse_args(argv)
    settings = Settings.from_env()
    prepared = prepare(settings, data_dir=None if args.data_dir is None else Path(args.data_dir))
    try:
        findings = asyncio.run(
            run(
                prepared.api_url,
                prepared.owner_url,
                requests=args.requests,
                min_rows=args.min_rows,
                out=sys.stdout,
            )
        )
    finally:
        prepared.stop()
    for finding in findings:
        print(f"FAIL sequential scan of {finding.table} ({finding.rows:.0f} rows) for {finding.url}")
    print("explain: no sequential scan of a large table" if not findings else f"explain: {len(findings)} failures")
    return 1 if findings else 0
