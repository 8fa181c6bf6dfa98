"""The embedded server's settings: the throwaway mode the test cluster runs with, the checkpoint spacing and
analyze cadence of every server and the page cache of a durable one, how the blocks are kept in
``postgresql.conf``, and the advice to put a large page cache on huge pages."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from ledgermirror.db.embedded import (
    ANALYZE_SETTINGS,
    CHECKPOINT_SETTINGS,
    DEFAULT_MAX_WAL_SIZE_MB,
    MAX_SHARED_BUFFERS_MB,
    THROWAWAY_SETTINGS,
    EmbeddedPostgres,
    default_shared_buffers_mb,
    huge_pages_advice,
    meminfo_value,
    memory_bytes,
    server_settings,
    write_server_settings,
    write_throwaway_settings,
)
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings


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

    assert asyncio.run(settings()) == {"max_wal_size": "16GB", "checkpoint_timeout": "15min"}


def test_every_embedded_server_analyzes_a_table_once_half_its_rows_changed(database: Prepared) -> None:
    async def settings() -> dict[str, str]:
        conn = await asyncpg.connect(database.owner_url)
        try:
            return {
                name: await conn.fetchval(f"show {name}")
                for name in ("autovacuum", "autovacuum_analyze_scale_factor", "autovacuum_vacuum_scale_factor")
            }
        finally:
            await conn.close()

    # autovacuum stays on and vacuums as PostgreSQL's default does: only the analyzes are spaced out
    assert asyncio.run(settings()) == {
        "autovacuum": "on",
        "autovacuum_analyze_scale_factor": "0.5",
        "autovacuum_vacuum_scale_factor": "0.2",
    }


def test_checkpoint_block_is_first_once_and_kept_up_to_date(tmp_path: Path) -> None:
    conf = tmp_path / "postgresql.conf"
    original = "max_connections = 100\nmax_wal_size = 1GB\n"  # initdb writes max_wal_size: the block comes after
    conf.write_text(original)
    assert write_server_settings(conf, CHECKPOINT_SETTINGS)
    added = conf.read_text()
    assert added.startswith(original) and "max_wal_size = 16384MB\ncheckpoint_timeout = 15min\n" in added
    assert not write_server_settings(conf, CHECKPOINT_SETTINGS)
    assert write_throwaway_settings(conf, throwaway=True)  # the throwaway block goes after it, and back out
    assert write_throwaway_settings(conf, throwaway=False)
    assert conf.read_text() == added
    conf.write_text(added.replace("16384MB", "4GB"))  # an older block is replaced, not repeated
    assert write_server_settings(conf, CHECKPOINT_SETTINGS)
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


def test_an_older_release_checkpoint_block_is_replaced(tmp_path: Path) -> None:
    conf = tmp_path / "postgresql.conf"
    legacy = (
        "# ledgermirror: fewer checkpoints (durable as ever; a crash replays more WAL)\n"
        "max_wal_size = 4GB\ncheckpoint_timeout = 15min\n# ledgermirror: end of checkpoint settings\n"
    )
    conf.write_text("max_connections = 100\n" + legacy)
    assert write_server_settings(conf, {"max_wal_size": "4GB", "shared_buffers": "256MB"})
    text = conf.read_text()
    assert "fewer checkpoints" not in text and "checkpoint_timeout" not in text
    assert text.startswith("max_connections = 100\n") and "shared_buffers = 256MB\n" in text


def test_the_page_cache_is_for_durable_servers_only() -> None:
    every = {**CHECKPOINT_SETTINGS, **ANALYZE_SETTINGS}
    assert server_settings(durable=True, shared_buffers_mb=512) == {**every, "shared_buffers": "512MB"}
    assert server_settings(durable=False, shared_buffers_mb=512) == every
    assert server_settings(durable=True, shared_buffers_mb=0) == every


def test_the_wal_between_checkpoints_is_configured_for_every_server() -> None:
    assert CHECKPOINT_SETTINGS["max_wal_size"] == f"{DEFAULT_MAX_WAL_SIZE_MB}MB" == "16384MB"
    assert Settings().embedded_max_wal_size_mb == DEFAULT_MAX_WAL_SIZE_MB  # the service's default is the same
    for durable in (True, False):
        assert server_settings(durable=durable, shared_buffers_mb=0, max_wal_size_mb=4096) == {
            **CHECKPOINT_SETTINGS,
            **ANALYZE_SETTINGS,
            "max_wal_size": "4096MB",
        }


def test_the_default_page_cache_is_a_quarter_of_the_memory_up_to_8_gib() -> None:
    total_kib = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal:")
    )
    limited = min(total_kib * 1024, memory_bytes())
    expected = max(128, min(MAX_SHARED_BUFFERS_MB, limited // 4 // 2**20))
    assert abs(default_shared_buffers_mb() - expected) <= 1  # MemTotal leaves out what the kernel keeps
    assert default_shared_buffers_mb(2 * 2**30) == 512
    assert default_shared_buffers_mb(256 * 2**20) == 128  # never under initdb's
    assert default_shared_buffers_mb(64 * 2**30) == MAX_SHARED_BUFFERS_MB == 8192


def test_a_containers_memory_limit_bounds_the_memory(tmp_path: Path) -> None:
    v2, v1 = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes"
    machine = memory_bytes(())
    assert machine > 2**30
    v2.write_text("max\n")  # cgroup v2 without a limit
    v1.write_text("9223372036854771712\n")  # cgroup v1 without a limit: a number past any machine
    assert memory_bytes((v2, v1)) == machine
    v2.write_text("2147483648\n")
    assert memory_bytes((v2, v1)) == 2 * 2**30
    assert memory_bytes((tmp_path / "absent", v2)) == 2 * 2**30


def test_a_durable_server_starts_with_its_page_cache_and_takes_a_new_one_at_its_next_start(tmp_path: Path) -> None:
    async def shown(url: str) -> tuple[str, str]:
        conn = await asyncpg.connect(url)
        try:
            return str(await conn.fetchval("show shared_buffers")), str(await conn.fetchval("show max_wal_size"))
        finally:
            await conn.close()

    first = EmbeddedPostgres(tmp_path, shared_buffers_mb=160)
    try:
        assert asyncio.run(shown(first.start())) == ("160MB", "16GB")
    finally:
        first.stop()
    second = EmbeddedPostgres(tmp_path, shared_buffers_mb=192, max_wal_size_mb=2048)
    try:
        assert asyncio.run(shown(second.start())) == ("192MB", "2GB")
    finally:
        second.stop()


# A postmaster's mappings as Linux lists them: the small System V segment PostgreSQL keeps beside its main shared
# memory, then the main one (6 GB of shared_buffers), on normal pages or on huge ones.
_MAPS = """\
55d4c3a00000-55d4c3f3e000 r-xp 00000000 fd:01 1319                       /usr/lib/postgresql/bin/postgres
7ff007754000-7ff007755000 rw-s 00000000 00:01 5406739                    /SYSV0016a016 (deleted)
7ff007755000-7ff189ccf000 rw-s 00000000 00:01 72159                      /dev/zero (deleted)
7ff189ccf000-7ff189cd0000 rw-p 00000000 00:00 0
"""
_HUGE_MAPS = _MAPS.replace("/dev/zero (deleted)", "/anon_hugepage (deleted)")
_MEMINFO = """\
MemTotal:       24590000 kB
HugePages_Total:       0
HugePages_Free:        0
Hugepagesize:       2048 kB
"""
_GB = 2**30


def test_meminfo_values_are_read_in_bytes_or_as_counts() -> None:
    assert meminfo_value(_MEMINFO, "Hugepagesize") == 2 * 2**20
    assert meminfo_value(_MEMINFO, "HugePages_Total") == 0
    assert meminfo_value(_MEMINFO, "Hugetlb") is None


def test_a_large_page_cache_on_normal_pages_gets_the_count_and_the_setting() -> None:
    # 0x7ff189ccf000 - 0x7ff007755000 bytes are 3,090.7 pages of 2 MB: PostgreSQL 16 reported
    # shared_memory_size_in_huge_pages = 3091 for this server (docs/performance.md, eleventh session).
    advice = huge_pages_advice(_MAPS, _MEMINFO, worth_bytes=_GB)
    assert advice is not None
    assert "3,091 huge pages of 2,048 kB" in advice and "sysctl -w vm.nr_hugepages=3091" in advice
    # pages other programs hold stay reserved for them; free ones enough already need only a restart
    held = _MEMINFO.replace("HugePages_Total:       0", "HugePages_Total:     500").replace(
        "HugePages_Free:        0", "HugePages_Free:      100"
    )
    assert "vm.nr_hugepages=3491" in str(huge_pages_advice(_MAPS, held, worth_bytes=_GB))
    enough = held.replace("HugePages_Free:      100", "HugePages_Free:     3100")
    assert "3,100 of the system's huge pages are free: restart" in str(
        huge_pages_advice(_MAPS, enough, worth_bytes=_GB)
    )


def test_no_advice_on_huge_pages_for_a_small_cache_or_without_the_systems_figures() -> None:
    assert huge_pages_advice(_HUGE_MAPS, _MEMINFO, worth_bytes=_GB) is None
    assert huge_pages_advice(_MAPS, _MEMINFO, worth_bytes=7 * _GB) is None
    assert huge_pages_advice(_MAPS, "MemTotal: 1 kB\n", worth_bytes=_GB) is None  # no huge pages on this system
    assert huge_pages_advice("", _MEMINFO, worth_bytes=_GB) is None


def test_the_advice_on_a_running_server_counts_what_postgresql_counts(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path, shared_buffers_mb=160)
    try:
        url = server.start()

        async def needed() -> int:
            conn = await asyncpg.connect(url)
            try:
                return int(await conn.fetchval("show shared_memory_size_in_huge_pages"))
            finally:
                await conn.close()

        advice = server.huge_pages_advice(worth_bytes=0)
        if advice is None:  # the system had huge pages free, and the server took them
            assert "HugePages_Free" in Path("/proc/meminfo").read_text()
        else:
            assert f"on {asyncio.run(needed()):,} huge pages of " in advice
        assert server.huge_pages_advice() is None  # 160 MB is not worth the operator's time
    finally:
        server.stop()
