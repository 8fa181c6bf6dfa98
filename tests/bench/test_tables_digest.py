"""``bench/tables`` on a tiny import: the same database digests the same; a changed row changes its table's digest
only; a wall-clock column does not count; ``--against`` exits 1 on a difference."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import asyncpg

from bench import _import, _tables
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings
from ledgermirror.simulator.run import simulate


async def _change(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("update record_file set load_end = load_end + 1")
        await conn.execute(
            "update crypto_transfer set amount = amount + 1 where consensus_timestamp = "
            "(select min(consensus_timestamp) from crypto_transfer)"
        )
    finally:
        await conn.close()


def test_digests_name_the_changed_table_only(tmp_path: Path) -> None:
    data_dir, stream = tmp_path / "db", tmp_path / "stream"
    simulate(stream, seconds=4, tps=10, nodes=1, seed=5)
    arguments = ["--stream", str(stream), "--no-fsync", "--no-copy-limit"]
    assert _import.main([*arguments, "--data-dir", str(data_dir), "--timeout", "300"]) == 0
    first = tmp_path / "first.json"
    assert _tables.main([str(data_dir), "--json", str(first)]) == 0
    digests = json.loads(first.read_text())
    assert digests["transaction"][0] > 0 and digests["crypto_transfer"][0] > 0
    assert _tables.main([str(data_dir), "--against", str(first)]) == 0

    prepared = prepare(Settings(), data_dir=data_dir, durable=False)
    try:
        asyncio.run(_change(prepared.owner_url))
    finally:
        prepared.stop()
    second = tmp_path / "second.json"
    assert _tables.main([str(data_dir), "--json", str(second), "--against", str(first)]) == 1
    assert _tables.differing(digests, json.loads(second.read_text())) == ["crypto_transfer"]
