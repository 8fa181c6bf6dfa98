"""Consensus weights and the one-third rule, with the reference's expected values.

The reference's ``ConsensusValidatorImplTest`` gives each signature a node stake and a total; here the same
stakes are ``node_stake`` weights (``stakes=``) over an address book of real RSA keys, and every signature is a
real signature file checked by :func:`reach_consensus`, the function every record file and wrapped block goes
through. A zero stake everywhere is the reference's fallback to one per node (``signatures(0, 0, 0)`` there).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hiero_sdk_python.hapi.services import basic_types_pb2  # type: ignore[import-untyped]
from tests.importer import signed_streams, stream_writer
from tests.importer.importing import run, table_counts

from ledgermirror.importer.address_book import AddressBook, read_address_book
from ledgermirror.importer.errors import ConsensusNotReached, StreamFileError
from ledgermirror.importer.signature_file import SignatureFile, read_signature_file
from ledgermirror.importer.verify import CONSENSUS_RATIO, node_weights, reach_consensus
from ledgermirror.runtime import Prepared

NAME = "1970-01-01T00_00_00Z.rcd_sig"  # the reference's StreamFilename.EPOCH
MAX_TINYBARS = 50_000_000_000 * 100_000_000
ONE_THIRD = -(-MAX_TINYBARS // 3)  # MAX_TINYBARS / 3 rounded up, as the reference's test computes it


@pytest.fixture(scope="module")
def keys() -> list[rsa.RSAPrivateKey]:
    return signed_streams.node_keys(5)


def _book(keys: Sequence[rsa.RSAPrivateKey], *, duplicate_last: bool = False, stakes: Sequence[int] = ()) -> bytes:
    """A book of nodes 0..n-1 (accounts 0.0.3..), optionally the last node listed twice, with book stakes."""
    book = basic_types_pb2.NodeAddressBook()
    entries = [*range(len(keys)), len(keys) - 1] if duplicate_last else list(range(len(keys)))
    for position, index in enumerate(entries):
        der = keys[index].public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        entry = book.nodeAddress.add(nodeId=index, RSA_PubKey=der.hex(), memo=f"0.0.{index + 3}".encode())
        entry.nodeAccountId.accountNum = index + 3
        if stakes:
            entry.stake = stakes[position]
    return bytes(book.SerializeToString())


def _signature(key: rsa.RSAPrivateKey, file_hash: bytes) -> SignatureFile:
    return read_signature_file(NAME, stream_writer.signature_v2(key, file_hash))


def _setup(
    keys: Sequence[rsa.RSAPrivateKey], stakes: Sequence[int]
) -> tuple[AddressBook, dict[int, int], dict[int, SignatureFile | StreamFileError], bytes]:
    """The reference test's ``signatures(stakes...)``: one node per stake, each signing the same file hash."""
    nodes = keys[: len(stakes)]
    file_hash = os.urandom(48)
    signatures: dict[int, SignatureFile | StreamFileError] = {
        node_id: _signature(key, file_hash) for node_id, key in enumerate(nodes)
    }
    return read_address_book(_book(nodes)), dict(enumerate(stakes)), signatures, file_hash


# ConsensusValidatorImplTest.failureWithLargeStakes
def test_failure_with_large_stakes(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, signatures, _ = _setup(keys, [ONE_THIRD - 1, ONE_THIRD + 1, ONE_THIRD - 1])
    with pytest.raises(ConsensusNotReached, match="Consensus not reached for file"):
        reach_consensus(NAME, {0: signatures[0]}, book, stakes=stakes)


# ConsensusValidatorImplTest.successWithLargeStakes
def test_success_with_large_stakes(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, signatures, file_hash = _setup(keys, [ONE_THIRD] * 3)
    consensus = reach_consensus(NAME, signatures, book, stakes=stakes)
    assert [(group.file_hash, group.node_ids) for group in consensus.agreed] == [(file_hash, (0, 1, 2))]


# ConsensusValidatorImplTest.oneThirdStake
def test_one_third_stake(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, signatures, _ = _setup(keys, [1, 1, 1])
    consensus = reach_consensus(NAME, {2: signatures[2]}, book, stakes=stakes)
    assert consensus.agreed[0].node_ids == (2,)
    assert (consensus.total_stake, consensus.required_stake) == (3, 1)  # ceil(3 x 0.3333333333333333333)


# ConsensusValidatorImplTest.oneThirdStakeWithZeroStake
def test_one_third_stake_with_zero_stake(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, signatures, _ = _setup(keys, [0, 0, 0])
    consensus = reach_consensus(NAME, signatures, book, stakes=stakes)
    assert consensus.agreed[0].node_ids == (0, 1, 2)
    assert (consensus.agreed[0].stake, consensus.total_stake) == (3, 3)


# ConsensusValidatorImplTest.notVerified (DOWNLOADED: the signature does not verify; NOT_FOUND: no signature
# file; an unreadable file is our third way of not being VERIFIED)
@pytest.mark.parametrize("status", ["not verifying", "not found", "unreadable"])
def test_not_verified(keys: list[rsa.RSAPrivateKey], status: str) -> None:
    book, stakes, signatures, _ = _setup(keys, [3, 3, 3])
    if status == "not verifying":
        signatures = {n: _signature(keys[(n + 1) % 3], os.urandom(48)) for n in signatures}
    elif status == "not found":
        signatures = {}
    else:
        signatures = {n: ConsensusNotReached(NAME, "unreadable") for n in signatures}
    with pytest.raises(ConsensusNotReached, match="Consensus not reached for file"):
        reach_consensus(NAME, signatures, book, stakes=stakes)


# ConsensusValidatorImplTest.fullNodeStakeConsensus
def test_full_node_stake_consensus(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, signatures, _ = _setup(keys, [ONE_THIRD, ONE_THIRD, ONE_THIRD - 1])
    consensus = reach_consensus(NAME, signatures, book, stakes=stakes, ratio=Fraction(1))
    assert consensus.agreed[0].node_ids == (0, 1, 2)


# ConsensusValidatorImplTest.noSignatures
def test_no_signatures(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, _, _ = _setup(keys, [1, 1, 1])
    with pytest.raises(ConsensusNotReached, match="Consensus not reached for file"):
        reach_consensus(NAME, {}, book, stakes=stakes)


# ConsensusValidatorImplTest.skipConsensus: a ratio of 0 accepts any verified signature (the reference then
# marks none CONSENSUS_REACHED; here the file is simply accepted)
def test_skip_consensus(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, signatures, _ = _setup(keys, [1, 7])
    consensus = reach_consensus(NAME, {0: signatures[0]}, book, stakes=stakes, ratio=Fraction(0))
    assert consensus.agreed[0].node_ids == (0,)


# ConsensusValidatorImplTest.multipleFileHashes: R, R, V, V, V
def test_multiple_file_hashes(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, signatures, file_hash = _setup(keys, [0, 0, 0, 0, 0])
    for node_id in (2, 3, 4):
        signatures[node_id] = _signature(keys[node_id], os.urandom(48))
    consensus = reach_consensus(NAME, signatures, book, stakes=stakes)
    assert [(group.file_hash, group.node_ids) for group in consensus.agreed] == [(file_hash, (0, 1))]
    assert consensus.required_stake == 2


# ConsensusValidatorImplTest.fullConsensusRatio
def test_full_consensus_ratio(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, signatures, _ = _setup(keys, [0, 0, 0])
    consensus = reach_consensus(NAME, signatures, book, stakes=stakes, ratio=Fraction(1))
    assert (consensus.agreed[0].node_ids, consensus.required_stake) == ((0, 1, 2), 3)


# ConsensusValidatorImplTest.failureSignatureConsensus
def test_failure_signature_consensus(keys: list[rsa.RSAPrivateKey]) -> None:
    book, stakes, signatures, _ = _setup(keys, [0, 0, 0, 0])
    with pytest.raises(ConsensusNotReached, match="Consensus not reached for file"):
        reach_consensus(NAME, {0: signatures[0]}, book, stakes=stakes, ratio=Fraction(1))


def test_the_default_ratio_is_the_references() -> None:
    # ConsensusValidatorImplTest.setup: 1/3 to 19 digits, rounded down
    assert Fraction(1, 3) - Fraction(1, 3 * 10**19) == CONSENSUS_RATIO


# AddressBookServiceImplTest.getNodes (4 nodes; stake 10000 each, or 0, or no node_stake rows), mode
# STAKE_IN_ADDRESS_BOOK (the reference's default), and getNodesWithNodeStakeCountMoreThanAddressBook
@pytest.mark.parametrize(
    ("stakes", "node", "total"),
    [
        ({n: 10_000 for n in range(4)}, 10_000, 40_000),
        ({n: 0 for n in range(4)}, 1, 4),
        ({}, 1, 4),
        ({n: 10_000 for n in range(6)}, 10_000, 40_000),
    ],
)
def test_node_weights(keys: list[rsa.RSAPrivateKey], stakes: dict[int, int], node: int, total: int) -> None:
    weights = node_weights(read_address_book(_book(keys[:4])), stakes)
    assert set(weights.of_node.values()) == {node}
    assert weights.total == total


def test_without_node_stakes_duplicate_entries_count_and_book_stakes_do_not(keys: list[rsa.RSAPrivateKey]) -> None:
    # the reference's node_count is the book's raw NodeAddress count; ConsensusNode.getStake() is 1 per node
    book = read_address_book(_book(keys[:3], duplicate_last=True, stakes=[100, 1, 1, 1]))
    weights = node_weights(book, {})
    assert (weights.of_node, weights.total, weights.required()) == ({0: 1, 1: 1, 2: 1}, 4, 2)


def test_an_import_without_node_stakes_needs_a_third_of_the_book_entries(
    database: Prepared, ledger: object, tmp_path: Path, keys: list[rsa.RSAPrivateKey]
) -> None:
    """Three nodes, the third listed twice: 4 entries, so a file needs 2 signatures; node 0 alone (1/4), though
    it holds nearly all of the book's own stake field, is refused with nothing written; nodes 0 and 1 import."""
    book = tmp_path / "book.bin"
    book.write_bytes(_book(keys[:3], duplicate_last=True, stakes=[100, 1, 1, 1]))
    nanos = 1_700_000_000_000_000_000
    items = [signed_streams.file_update(nanos, 150, b"x")]
    alone = tmp_path / "alone"
    signed_streams.write_file(alone, nanos, items, signed_streams.GENESIS_HASH, 0, keys=keys[:1])
    with pytest.raises(ConsensusNotReached, match=r"Consensus not reached for file .* with 1/4 stake"):
        run(database.owner_url, alone, book=book)
    assert table_counts(database.owner_url) == {}
    pair = tmp_path / "pair"
    signed_streams.write_file(pair, nanos, items, signed_streams.GENESIS_HASH, 0, keys=keys[:2])
    stats = run(database.owner_url, pair, book=book)
    assert stats.files == 1
