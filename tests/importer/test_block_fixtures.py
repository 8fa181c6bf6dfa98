"""The reference's block stream fixtures (``data/blockstreams/.../{007,008,016}.blk.zstd``): read, root hashes,
the 7 -> 8 chain, refusals, and their ``record_file`` rows (``fees-and-streams.md`` D,
``importer-transaction-handlers.md`` §7.1)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
import zstandard
from starlette.testclient import TestClient
from tests.importer.fixtures import SIGNING_BOOK, STREAMS
from tests.importer.importing import fetch
from tests.support import Ledger

from ledgermirror.importer.address_book import read_address_book
from ledgermirror.importer.block_file import read_block
from ledgermirror.importer.block_source import FileBlockSource, SourceBlock, block_name, decompress
from ledgermirror.importer.block_verify import BlockLink, verify_block
from ledgermirror.importer.errors import (
    BlockNumberMismatch,
    BlockProofRejected,
    PreviousHashMismatch,
    StreamParseError,
)
from ledgermirror.importer.sources import open_store
from ledgermirror.runtime import Prepared

BLOCKS = STREAMS / "data" / "blockstreams"
ROOTS = {
    7: "8b98440b3fa8b13d9d7f82e92ceb246c9707cf6c11ba38997385e7ea1097f06d752736753fe40b9ff06096211a11066a",
    8: "78ef36dc7c7cb57cfb212966b768a0fbc9b0f5045574c6b3bfa0cccdcef9401b7edda1cf05ada60dedd7e0b435e0d81d",
    16: "c61a2439f0754008932fe10155ce2c61b32457d6ec30e632a71eafeeef44b1df64b1cfd966c6325c0c5766431f5441f9",
}
PREVIOUS = {
    7: "e11e44567f5ca4ae23b75467b75d83c8880d0888f5c4154f08b8f221bf269b2e4f3f1686e8dcb9694beaaf287313b0fb",
    8: ROOTS[7],
    16: "449c52f8efe0e284aac3a0961efb2403a7337a0fc519c1b5231a07ce6d3eae9e9b9d8809782202a5fd40048ddd533098",
}
ITEMS = {7: 80, 8: 80, 16: 76}
TRANSACTIONS = {7: 1, 8: 1, 16: 0}
CONSENSUS_START = {7: 1770842061390565879, 8: 1770842063775529380, 16: 1770842078844243554}
ROUNDS = {7: (179, 213), 8: (214, 248), 16: (493, 527)}
BOOK = read_address_book(SIGNING_BOOK.read_bytes())


def source_block(number: int) -> SourceBlock:
    path = BLOCKS / "0000" / "0000" / "0000" / "0000" / f"{number:03d}.blk.zstd"
    stored = path.read_bytes()
    data = zstandard.ZstdDecompressor().decompress(stored, max_output_size=1 << 30)
    return SourceBlock(number, block_name(number), data, len(stored))


@pytest.mark.parametrize("number", [7, 8, 16])
def test_each_fixture_reads_with_the_reference_values(number: int) -> None:
    block = read_block(block_name(number), source_block(number).data)
    assert block.number == number
    assert len(block.items) == ITEMS[number]
    assert len(block.transactions) == TRANSACTIONS[number]
    assert block.root_hash().hex() == ROOTS[number]
    assert block.previous_root_hash.hex() == PREVIOUS[number]
    assert (block.round_start, block.round_end) == ROUNDS[number]
    assert block.wrapped is None
    verified = verify_block(source_block(number), BOOK, None)
    assert verified.record.consensus_start == CONSENSUS_START[number]
    assert verified.record.count == TRANSACTIONS[number]
    assert (verified.proof, verified.proof_verified) == ("tss", False)


def test_block_8_continues_block_7_and_16_does_not() -> None:
    seven = verify_block(source_block(7), BOOK, None)
    eight = verify_block(source_block(8), BOOK, seven.link())
    assert eight.block.previous_root_hash == seven.root_hash
    with pytest.raises(BlockNumberMismatch, match="Non-consecutive block number, previous = 8, current = 16"):
        verify_block(source_block(16), BOOK, eight.link())
    as_if_15 = BlockLink(15, seven.root_hash, None)
    with pytest.raises(PreviousHashMismatch) as refused:
        verify_block(source_block(16), BOOK, as_if_15)
    assert refused.value.check == "previous hash"
    assert "Previous hash mismatch for file 0000000000000000016.blk.zstd" in str(refused.value)


def test_a_block_named_for_another_number_or_damaged_is_refused() -> None:
    seven = source_block(7)
    with pytest.raises(BlockNumberMismatch, match="from filename = 9, from content = 7"):
        verify_block(SourceBlock(9, block_name(9), seven.data, seven.size), BOOK, None)
    with pytest.raises(StreamParseError):
        verify_block(SourceBlock(7, seven.name, seven.data[:-40], seven.size), BOOK, None)
    # a native block's TSS proof is not checked here: a changed byte shows in its root hash, which the next
    # block's footer does not continue
    flipped = bytearray(seven.data)
    flipped[len(flipped) // 2] ^= 0x01
    changed = verify_block(SourceBlock(7, seven.name, bytes(flipped), seven.size), BOOK, None)
    assert changed.root_hash.hex() != ROOTS[7]
    with pytest.raises(PreviousHashMismatch):
        verify_block(source_block(8), BOOK, changed.link())


def test_the_file_source_finds_the_block_tree_and_reads_in_order() -> None:
    async def go() -> list[int]:
        source = FileBlockSource(open_store(str(STREAMS / "data")))
        assert await source.root() == "blockstreams"
        assert await source.first_number() == 7
        return [block.number async for block in source.blocks(None)]

    assert asyncio.run(go()) == [7, 8]  # block 9 is not there: the source has nothing more for now


def test_the_fixture_blocks_import_as_version_7_rows(database: Prepared, ledger: Ledger, tmp_path: Path) -> None:
    from tests.importer.blocks_support import import_stream

    root = tmp_path / "source"
    shutil.copytree(BLOCKS, root / "blockstreams")
    (root / "addressbook.bin").write_bytes(SIGNING_BOOK.read_bytes())
    stats = import_stream(database.owner_url, root, "blocks", initial_balances=None)
    assert stats.files == 2
    rows = fetch(database.owner_url, "select * from record_file order by index")
    assert [row["index"] for row in rows] == [7, 8]
    for row in rows:
        number = row["index"]
        assert row["name"] == block_name(number)
        assert row["version"] == 7
        assert row["hash"] == ROOTS[number]
        assert row["prev_hash"] == PREVIOUS[number]
        assert row["file_hash"] == ""
        assert row["count"] == 1
        assert row["consensus_start"] == row["consensus_end"] == CONSENSUS_START[number]
        assert (row["round_start"], row["round_end"]) == ROUNDS[number]
        assert (row["hapi_version_major"], row["hapi_version_minor"], row["hapi_version_patch"]) == (0, 73, 0)
        assert row["software_version_minor"] == 73
        assert row["gas_used"] == 0
        assert row["size"] == source_block(number).size
    status = fetch(database.owner_url, "select * from import_status")[0]
    assert (status["stream"], status["last_index"], status["last_proof"]) == ("blocks", 8, "tss")
    assert not status["last_proof_verified"]
    assert (status["chain_only_blocks"], status["first_chain_only_index"]) == (2, 7)
    transactions = fetch(database.owner_url, "select consensus_timestamp, result from transaction order by 1")
    assert [row["consensus_timestamp"] for row in transactions] == [CONSENSUS_START[7], CONSENSUS_START[8]]
    assert import_stream(database.owner_url, root, "blocks", initial_balances=None).files == 0  # a rerun


def test_imported_blocks_are_served_by_the_blocks_routes(
    database: Prepared, client: TestClient, tmp_path: Path
) -> None:
    from tests.importer.blocks_support import import_stream

    shutil.copytree(BLOCKS, tmp_path / "blockstreams")
    (tmp_path / "addressbook.bin").write_bytes(SIGNING_BOOK.read_bytes())
    assert import_stream(database.owner_url, tmp_path, "blocks", initial_balances=None).files == 2
    listed = client.get("/api/v1/blocks?order=asc").json()["blocks"]
    assert [block["number"] for block in listed] == [7, 8]
    eight = client.get("/api/v1/blocks/8").json()
    assert eight["hash"] == "0x" + ROOTS[8]
    assert eight["previous_hash"] == "0x" + ROOTS[7]
    assert eight["name"] == block_name(8)
    assert (eight["count"], eight["hapi_version"]) == (1, "0.73.0")
    seconds, nanos = divmod(CONSENSUS_START[8], 10**9)
    assert eight["timestamp"] == {"from": f"{seconds}.{nanos:09d}", "to": f"{seconds}.{nanos:09d}"}
    assert client.get("/api/v1/blocks/0x" + ROOTS[7]).json()["number"] == 7


def test_verified_proofs_can_be_required(database: Prepared, ledger: Ledger, tmp_path: Path) -> None:
    from tests.importer.blocks_support import import_stream

    shutil.copytree(BLOCKS, tmp_path / "blockstreams")
    (tmp_path / "addressbook.bin").write_bytes(SIGNING_BOOK.read_bytes())
    with pytest.raises(BlockProofRejected, match="tss proof cannot be verified here") as refused:
        import_stream(database.owner_url, tmp_path, "blocks", initial_balances=None, require_verified_proofs=True)
    assert refused.value.file_name == block_name(7)
    assert fetch(database.owner_url, "select count(*) from record_file")[0][0] == 0


def test_zstd_frames_with_and_without_a_stated_size_and_truncated_ones() -> None:
    stored = (BLOCKS / "0000" / "0000" / "0000" / "0000" / "007.blk.zstd").read_bytes()
    content = source_block(7).data
    assert decompress(block_name(7), stored) == content
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(content)
    assert decompress(block_name(7), unsized) == content
    assert decompress(block_name(7, compressed=False), content) == content  # .blk is not compressed
    for truncated in (stored[:-20], unsized[:-5], b"not zstd"):
        with pytest.raises(StreamParseError, match="zstd"):
            decompress(block_name(7), truncated)
