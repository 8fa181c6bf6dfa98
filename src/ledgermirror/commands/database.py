"""``ledgermirror db migrate [--citus]`` and ``ledgermirror db url``."""

from __future__ import annotations

import argparse
import asyncio
import sys

import asyncpg

from ledgermirror.db.citus import CitusUnavailable, apply
from ledgermirror.db.embedded import mask_password
from ledgermirror.exits import EXIT_DATABASE
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror db ...`` (``cli.COMMANDS``): apply the migrations (and the Citus layout with ``--citus``), or
    print the owner URL (masked)."""
    prepared = prepare(settings, run_migrations=args.db_command == "migrate")
    try:
        if args.db_command == "url":
            print(mask_password(prepared.owner_url))
            return 0
        print("migrations applied")
        if getattr(args, "citus", False):
            try:
                tables = asyncio.run(_citus(prepared.owner_url))
            except CitusUnavailable as error:
                print(f"ledgermirror: {error}", file=sys.stderr)
                return EXIT_DATABASE
            print(f"citus layout applied ({len(tables)} tables distributed or made reference tables)")
    finally:
        prepared.stop()
    return 0


async def _citus(url: str) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        return await apply(conn)
    finally:
        await conn.close()
