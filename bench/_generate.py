"""``bench/generate``: a migrated database filled with a synthetic ledger of a given profile."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import asyncpg

from ledgermirror import dataset
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings


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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/generate", description=__doc__)
    p.add_argument("--profile", choices=sorted(dataset.PROFILES), default="small")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--data-dir", type=Path, help="embedded database folder (ignored when LEDGERMIRROR_DB_URL is set)"
    )
    args = p.parse_args(argv)
    settings = Settings.from_env()
    prepared = prepare(settings, data_dir=args.data_dir, run_migrations=True)
    started = time.monotonic()
    try:
        counts = asyncio.run(fill(prepared.owner_url, args.profile, args.seed))
    finally:
        prepared.stop()
    if counts is None:
        print("the database already holds a ledger; nothing loaded")
        return 0
    print(
        f"loaded {sum(counts.values()):,} rows ({args.profile}, seed {args.seed}) in "
        f"{time.monotonic() - started:.0f} s"
    )
    return 0
