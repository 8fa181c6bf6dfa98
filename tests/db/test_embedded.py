"""The embedded server's throwaway mode: what the test cluster runs with, and how the setting is kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from ledgermirror.db.embedded import (
    CHECKPOINT_SETTINGS,
    THROWAWAY_SETTINGS,
    write_checkpoint_settings,
    write_throwaway_settings,
)
from ledgermirror.runtime import Prepared


def test_the_test_cluster_is_a_throwaway_one(database: Prepared) -> None:
    async def settings() -> dict[str, str]:
        conn = await asyncpg.connect(database.owner_url)
        try:
            return {name: await conn.fetchval(f"show {name}") for name in THROWAWAY_SETTINGS}
        finally:
            await conn.close()

    assert asyncio.run(settings()) == {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def test_every_embedded_server_checkpoints_less_often(database: Prepared) -> None:
    async def settings() -> dict[str, str]:
        conn = await asyncpg.connect(database.owner_url)
        try:
            return {name: await conn.fetchval(f"show {name}") for name in CHECKPOINT_SETTINGS}
        finally:
            await conn.close()

    assert asyncio.run(settings()) == {"max_wal_size": "4GB", "checkpoint_timeout": "15min"}


def test_checkpoint_block_is_first_once_and_kept_up_to_date(tmp_path: Path) -> None:
    conf = tmp_path / "postgresql.conf"
    original = "max_connections = 100\nmax_wal_size = 1GB\n"  # initdb writes max_wal_size: the block comes after
    conf.write_text(original)
    assert write_checkpoint_settings(conf)
    added = conf.read_text()
    assert added.startswith(original) and "max_wal_size = 4GB\ncheckpoint_timeout = 15min\n" in added
    assert not write_checkpoint_settings(conf)
    assert write_throwaway_settings(conf, throwaway=True)  # the throwaway block goes after it, and back out
    assert write_throwaway_settings(conf, throwaway=False)
    assert conf.read_text() == added
    conf.write_text(added.replace("4GB", "2GB"))  # an older block is replaced, not repeated
    assert write_checkpoint_settings(conf)
    assert conf.read_text() == added


def test_settings_block_is_added_once_and_removed_for_a_durable_server(tmp_path: Path) -> None:
    conf = tmp_path / "postgresql.conf"
    original = "max_connections = 100\n# a comment without a newline at the end"
    conf.write_text(original)
    assert not write_throwaway_settings(conf, throwaway=False)
    assert write_throwaway_settings(conf, throwaway=True)
    added = conf.read_text()
    assert added.startswith(original + "\n")
    assert "fsync = off\n" in added and "full_page_writes = off\n" in added
    assert not write_throwaway_settings(conf, throwaway=True)
    assert conf.read_text() == added
    assert write_throwaway_settings(conf, throwaway=False)
    assert conf.read_text() == original + "\n"
