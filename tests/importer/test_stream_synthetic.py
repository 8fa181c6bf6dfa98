"""Streams written by the test (own node keys): the checks no fixture can exercise, and v5/v2 files."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.importer import stream_writer as write

from ledgermirror.importer.address_book import AddressBook, read_address_book
from ledgermirror.importer.errors import (
    BlockNumberMismatch,
    ConsensusNotReached,
    ConsensusTimestampOrder,
    FileHashMismatch,
    MetadataHashMismatch,
    PreviousHashMismatch,
    RunningHashMismatch,
    SignatureRejected,
    StreamParseError,
)
from ledgermirror.importer.record_file_reader import read_record_file
from ledgermirror.importer.running_hash import running_hash
from ledgermirror.importer.signature_file import read_signature_file
from ledgermirror.importer.verify import ChainLink, VerifiedRecordFile, verify_stream_file

T0 = 1_700_000_000_000_000_000
NAME = "2023-11-14T22_13_20Z.rcd.gz"
NEXT_NAME = "2023-11-14T22_13_22Z.rcd.gz"
START = hashlib.sha384(b"genesis").digest()
Signer = Callable[[rsa.RSAPrivateKey, write.Written], bytes]


@pytest.fixture(scope="module")
def keys() -> list[rsa.RSAPrivateKey]:
    return [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(4)]


@pytest.fixture(scope="module")
def book(keys: list[rsa.RSAPrivateKey]) -> AddressBook:
    return read_address_book(write.address_book(keys))


def v6_signer(key: rsa.RSAPrivateKey, written: write.Written) -> bytes:
    assert written.metadata_hash is not None
    return write.signature_v6(key, written.file_hash, written.metadata_hash)


def v5_signer(key: rsa.RSAPrivateKey, written: write.Written) -> bytes:
    assert written.metadata_hash is not None
    return write.signature_v5(key, written.file_hash, written.metadata_hash)


def v2_signer(key: rsa.RSAPrivateKey, written: write.Written) -> bytes:
    return write.signature_v2(key, written.file_hash)


def signed(
    keys: list[rsa.RSAPrivateKey], written: write.Written, signer: Signer = v6_signer
) -> dict[int, tuple[str, bytes]]:
    return {node_id: ("x.rcd_sig", signer(key, written)) for node_id, key in enumerate(keys)}


def verify(
    book: AddressBook,
    keys: list[rsa.RSAPrivateKey],
    written: write.Written,
    previous: ChainLink | None = None,
    *,
    name: str = NAME,
    signer: Signer = v6_signer,
) -> VerifiedRecordFile:
    return verify_stream_file(name, written.stored, signed(keys, written, signer), book, previous)


def test_a_signed_file_with_a_false_end_running_hash_is_refused(
    book: AddressBook, keys: list[rsa.RSAPrivateKey]
) -> None:
    items = [write.item(T0 + n, f"memo {n}") for n in range(3)]
    forged = write.v6(items, START, 10, end=hashlib.sha384(b"anything").digest())
    # File hash, metadata hash and signatures are all consistent: only the recomputed running hash refuses it.
    with pytest.raises(RunningHashMismatch) as refused:
        verify(book, keys, forged)
    assert refused.value.check == "running hash"
    assert refused.value.expected == forged.end_hash
    assert refused.value.actual == running_hash(START, [(i.record, i.transaction) for i in items])
    assert verify(book, keys, write.v6(items, START, 10)).record.count == 3


def test_running_hash_is_over_the_exact_bytes(book: AddressBook, keys: list[rsa.RSAPrivateKey]) -> None:
    items = [write.item(T0 + n, f"memo {n}", canonical=False) for n in range(3)]
    record = verify(book, keys, write.v6(items, START, 10)).record
    assert [item.record_bytes for item in record.items] == [item.record for item in items]
    reserialized = [(item.record.SerializeToString(), item.transaction_bytes) for item in record.items]
    assert reserialized[0][0] != items[0].record
    assert running_hash(START, reserialized) != record.hash


def test_a_signed_metadata_hash_that_differs_is_refused(book: AddressBook, keys: list[rsa.RSAPrivateKey]) -> None:
    written = write.v6([write.item(T0)], START, 10)
    other = write.v6([write.item(T0)], START, 11)
    assert other.metadata_hash is not None
    sigs = {
        n: ("x.rcd_sig", write.signature_v6(key, written.file_hash, other.metadata_hash))
        for n, key in enumerate(keys)
    }
    with pytest.raises(MetadataHashMismatch):
        verify_stream_file(NAME, written.stored, sigs, book, None)


def test_block_numbers_must_be_consecutive(book: AddressBook, keys: list[rsa.RSAPrivateKey]) -> None:
    first = verify(book, keys, write.v6([write.item(T0)], START, 10))
    skipping = write.v6([write.item(T0 + 2_000_000_000)], first.record.hash, 12)
    with pytest.raises(BlockNumberMismatch) as refused:
        verify(book, keys, skipping, first.link(), name=NEXT_NAME)
    assert refused.value.file_name == NEXT_NAME
    following = write.v6([write.item(T0 + 2_000_000_000)], first.record.hash, 11)
    assert verify(book, keys, following, first.link(), name=NEXT_NAME).record.block_number == 11


@pytest.mark.parametrize("offsets", [(0, 0), (0, 2, 1), (5, 4)])
def test_timestamps_must_increase_inside_a_file(
    book: AddressBook, keys: list[rsa.RSAPrivateKey], offsets: tuple[int, ...]
) -> None:
    written = write.v6([write.item(T0 + offset) for offset in offsets], START, 10)
    with pytest.raises(ConsensusTimestampOrder):
        verify(book, keys, written)


def test_timestamps_must_increase_across_files(book: AddressBook, keys: list[rsa.RSAPrivateKey]) -> None:
    first = verify(book, keys, write.v6([write.item(T0), write.item(T0 + 5)], START, 10))
    overlapping = write.v6([write.item(T0 + 5)], first.record.hash, 11)
    with pytest.raises(ConsensusTimestampOrder):
        verify(book, keys, overlapping, first.link(), name=NEXT_NAME)


def test_an_empty_v6_file_takes_its_time_from_its_name(book: AddressBook, keys: list[rsa.RSAPrivateKey]) -> None:
    record = verify(book, keys, write.v6([], START, 10)).record
    assert (record.count, record.consensus_start, record.consensus_end, record.hash) == (0, T0, T0, START)


def test_book_stakes_do_not_weigh_and_unknown_nodes_are_dropped(keys: list[rsa.RSAPrivateKey]) -> None:
    # the reference weighs by node_stake rows only; without them each book entry weighs 1 (its address book's
    # own stake field is read, never used for consensus)
    staked = read_address_book(write.address_book(keys[:3], stakes=[0, 5, 100]))
    assert [entry.stake for entry in staked.nodes] == [None, 5, 100]
    written = write.v6([write.item(T0)], START, 10)
    sigs = signed(keys, written)
    lone = verify_stream_file(NAME, written.stored, {2: sigs[2], 3: sigs[3]}, staked, None)
    assert (lone.consensus.agreed[0].node_ids, lone.consensus.total_stake) == ((2,), 3)
    [unknown] = lone.consensus.rejected
    assert isinstance(unknown, SignatureRejected) and unknown.node_id == 3
    node_stakes = {0: 0, 1: 5, 2: 100}
    heavy = verify_stream_file(NAME, written.stored, {2: sigs[2]}, staked, None, stakes=node_stakes)
    assert (heavy.consensus.agreed[0].stake, heavy.consensus.total_stake) == (100, 105)
    with pytest.raises(ConsensusNotReached):
        verify_stream_file(NAME, written.stored, {0: sigs[0], 1: sigs[1]}, staked, None, stakes=node_stakes)


def test_v5_stream(book: AddressBook, keys: list[rsa.RSAPrivateKey]) -> None:
    first_written = write.v5([write.item(T0 + n) for n in range(3)], START)
    first = verify(book, keys, first_written, name="2023-11-14T22_13_20Z.rcd", signer=v5_signer)
    record = first.record
    assert (record.version, record.count, record.block_number, record.sidecars) == (5, 3, None, ())
    assert record.hapi_version == (0, 11, 0)
    assert (record.file_hash, record.metadata_hash) == (first_written.file_hash, first_written.metadata_hash)
    assert (record.previous_hash, record.hash) == (START, first_written.end_hash)
    assert read_signature_file("x.rcd_sig", v5_signer(keys[0], first_written)).version == 5
    second = write.v5([write.item(T0 + 10)], record.hash)
    verify(book, keys, second, first.link(), name="2023-11-14T22_13_22Z.rcd", signer=v5_signer)
    unchained = write.v5([write.item(T0 + 10)], START)
    with pytest.raises(PreviousHashMismatch):
        verify(book, keys, unchained, first.link(), name="2023-11-14T22_13_22Z.rcd", signer=v5_signer)
    tampered = first_written.stored.replace(b"signed transaction", b"signed transactioN", 1)
    with pytest.raises(FileHashMismatch):
        verify_stream_file("x.rcd", tampered, signed(keys, first_written, v5_signer), book, None)


@pytest.mark.parametrize("version", [1, 2])
def test_v2_stream(book: AddressBook, keys: list[rsa.RSAPrivateKey], version: int) -> None:
    first_written = write.v2([write.item(T0 + n) for n in range(2)], bytes(48), version=version)
    first = verify(book, keys, first_written, name="2019-10-11T13_33_25.526889Z.rcd", signer=v2_signer)
    record = first.record
    assert (record.version, record.count, record.metadata_hash, record.hapi_version) == (version, 2, None, None)
    assert record.hash == record.file_hash == first_written.file_hash
    assert read_signature_file("x.rcd_sig", v2_signer(keys[0], first_written)).metadata_hash is None
    second = write.v2([write.item(T0 + 10)], record.hash, version=version)
    verify(book, keys, second, first.link(), name="2019-10-11T13_33_30Z.rcd", signer=v2_signer)
    with pytest.raises(PreviousHashMismatch):
        verify(book, keys, write.v2([write.item(T0 + 10)], START), first.link(), signer=v2_signer)


def test_versions_switch_mid_stream(book: AddressBook, keys: list[rsa.RSAPrivateKey]) -> None:
    legacy = verify(book, keys, write.v2([write.item(T0)], bytes(48)), name="a.rcd", signer=v2_signer)
    v5_file = verify(
        book, keys, write.v5([write.item(T0 + 1)], legacy.record.hash), legacy.link(), signer=v5_signer
    )
    v6_file = verify(book, keys, write.v6([write.item(T0 + 2)], v5_file.record.hash, 1), v5_file.link())
    assert [f.record.version for f in (legacy, v5_file, v6_file)] == [2, 5, 6]


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (struct.pack(">i", 7) + b"\0" * 60, "unsupported record file version 7"),
        (b"\0\0", "shorter than its version header"),
        (write.v5([write.item(T0)], START).stored[:-10], "truncated"),
        (write.v5([write.item(T0)], START).stored + b"\0", "after the end running hash object"),
        (write.v5([], START).stored, "no record stream objects"),
        (write.v2([write.item(T0)], START).stored[:-3], "truncated record"),
        (struct.pack(">i", 6) + write.field(2, write.varint_field(1, 2)), "unsupported start hash algorithm 2"),
        (struct.pack(">i", 6) + b"\x1a\x7f", "malformed protobuf field 3"),
    ],
)
def test_malformed_record_files(data: bytes, detail: str) -> None:
    with pytest.raises(StreamParseError) as refused:
        read_record_file("bad.rcd", data)
    assert detail in refused.value.detail
    assert refused.value.file_name == "bad.rcd"


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        (b"\x09abc", "Unsupported signature file version: 9"),
        (b"", "empty signature file"),
        (b"\x06", "does not have a file signature"),
        (b"\x04" + bytes(48) + b"\x03" + struct.pack(">i", 10) + b"short", "truncated signature"),
        (b"\x05" + struct.pack(">i", 1) + struct.pack(">qiii", 1, 1, 7, 48), "file digest type is 7"),
    ],
)
def test_malformed_signature_files(data: bytes, detail: str) -> None:
    with pytest.raises(StreamParseError) as refused:
        read_signature_file("bad.rcd_sig", data)
    assert detail in refused.value.detail


@pytest.mark.parametrize(("nodes", "required"), [(1, 1), (3, 1), (4, 2), (6, 2), (7, 3)])
def test_one_third_of_the_node_count_without_stake(nodes: int, required: int) -> None:
    keys = [rsa.generate_private_key(public_exponent=65537, key_size=1024) for _ in range(nodes)]
    book = read_address_book(write.address_book(keys))
    written = write.v6([write.item(T0)], START, 10)
    sigs = signed(keys, written)
    enough = verify_stream_file(NAME, written.stored, dict(list(sigs.items())[:required]), book, None)
    assert (enough.consensus.required_stake, enough.consensus.total_stake) == (required, nodes)
    with pytest.raises(ConsensusNotReached) as refused:
        verify_stream_file(NAME, written.stored, dict(list(sigs.items())[: required - 1]), book, None)
    assert f"with {required - 1}/{nodes} stake" in refused.value.detail
