"""Tampered fixtures are refused with the typed error of the check that catches them."""

from __future__ import annotations

import gzip

import pytest
from tests.importer.fixtures import (
    FIRST,
    NODE_IDS,
    RECORDS,
    SECOND,
    SIGNING_BOOK,
    record_bytes,
    sidecar_bytes,
    signatures,
)

from ledgermirror.importer.address_book import AddressBook, read_address_book
from ledgermirror.importer.errors import (
    ConsensusNotReached,
    FileHashMismatch,
    PreviousHashMismatch,
    SidecarHashMismatch,
    SidecarMissing,
    SignatureRejected,
    StreamFileError,
    StreamParseError,
)
from ledgermirror.importer.record_file_reader import read_record_file
from ledgermirror.importer.verify import ChainLink, VerifiedRecordFile, verify_stream_file

pytestmark = pytest.mark.skipif(not RECORDS.is_dir(), reason="reference stream fixtures not present")


@pytest.fixture(scope="module")
def book() -> AddressBook:
    return read_address_book(SIGNING_BOOK.read_bytes())


@pytest.fixture(scope="module")
def first(book: AddressBook) -> VerifiedRecordFile:
    return verify_stream_file(f"{FIRST}.rcd.gz", record_bytes(FIRST), signatures(FIRST), book, None)


def flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


def verify_second(
    book: AddressBook,
    previous: ChainLink | None,
    *,
    data: bytes | None = None,
    sigs: dict[int, tuple[str, bytes]] | None = None,
    sidecar: bytes | None = None,
    with_sidecar: bool = True,
) -> VerifiedRecordFile:
    return verify_stream_file(
        f"{SECOND}.rcd.gz",
        record_bytes(SECOND) if data is None else data,
        signatures(SECOND) if sigs is None else sigs,
        book,
        previous,
        sidecars={1: sidecar_bytes() if sidecar is None else sidecar} if with_sidecar else {},
    )


def test_untampered_second_file_verifies(book: AddressBook, first: VerifiedRecordFile) -> None:
    assert verify_second(book, first.link()).record.count == 2


def test_flipped_byte_in_the_record_content_is_a_file_hash_mismatch(
    book: AddressBook, first: VerifiedRecordFile
) -> None:
    content = gzip.decompress(record_bytes(SECOND))
    transaction = read_record_file(f"{SECOND}.rcd.gz", record_bytes(SECOND)).items[1].transaction_bytes
    at = content.index(transaction) + len(transaction) // 2  # inside opaque bytes: the file still parses
    with pytest.raises(FileHashMismatch) as refused:
        verify_second(book, first.link(), data=gzip.compress(flip(content, at), mtime=0))
    assert (refused.value.file_name, refused.value.check) == (f"{SECOND}.rcd.gz", "file hash")
    assert str(refused.value).startswith(f"File hash mismatch for file {SECOND}.rcd.gz. Expected = ed518c8d")


def test_flipped_byte_in_the_compressed_record_file_is_refused(
    book: AddressBook, first: VerifiedRecordFile
) -> None:
    data = record_bytes(SECOND)
    with pytest.raises(StreamParseError) as refused:
        verify_second(book, first.link(), data=flip(data, len(data) - 6))  # the gzip CRC
    assert "gzip" in refused.value.detail


def test_flipped_byte_in_one_signature_file_drops_that_node(book: AddressBook, first: VerifiedRecordFile) -> None:
    sigs = signatures(SECOND)
    name, data = sigs[1]
    sigs[1] = (name, flip(data, 200))  # inside the file signature
    verified = verify_second(book, first.link(), sigs=sigs)
    assert verified.consensus.agreed[0].node_ids == (0, 2, 3)
    [rejected] = verified.consensus.rejected
    assert isinstance(rejected, SignatureRejected)
    assert (rejected.node_id, rejected.file_name) == (1, f"{SECOND}.rcd_sig")


@pytest.mark.parametrize("index", [5, 200, 500, 880, 924])
def test_flipped_bytes_in_three_signature_files_refuse_the_file(
    book: AddressBook, first: VerifiedRecordFile, index: int
) -> None:
    sigs = signatures(SECOND)
    for node_id in (0, 1, 3):
        name, data = sigs[node_id]
        sigs[node_id] = (name, flip(data, index))
    with pytest.raises(ConsensusNotReached) as refused:
        verify_second(book, first.link(), sigs=sigs)
    assert refused.value.check == "consensus"
    assert "with 1/4 stake" in refused.value.detail


def test_flipped_byte_in_the_sidecar_is_a_sidecar_hash_mismatch(
    book: AddressBook, first: VerifiedRecordFile
) -> None:
    content = gzip.decompress(sidecar_bytes())
    tampered = gzip.compress(flip(content, len(content) - 3), mtime=0)
    with pytest.raises(SidecarHashMismatch) as refused:
        verify_second(book, first.link(), sidecar=tampered)
    assert refused.value.file_name == f"{SECOND}_01.rcd.gz"
    with pytest.raises(SidecarMissing):
        verify_second(book, first.link(), with_sidecar=False)


@pytest.mark.parametrize(("kept", "reached"), [((2,), False), ((0, 3), True), ((), False), ((1, 2, 3), True)])
def test_signatures_below_one_third_refuse_the_file(
    book: AddressBook, first: VerifiedRecordFile, kept: tuple[int, ...], reached: bool
) -> None:
    sigs = signatures(SECOND, kept)
    if reached:
        assert verify_second(book, first.link(), sigs=sigs).consensus.agreed[0].node_ids == kept
    else:
        with pytest.raises(ConsensusNotReached):
            verify_second(book, first.link(), sigs=sigs)


def test_stake_decides_not_the_count(book: AddressBook) -> None:
    stakes = {0: 10, 1: 1, 2: 1, 3: 1}
    args = (f"{FIRST}.rcd.gz", record_bytes(FIRST))
    assert (
        verify_stream_file(*args, signatures(FIRST, (0,)), book, None, stakes=stakes).consensus.total_stake == 13
    )
    with pytest.raises(ConsensusNotReached) as refused:
        verify_stream_file(*args, signatures(FIRST, (1, 2, 3)), book, None, stakes=stakes)
    assert "with 3/13 stake" in refused.value.detail


def test_signature_files_swapped_between_nodes(book: AddressBook, first: VerifiedRecordFile) -> None:
    sigs = signatures(SECOND)
    # Each node's signature only verifies with its own key.
    rotated = {node_id: sigs[(node_id + 1) % 4] for node_id in NODE_IDS}
    with pytest.raises(ConsensusNotReached):
        verify_second(book, first.link(), sigs=rotated)
    pair = dict(sigs)
    pair[0], pair[1] = sigs[1], sigs[0]
    verified = verify_second(book, first.link(), sigs=pair)
    assert sorted(
        error.node_id for error in verified.consensus.rejected if isinstance(error, SignatureRejected)
    ) == [
        0,
        1,
    ]


def test_record_files_swapped_between_timestamps(book: AddressBook, first: VerifiedRecordFile) -> None:
    with pytest.raises(FileHashMismatch):
        verify_second(book, first.link(), data=record_bytes(FIRST))
    with pytest.raises(FileHashMismatch):
        verify_stream_file(f"{FIRST}.rcd.gz", record_bytes(SECOND), signatures(FIRST), book, None)


def test_record_files_from_other_node_folders_are_interchangeable(
    book: AddressBook, first: VerifiedRecordFile
) -> None:
    for node_id in NODE_IDS:
        assert verify_second(book, first.link(), data=record_bytes(SECOND, node_id)).record.block_number == 6


def test_reordered_files_break_the_chain(book: AddressBook, first: VerifiedRecordFile) -> None:
    second = verify_second(book, first.link())
    with pytest.raises(PreviousHashMismatch) as refused:
        verify_stream_file(f"{FIRST}.rcd.gz", record_bytes(FIRST), signatures(FIRST), book, second.link())
    assert refused.value.check == "previous hash"
    assert refused.value.expected == second.record.hash
    with pytest.raises(PreviousHashMismatch):
        verify_second(book, second.link())


def test_an_empty_or_zero_previous_hash_skips_the_chain(book: AddressBook) -> None:
    zero = ChainLink("before.rcd.gz", bytes(48), 0, 5)
    assert verify_second(book, zero).record.block_number == 6


def test_every_refusal_names_file_and_check(book: AddressBook, first: VerifiedRecordFile) -> None:
    with pytest.raises(StreamFileError) as refused:
        verify_second(book, first.link(), data=record_bytes(FIRST))
    assert refused.value.file_name == f"{SECOND}.rcd.gz"
    assert refused.value.check == "file hash"
