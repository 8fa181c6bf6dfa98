"""Tampered streams are refused by the import, naming the file and the check, and nothing of the refused file
is written (the files before it, verified, are)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest
from tests.importer.fixtures import BOOKS, EXPECTED, FIRST, NODE_IDS, SECOND, SIGNING_BOOK
from tests.importer.importing import copy_streams, flip, node_file, rewrite_gzip, run, table_counts
from tests.support import Ledger

from ledgermirror.importer.errors import StreamFileError
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.pipeline import run_import
from ledgermirror.importer.sources import open_store
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

FIRST_DATA, FIRST_SIG = f"{FIRST}.rcd.gz", f"{FIRST}.rcd_sig"
SECOND_DATA, SECOND_SIG = f"{SECOND}.rcd.gz", f"{SECOND}.rcd_sig"
SIDECAR = f"sidecar/{SECOND}_01.rcd.gz"


def _refused(url: str, root: Path) -> StreamFileError:
    with pytest.raises(StreamFileError) as refused:
        run(url, root)
    return refused.value


def _assert_nothing_written(url: str) -> None:
    assert table_counts(url) == {}


@pytest.fixture
def streams(tmp_path: Path) -> Path:
    return copy_streams(tmp_path / "streams")


@pytest.fixture
def first_only(database: Prepared, ledger: Ledger, tmp_path: Path) -> dict[str, int]:
    """The tables after importing only the first (valid) file, on a clean database afterwards."""
    run(database.owner_url, copy_streams(tmp_path / "reference"), end=EXPECTED[FIRST].consensus_end)
    counts = table_counts(database.owner_url)
    ledger.reset()
    return counts


def test_a_flipped_byte_in_every_copy_of_a_record_file(database: Prepared, streams: Path) -> None:
    for node_id in NODE_IDS:
        rewrite_gzip(node_file(streams, node_id, FIRST_DATA), lambda data: flip(data, -40))
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (FIRST_DATA, "file hash")
    assert FIRST_DATA in str(error)
    _assert_nothing_written(database.owner_url)


def test_a_corrupt_gzip_stream_is_a_parse_error(database: Prepared, streams: Path) -> None:
    for node_id in NODE_IDS:
        path = node_file(streams, node_id, FIRST_DATA)
        path.write_bytes(flip(path.read_bytes(), -6))  # in the gzip trailer's CRC
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (FIRST_DATA, "parse")
    _assert_nothing_written(database.owner_url)


def test_one_tampered_copy_is_replaced_by_another_nodes(database: Prepared, streams: Path) -> None:
    rewrite_gzip(node_file(streams, 0, FIRST_DATA), lambda data: flip(data, -40))
    stats = run(database.owner_url, streams)
    assert stats.files == 2
    assert stats.cost.node_fallbacks >= 1


def test_flipped_signatures_below_one_third(database: Prepared, streams: Path) -> None:
    for node_id in NODE_IDS[1:]:  # 1 of 4 valid: one third needs 2
        path = node_file(streams, node_id, FIRST_SIG)
        path.write_bytes(flip(path.read_bytes(), -100))
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (FIRST_SIG, "consensus")
    assert "1/4" in str(error)
    _assert_nothing_written(database.owner_url)


def test_signature_files_dropped_below_one_third(database: Prepared, streams: Path) -> None:
    for node_id in NODE_IDS[1:]:
        node_file(streams, node_id, FIRST_SIG).unlink()
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (FIRST_SIG, "consensus")
    _assert_nothing_written(database.owner_url)


def test_signature_files_swapped_between_nodes(database: Prepared, streams: Path) -> None:
    signatures = {node_id: node_file(streams, node_id, FIRST_SIG).read_bytes() for node_id in NODE_IDS}
    for node_id in NODE_IDS:  # every node now holds its neighbour's signature file
        node_file(streams, node_id, FIRST_SIG).write_bytes(signatures[(node_id + 1) % len(NODE_IDS)])
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (FIRST_SIG, "consensus")
    assert "does not verify" in str(error)
    _assert_nothing_written(database.owner_url)


def test_record_files_swapped_between_timestamps(database: Prepared, streams: Path) -> None:
    for node_id in NODE_IDS:
        first, second = node_file(streams, node_id, FIRST_DATA), node_file(streams, node_id, SECOND_DATA)
        first_bytes, second_bytes = first.read_bytes(), second.read_bytes()
        first.write_bytes(second_bytes)
        second.write_bytes(first_bytes)
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (FIRST_DATA, "file hash")
    _assert_nothing_written(database.owner_url)


def test_a_flipped_byte_in_a_sidecar(database: Prepared, streams: Path, first_only: dict[str, int]) -> None:
    for node_id in NODE_IDS:
        rewrite_gzip(node_file(streams, node_id, SIDECAR), lambda data: flip(data, -20))
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (f"{SECOND}_01.rcd.gz", "sidecar hash")
    assert table_counts(database.owner_url) == first_only  # the verified first file only


def test_a_missing_sidecar(database: Prepared, streams: Path, first_only: dict[str, int]) -> None:
    for node_id in NODE_IDS:
        node_file(streams, node_id, SIDECAR).unlink()
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (SECOND_DATA, "sidecar")
    assert table_counts(database.owner_url) == first_only


def test_reordered_files_break_the_chain(database: Prepared, streams: Path) -> None:
    """The second file's files renamed to an instant before the first: it imports first (nothing to chain
    to), and the original first file no longer continues the chain."""
    early = "2022-07-13T08_46_00.000000000Z"
    for node_id in NODE_IDS:
        for suffix in (".rcd.gz", ".rcd_sig"):
            node_file(streams, node_id, SECOND + suffix).rename(node_file(streams, node_id, early + suffix))
        node_file(streams, node_id, SIDECAR).rename(node_file(streams, node_id, f"sidecar/{early}_01.rcd.gz"))
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (FIRST_DATA, "previous hash")
    counts = table_counts(database.owner_url)
    assert counts["record_file"] == 1
    assert counts["transaction"] == 2  # the moved file's two items, not the refused file's one


def test_a_file_missing_from_every_node_that_signed(database: Prepared, streams: Path) -> None:
    for node_id in NODE_IDS:
        node_file(streams, node_id, FIRST_DATA).unlink()
    error = _refused(database.owner_url, streams)
    assert (error.file_name, error.check) == (FIRST_DATA, "download")
    _assert_nothing_written(database.owner_url)


def test_an_address_book_that_does_not_sign_the_stream(database: Prepared, streams: Path) -> None:
    with pytest.raises(StreamFileError) as refused:
        run(database.owner_url, streams, book=BOOKS / "test-v6-4n.bin")
    assert refused.value.check == "consensus"
    _assert_nothing_written(database.owner_url)


def test_refused_files_are_retried_in_follow_mode(database: Prepared, streams: Path) -> None:
    """Following, a refused file is retried (with backoff) until it verifies: here once the other nodes'
    signature files arrive; until then nothing is written."""
    saved = {node_id: node_file(streams, node_id, FIRST_SIG).read_bytes() for node_id in NODE_IDS}
    for node_id in NODE_IDS[1:]:
        node_file(streams, node_id, FIRST_SIG).unlink()

    async def stored_files() -> int:
        conn = await asyncpg.connect(database.owner_url)
        try:
            return int(await conn.fetchval("select count(*) from record_file"))
        finally:
            await conn.close()

    async def follow() -> tuple[int, int]:
        stop = asyncio.Event()
        conn = await asyncpg.connect(database.owner_url)
        options = ImportOptions(address_book=SIGNING_BOOK, poll_seconds=0.05, max_poll_seconds=0.2)
        task = asyncio.create_task(run_import(conn, open_store(str(streams)), options, stop=stop))
        await asyncio.sleep(0.5)
        before = await stored_files()
        for node_id in NODE_IDS:
            node_file(streams, node_id, FIRST_SIG).write_bytes(saved[node_id])
        for _ in range(100):
            await asyncio.sleep(0.1)
            if await stored_files() == 2:
                break
        stop.set()
        stats = await asyncio.wait_for(task, 10)
        await conn.close()
        return before, stats.files

    assert asyncio.run(follow()) == (0, 2)
