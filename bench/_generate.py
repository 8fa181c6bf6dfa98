"""``bench/generate``: a migrated database filled with a synthetic ledger of a given profile, in our layout or
the reference's (``--layout reference``: ``bench/reference_layout.sql`` applied after the load)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from ledgermirror import dataset
from ledgermirror.db.roles import ensure_api_role
from ledgermirror.db.sql import template
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings

LAYOUTS = ("ours", "reference")
REFERENCE_LAYOUT = Path(__file__).resolve().parent / "reference_layout.sql"
PARTITIONED = ("account_balance", "token_balance", "transaction_hash")
"""The tables the reference partitions (``reference_layout.sql``)."""


async def fill(url: str, profile: str, seed: int) -> dict[str, int] | None:
    conn = await asyncpg.connect(url)
    try:
        if await dataset.is_loaded(conn):
            return None
        started = time.monotonic()
        last = [0.0]

        def progress(table: str, rows: int) -> None:
            now = time.monotonic()
            if now - last[0] >= 5:
                last[0] = now
                print(f"  {now - started:6.0f} s  {table}: {rows:,} rows", file=sys.stderr)

        return await dataset.load(conn, profile, seed=seed, progress=progress)
    finally:
        await conn.close()


async def apply_reference_layout(
    conn: asyncpg.Connection, api_role: str, *, partitions_since: date | None = None
) -> list[str]:
    """Partition the reference's partitioned tables and give the API's tables the reference's indexes (a no-op
    on a database already in that layout); the tables analyzed again. Returns the partitioned tables.
    ``partitions_since``: monthly partitions from that month on, the ones before the rows empty."""
    async with conn.transaction():
        since = "" if partitions_since is None else partitions_since.isoformat()
        setting = template("select set_config('bench.partitions_since', {since}, true)", since=since)
        await conn.execute(setting.text, *setting.args)
        await conn.execute(REFERENCE_LAYOUT.read_text())
    await ensure_api_role(conn, api_role)
    for table in (*PARTITIONED, "token", "address_book", "nft_history"):
        await conn.execute(f'analyze "{table}"')
    partitioned = template(
        "select relname from pg_class where relkind = 'p' and relname = any({names}::text[]) order by relname",
        names=list(PARTITIONED),
    )
    rows = await conn.fetch(partitioned.text, *partitioned.args)
    return [row["relname"] for row in rows]


async def reshape(url: str, api_role: str, partitions_since: date | None) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        return await apply_reference_layout(conn, api_role, partitions_since=partitions_since)
    finally:
        await conn.close()


async def vacuum(url: str) -> None:
    """``VACUUM (ANALYZE)`` the whole database: a table fresh from ``COPY`` has no visibility map yet, so its
    index-only scans read the heap until autovacuum has visited it, and when that happens would decide the
    figures (on ``small``, the account page's transaction-key statement read 44 buffers instead of 27)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("vacuum (analyze)")
    finally:
        await conn.close()


async def create_database(url: str) -> bool:
    """Create the database a URL names when its server has no such database yet; True when created."""
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    if not name:
        return False
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    conn = await asyncpg.connect(maintenance)
    try:
        exists = template("select true from pg_database where datname = {name}", name=name)
        if await conn.fetchval(exists.text, *exists.args):
            return False
        await conn.execute(f'create database "{name}"')
        return True
    finally:
        await conn.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/generate", description=__doc__)
    p.add_argument("--profile", choices=sorted(dataset.PROFILES), default="small")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--data-dir", type=Path, help="embedded database folder (ignored when LEDGERMIRROR_DB_URL is set)"
    )
    p.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="ours",
        help="reference: partition account_balance, token_balance, transaction_hash and use the reference's "
        "indexes (bench/reference_layout.sql), also over a database already loaded",
    )
    p.add_argument(
        "--partitions-since",
        type=date.fromisoformat,
        help="with --layout reference: monthly partitions from this date's month on (empty before the rows), "
        "as a database importing since then has them (mainnet: 2019-09-01)",
    )
    args = p.parse_args(argv)
    settings = Settings.from_env()
    if settings.db_url and asyncio.run(create_database(settings.db_url)):
        print("created the database", file=sys.stderr)
    prepared = prepare(settings, data_dir=args.data_dir, run_migrations=True)
    started = time.monotonic()
    try:
        counts = asyncio.run(fill(prepared.owner_url, args.profile, args.seed))
        if counts is None:
            print("the database already holds a ledger; nothing loaded")
        else:
            print(
                f"loaded {sum(counts.values()):,} rows ({args.profile}, seed {args.seed}) in "
                f"{time.monotonic() - started:.0f} s"
            )
        if args.layout == "reference":
            began = time.monotonic()
            partitioned = asyncio.run(reshape(prepared.owner_url, settings.api_role, args.partitions_since))
            print(f"reference layout ({', '.join(partitioned)} partitioned) in {time.monotonic() - began:.0f} s")
        if counts is not None or args.layout == "reference":
            began = time.monotonic()
            asyncio.run(vacuum(prepared.owner_url))
            print(f"vacuumed in {time.monotonic() - began:.0f} s")
    finally:
        prepared.stop()
    return 0
