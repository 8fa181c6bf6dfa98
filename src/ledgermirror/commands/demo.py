"""``ledgermirror demo``: an embedded PostgreSQL in its own demo folder, a small synthetic ledger loaded once,
and the REST API on it."""

from __future__ import annotations

import argparse
import asyncio
import sys

import asyncpg

from ledgermirror import dataset
from ledgermirror.commands.serve import can_listen, serve
from ledgermirror.exits import EXIT_CANNOT_LISTEN, EXIT_USAGE
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror demo`` (``cli.COMMANDS``)."""
    if not can_listen(settings):
        return EXIT_CANNOT_LISTEN
    if settings.db_url:
        print(
            "ledgermirror: demo always uses its own embedded database; unset LEDGERMIRROR_DB_URL",
            file=sys.stderr,
        )
        return EXIT_USAGE
    prepared = prepare(settings, data_dir=settings.data_dir / "demo")

    async def load() -> None:
        conn = await asyncpg.connect(prepared.owner_url)
        try:
            if not await dataset.is_loaded(conn):
                counts = await dataset.load(conn, "small")
                print(f"demo data loaded: {sum(counts.values())} rows", file=sys.stderr)
        finally:
            await conn.close()

    asyncio.run(load())
    return serve(settings, log_format, prepared, "Ledger Mirror demo, with the API's docs at")
