"""Building the next transaction while this one is written (``ImportOptions.overlap``,
``LEDGERMIRROR_IMPORT_OVERLAP``): the same simulated streams imported with and without it end with the same rows
in every table, wall-clock columns aside; and a write that fails in the background leaves nothing of its
transaction or of the one built after it.

The simulator's stream creates accounts by alias (ECDSA keys: their EVM addresses) and contracts by EVM address
and names them in later files; three files a transaction put creations and uses in different transactions, so
the overlapped build reads aliases and EVM addresses that the transaction being written creates (the test checks
that some of those reads waited for its commit). Balance snapshots every 30 s of consensus time, the stream's
node stake updates and 0.0.102 updates make transactions that write as they go; a ``mixed`` stream (v2, v5,
then v6 files) renumbers the older files' indexes at the first v6 file."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from tests.importer.test_import_crash import _digest
from tests.support import Ledger

from ledgermirror.importer.balance_snapshots import SnapshotRules
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.pipeline import run_import
from ledgermirror.importer.progress import ImportStats
from ledgermirror.importer.sources import open_store
from ledgermirror.runtime import Prepared
from ledgermirror.simulator.run import INITIAL_BALANCES, simulate

SECOND = 1_000_000_000


@pytest.fixture(scope="module")
def evm_stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("overlap-evm")
    simulate(out, nodes=2, seconds=120, tps=40, seed=5, evm_contracts=True)
    return out


@pytest.fixture(scope="module")
def mixed_stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("overlap-mixed")
    simulate(out, nodes=2, seconds=90, tps=30, seed=6, record_version="mixed")
    return out


def _options(stream: Path, *, overlap: bool, **more: Any) -> ImportOptions:
    return ImportOptions(
        once=True,
        address_book=stream / "addressbook.bin",
        initial_balances=stream / INITIAL_BALANCES,
        files_per_transaction=3,
        balance_snapshots=SnapshotRules(min_frequency_ns=30 * SECOND, initial_delay_ns=10 * SECOND),
        overlap=overlap,
        **more,
    )


def _import(url: str, stream: Path, options: ImportOptions) -> ImportStats:
    async def go() -> ImportStats:
        conn = await asyncpg.connect(url)
        try:
            return await run_import(conn, open_store(str(stream)), options)
        finally:
            await conn.close()

    return asyncio.run(go())


def _both(database: Prepared, ledger: Ledger, stream: Path) -> tuple[dict[str, str], dict[str, str], ImportStats]:
    url = database.owner_url
    sequential = _import(url, stream, _options(stream, overlap=False))
    assert sequential.overlapped == 0
    expected = asyncio.run(_digest(url))
    ledger.reset()
    overlapped = _import(url, stream, _options(stream, overlap=True))
    # the writer (kept from one listing of the source to the next) ends with the import: no thread left behind
    assert not [thread for thread in threading.enumerate() if thread.name == "ledgermirror-writer"]
    assert overlapped.files == sequential.files
    assert overlapped.items == sequential.items
    assert overlapped.commits == sequential.commits
    return expected, asyncio.run(_digest(url)), overlapped


def test_the_evm_stream_overlapped_ends_with_the_sequential_tables(
    database: Prepared, ledger: Ledger, evm_stream: Path
) -> None:
    expected, found, stats = _both(database, ledger, evm_stream)
    assert found == expected
    assert stats.tables["contract"] > 0
    assert stats.tables["account_balance_file"] > 1
    # the run's first snapshot is taken in a transaction that writes as it goes, later ones in the background
    assert 0 < stats.background_snapshots < stats.tables["account_balance_file"]
    assert stats.overlapped > stats.commits // 2  # most transactions were written while the next was built
    # lookups of what the transaction being written creates waited for it, or were answered after it
    assert stats.waited_reads + stats.deferred_reads > 0
    assert stats.deferred_reads > 0


def test_a_mixed_version_stream_overlapped_ends_with_the_sequential_tables(
    database: Prepared, ledger: Ledger, mixed_stream: Path
) -> None:
    expected, found, stats = _both(database, ledger, mixed_stream)
    assert found == expected
    assert stats.overlapped > 0


_FAIL = """
create function overlap_test_fail() returns trigger language plpgsql as $$
begin
    if new.name = '{name}' then
        raise exception 'refused by the test';
    end if;
    return new;
end $$;
create trigger overlap_test_fail before insert on record_file for each row execute function overlap_test_fail();
"""
_UNFAIL = "drop trigger overlap_test_fail on record_file; drop function overlap_test_fail();"


def test_a_failed_background_write_leaves_nothing_of_it_or_of_the_next(
    database: Prepared, ledger: Ledger, evm_stream: Path
) -> None:
    url = database.owner_url
    names = [path.name for path in (evm_stream / "recordstreams").rglob("*Z.rcd.gz")]  # not sidecars
    files = sorted(set(names))
    failing = files[22]  # in the eighth transaction or so (three files each, fewer where a snapshot ends one)
    ledger.execute(_FAIL.format(name=failing))
    try:
        with pytest.raises(asyncpg.RaiseError, match="refused by the test"):
            _import(url, evm_stream, _options(evm_stream, overlap=True))

        async def stored() -> list[str]:
            conn = await asyncpg.connect(url)
            try:
                return [row["name"] for row in await conn.fetch("select name from record_file order by name")]
            finally:
                await conn.close()

        kept = asyncio.run(stored())
    finally:
        ledger.execute(_UNFAIL)
    # every transaction before the failing one committed (it holds the failing file and at most two before it);
    # nothing of it nor after it
    assert kept == files[: len(kept)] and 20 <= len(kept) <= 22
    resumed = _import(url, evm_stream, _options(evm_stream, overlap=True))
    assert resumed.files == len(files) - len(kept)
    after = asyncio.run(_digest(url))
    ledger.reset()
    _import(url, evm_stream, _options(evm_stream, overlap=False))
    assert after == asyncio.run(_digest(url))
