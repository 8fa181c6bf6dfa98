"""The reference's v6 fixtures parse and verify with the values of fees-and-streams.md B.5."""

from __future__ import annotations

import gzip
import hashlib

import pytest
from tests.importer.fixtures import (
    BOOKS,
    EXPECTED,
    FIRST,
    NODE_IDS,
    RECORDS,
    SECOND,
    SIDECAR_HASH,
    SIGNING_BOOK,
    record_bytes,
    sidecar_bytes,
    signature_bytes,
    signatures,
)

from ledgermirror.importer.address_book import AccountId, read_address_book
from ledgermirror.importer.errors import SignatureRejected, StreamParseError
from ledgermirror.importer.record_file import SemanticVersion
from ledgermirror.importer.record_file_reader import read_record_file, unpack_record_file
from ledgermirror.importer.running_hash import fold, item_hash, running_hash
from ledgermirror.importer.sidecar_file import read_sidecar_file
from ledgermirror.importer.signature_file import read_signature_file
from ledgermirror.importer.stream_names import data_name_of_signature, instant_of, sidecar_name
from ledgermirror.importer.verify import ChainLink, reach_consensus, verify_node_signature, verify_stream_file

pytestmark = pytest.mark.skipif(not RECORDS.is_dir(), reason="reference stream fixtures not present")


@pytest.mark.parametrize("stamp", [FIRST, SECOND])
@pytest.mark.parametrize("node_id", NODE_IDS)
def test_record_file_values(stamp: str, node_id: int) -> None:
    expected = EXPECTED[stamp]
    record = read_record_file(f"{stamp}.rcd.gz", record_bytes(stamp, node_id))
    assert record.version == 6
    assert record.hapi_version == SemanticVersion(0, 28, 0)
    assert record.block_number == expected.block_number
    assert record.count == expected.count
    assert (record.consensus_start, record.consensus_end) == (expected.consensus_start, expected.consensus_end)
    assert record.size == expected.size
    assert record.file_hash.hex() == expected.file_hash
    assert record.metadata_hash is not None
    assert record.metadata_hash.hex() == expected.metadata_hash
    assert record.previous_hash.hex() == expected.previous_hash
    assert record.hash.hex() == expected.hash
    assert [item.consensus_timestamp for item in record.items] == sorted(
        {expected.consensus_start, expected.consensus_end}
    )


@pytest.mark.parametrize("stamp", [FIRST, SECOND])
def test_unpacked_on_another_thread_reads_the_same(stamp: str) -> None:
    """The importer decompresses and hashes a file on a worker thread (``unpack_record_file``) and parses it
    after: the same file as reading it at once, its file hash the SHA-384 of the content."""
    name, data = f"{stamp}.rcd.gz", record_bytes(stamp)
    unpacked = unpack_record_file(name, data)
    assert unpacked.content == gzip.decompress(data)
    assert unpacked.content_hash is not None and unpacked.content_hash.hex() == EXPECTED[stamp].file_hash
    assert read_record_file(name, data, unpacked) == read_record_file(name, data)


def test_unpacking_refuses_a_bad_gzip_stream_and_hashes_only_v6() -> None:
    data = record_bytes(FIRST)
    with pytest.raises(StreamParseError, match="bad gzip stream"):
        unpack_record_file(f"{FIRST}.rcd.gz", data[:-12])
    legacy = (5).to_bytes(4, "big") + b"rest of a v5 file"
    assert unpack_record_file("legacy.rcd", legacy).content_hash is None


def test_running_hash_recomputed_from_the_items() -> None:
    for stamp in (FIRST, SECOND):
        record = read_record_file(f"{stamp}.rcd.gz", record_bytes(stamp))
        pairs = [(item.record_bytes, item.transaction_bytes) for item in record.items]
        assert running_hash(record.previous_hash, pairs).hex() == EXPECTED[stamp].hash
        folded = record.previous_hash
        for record_part, transaction_part in pairs:
            folded = fold(folded, item_hash(record_part, transaction_part))
        assert folded.hex() == EXPECTED[stamp].hash
        # The item bytes are the file's own: the record and transaction are found verbatim in the file.
        content = gzip.decompress(record_bytes(stamp))
        assert all(item.record_bytes in content and item.transaction_bytes in content for item in record.items)


def test_sidecar_metadata_and_file() -> None:
    record = read_record_file(f"{SECOND}.rcd.gz", record_bytes(SECOND))
    assert len(record.sidecars) == 1
    listed = record.sidecars[0]
    assert (listed.id, listed.types, listed.hash.hex()) == (1, (1, 3), SIDECAR_HASH)
    sidecar = read_sidecar_file(sidecar_name(record.name, 1), sidecar_bytes())
    assert sidecar.name == f"{SECOND}_01.rcd.gz"
    assert sidecar.hash.hex() == SIDECAR_HASH
    assert sidecar.size == 279
    stamps = [r.consensus_timestamp.seconds * 10**9 + r.consensus_timestamp.nanos for r in sidecar.records]
    assert stamps == [1657701971304284003, 1657701971304284004]
    assert sidecar.types == {1, 3}


@pytest.mark.parametrize("stamp", [FIRST, SECOND])
def test_signature_files_parse_and_verify(stamp: str) -> None:
    book = read_address_book(SIGNING_BOOK.read_bytes())
    for node_id in NODE_IDS:
        name, data = signature_bytes(stamp, node_id)
        assert len(data) == 925
        signature = read_signature_file(name, data)
        assert signature.version == 6
        assert signature.file_hash.hex() == EXPECTED[stamp].file_hash
        assert signature.metadata_hash is not None
        assert signature.metadata_hash.hex() == EXPECTED[stamp].metadata_hash
        assert len(signature.file_signature) == 384
        node = book.node(node_id)
        assert node is not None
        verify_node_signature(signature, node)


@pytest.mark.parametrize("book_name", ["test-v6-4n.bin", "test-v1", "testnet"])
def test_signatures_do_not_verify_against_other_books(book_name: str) -> None:
    book = read_address_book((BOOKS / book_name).read_bytes(), book_name)
    for node_id in NODE_IDS:
        signature = read_signature_file(*signature_bytes(FIRST, node_id))
        node = book.node(node_id)
        assert node is not None
        with pytest.raises(SignatureRejected) as refused:
            verify_node_signature(signature, node)
        assert refused.value.node_id == node_id
        assert refused.value.check == "signature"


@pytest.mark.parametrize("book_name", ["test-v6-sidecar-4n.bin", "test-v6-4n.bin", "test-v1", "testnet"])
def test_address_books(book_name: str) -> None:
    book = read_address_book((BOOKS / book_name).read_bytes(), book_name)
    assert [entry.node_id for entry in book.nodes] == [0, 1, 2, 3]
    assert [entry.account for entry in book.nodes] == [AccountId(0, 0, n) for n in (3, 4, 5, 6)]
    assert all(entry.public_key.key_size == 3072 for entry in book.nodes)
    assert all(entry.stake in (None, 1) for entry in book.nodes)
    assert book.node_of_account(AccountId(0, 0, 5)) == book.node(2)


def test_the_two_files_verify_as_a_chain() -> None:
    book = read_address_book(SIGNING_BOOK.read_bytes())
    first = verify_stream_file(f"{FIRST}.rcd.gz", record_bytes(FIRST), signatures(FIRST), book, None)
    assert first.consensus.agreed[0].node_ids == NODE_IDS
    assert first.consensus.rejected == ()
    assert (first.consensus.total_stake, first.consensus.required_stake) == (4, 2)
    second = verify_stream_file(
        f"{SECOND}.rcd.gz",
        record_bytes(SECOND, 2),
        signatures(SECOND),
        book,
        first.link(),
        sidecars={1: sidecar_bytes(SECOND, 3)},
    )
    assert second.record.block_number == 6
    assert [sidecar.hash.hex() for sidecar in second.sidecars] == [SIDECAR_HASH]
    assert second.link() == ChainLink(
        f"{SECOND}.rcd.gz", bytes.fromhex(EXPECTED[SECOND].hash), EXPECTED[SECOND].consensus_end, 6
    )


def test_stake_from_outside_the_book_weighs_the_consensus() -> None:
    book = read_address_book(SIGNING_BOOK.read_bytes())
    parsed = {n: read_signature_file(*signature_bytes(FIRST, n)) for n in NODE_IDS}
    heavy = reach_consensus(FIRST, {0: parsed[0]}, book, stakes={0: 10, 1: 1, 2: 1, 3: 1})
    assert (heavy.agreed[0].stake, heavy.total_stake, heavy.required_stake) == (10, 13, 5)


def test_names() -> None:
    assert instant_of(f"record0.0.3/{SECOND}.rcd.gz") == EXPECTED[SECOND].consensus_start
    assert instant_of("2019-10-11T13_33_25.526889Z.rcd_sig") == 1570800805526889000
    assert instant_of("2019-10-11T13_33_25Z.rcd") == 1570800805000000000
    assert data_name_of_signature(f"{FIRST}.rcd_sig", 6) == f"{FIRST}.rcd.gz"
    assert data_name_of_signature(f"{FIRST}.rcd_sig", 5) == f"{FIRST}.rcd"
    assert sidecar_name(f"{SECOND}.rcd.gz", 1) == f"{SECOND}_01.rcd.gz"
    assert hashlib.sha384(gzip.decompress(sidecar_bytes())).hexdigest() == SIDECAR_HASH
