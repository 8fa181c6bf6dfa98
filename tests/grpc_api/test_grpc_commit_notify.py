"""The importer announces each commit (``db/commit_notify.notify_commit``) from both run loops, record streams
and block streams: one announcement per committed transaction, at its commit, carrying its newest consensus
time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest
from tests.support import Ledger

from ledgermirror.db.commit_notify import CHANNEL, committed_timestamp
from ledgermirror.importer.cutover import run_stream
from ledgermirror.importer.pipeline import ImportOptions
from ledgermirror.runtime import Prepared
from ledgermirror.simulator.run import INITIAL_BALANCES, simulate


@pytest.mark.parametrize("fmt", ["records", "blocks"])
def test_each_commit_is_announced(database: Prepared, ledger: Ledger, tmp_path: Path, fmt: str) -> None:
    stream = tmp_path / fmt
    simulate(stream, nodes=2, seconds=10, tps=20, seed=3, fmt=fmt)
    options = ImportOptions(
        once=True,
        address_book=stream / "addressbook.bin",
        initial_balances=stream / INITIAL_BALANCES,
        files_per_transaction=2,
    )

    async def run() -> tuple[list[int], int, int]:
        listener = await asyncpg.connect(database.owner_url)
        heard: list[int] = []
        await listener.add_listener(CHANNEL, lambda *args: heard.append(committed_timestamp(args[3]) or -1))
        importer = await asyncpg.connect(database.owner_url)
        try:
            stats = await run_stream(importer, str(stream), options, "records" if fmt == "records" else "blocks")
            newest = await importer.fetchval("select max(consensus_end) from record_file")
            await asyncio.sleep(0.5)  # notifications arrive asynchronously
        finally:
            await importer.close()
            await listener.close()
        return heard, stats.commits, newest

    heard, commits, newest = asyncio.run(run())
    assert commits >= 3
    assert len(heard) == commits
    assert heard == sorted(set(heard))
    assert heard[-1] == newest
