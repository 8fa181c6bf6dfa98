"""Verification of one record file and its companions, before anything of it is written.

Checks, in order (each failure raises a :class:`~ledgermirror.importer.errors.StreamFileError` subclass that
names the file and the check):

1. **signature** / **consensus**: every node's signature file parses and both its signatures (file hash and,
   from v5 on, metadata hash) verify with that node's RSA key from the address book (RSA PKCS#1 v1.5 over
   SHA-384 of the 48-byte hash); valid signatures are grouped by the (file hash, metadata hash) they sign, and
   a group must hold at least ``ratio`` (one third) of the total weight (:func:`node_weights`: the latest node
   stakes, else one per address-book entry). One node's bad signature only drops that node
   (:attr:`Consensus.rejected`);
2. **file hash**: the record file's hash equals a hash the consensus signed;
3. **metadata hash** (v5, v6): equals the metadata hash signed together with that file hash;
4. **previous hash**: the file's previous hash equals the prior file's hash (skipped without a prior file or
   when its hash is empty or all zeros, as the reference does);
5. **running hash** (v5, v6): the running hash recomputed item by item from the start running hash equals the
   end running hash the file states (the reference trusts it);
6. **sidecar** / **sidecar hash**: every sidecar the file lists is supplied and its SHA-384 is the listed one;
7. **consensus timestamp order**: item timestamps strictly increase, inside the file and after the prior file;
8. **block number** (v6): the prior file's block number plus one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
from cryptography.hazmat.primitives.hashes import SHA384

from ledgermirror.importer.address_book import AddressBook, NodeEntry
from ledgermirror.importer.errors import (
    BlockNumberMismatch,
    ConsensusNotReached,
    ConsensusTimestampOrder,
    FileHashMismatch,
    MetadataHashMismatch,
    PreviousHashMismatch,
    RunningHashMismatch,
    SidecarHashMismatch,
    SidecarMissing,
    SignatureRejected,
    StreamFileError,
)
from ledgermirror.importer.record_file import RecordFile
from ledgermirror.importer.record_file_reader import read_record_file
from ledgermirror.importer.running_hash import running_hash
from ledgermirror.importer.sidecar_file import SidecarFile, read_sidecar_file
from ledgermirror.importer.signature_file import SignatureFile, read_signature_file
from ledgermirror.importer.stream_names import sidecar_name

CONSENSUS_RATIO = Fraction(3333333333333333333, 10**19)
"""The reference's default ``consensusRatio``: one third to 19 decimal places, rounded down."""


@dataclass(frozen=True, slots=True)
class SignedHashes:
    """Hashes signed by a group of nodes whose signatures verified."""

    file_hash: bytes
    metadata_hash: bytes | None
    node_ids: tuple[int, ...]
    stake: int


@dataclass(frozen=True, slots=True)
class Consensus:
    file_name: str
    agreed: tuple[SignedHashes, ...]
    """Every group that reached the required stake, largest first (two can, with a one-third rule)."""
    total_stake: int
    required_stake: int
    rejected: tuple[StreamFileError, ...]
    """Signatures that were dropped: unparsable, unknown node, or not verifying."""
    verified_nodes: tuple[int, ...] = ()
    """Book nodes whose signatures verified (whatever hashes they signed)."""
    failed_nodes: tuple[int, ...] = ()
    """Book nodes whose signature file was present but unreadable or not verifying."""


@dataclass(frozen=True, slots=True)
class ChainLink:
    """What the next file is checked against: the last verified file (or its ``record_file`` row)."""

    name: str
    hash: bytes
    consensus_end: int
    block_number: int | None

    @classmethod
    def of(cls, record: RecordFile) -> ChainLink:
        return cls(record.name, record.hash, record.consensus_end, record.block_number)


@dataclass(frozen=True, slots=True)
class VerifiedRecordFile:
    record: RecordFile
    sidecars: tuple[SidecarFile, ...]
    consensus: Consensus

    def link(self) -> ChainLink:
        return ChainLink.of(self.record)


@dataclass(frozen=True, slots=True)
class Weights:
    """What each node's signature weighs in a consensus, and the total the ratio applies to."""

    of_node: dict[int, int]
    total: int

    def required(self, ratio: Fraction = CONSENSUS_RATIO) -> int:
        return math.ceil(self.total * ratio)


def node_weights(book: AddressBook, stakes: Mapping[int, int] | None = None) -> Weights:
    """The reference's weights (``AddressBookServiceImpl.getNodes``, mode ``STAKE_IN_ADDRESS_BOOK``): each book
    node weighs its ``stakes`` entry (the latest ``node_stake`` rows; 0 without one) out of the stakes of the
    book's nodes; when those total 0 (no ``node_stake`` rows yet, before HAPI 0.27), every node weighs 1 out of
    the book's entry count, a node's duplicate entries included. The book's own ``stake`` field is not used."""
    given = stakes or {}
    of_node = {entry.node_id: max(given.get(entry.node_id, 0), 0) for entry in book.nodes}
    total = sum(of_node.values())
    if total > 0:
        return Weights(of_node, total)
    return Weights(dict.fromkeys(of_node, 1), book.entry_count)


def verify_node_signature(signature: SignatureFile, node: NodeEntry) -> None:
    """Both signatures of one node's signature file, with that node's key; raises :class:`SignatureRejected`."""
    pairs = [("file", signature.file_hash, signature.file_signature)]
    if signature.metadata_hash is not None and signature.metadata_signature is not None:
        pairs.append(("metadata", signature.metadata_hash, signature.metadata_signature))
    elif signature.version >= 5:
        raise SignatureRejected(signature.name, node.node_id, "no metadata signature")
    for what, digest, signed in pairs:
        try:
            node.public_key.verify(signed, digest, PKCS1v15(), SHA384())
        except InvalidSignature:
            raise SignatureRejected(
                signature.name, node.node_id, f"{what} signature does not verify with the node's key"
            ) from None


def reach_consensus(
    file_name: str,
    signatures: Mapping[int, SignatureFile | StreamFileError],
    book: AddressBook,
    *,
    stakes: Mapping[int, int] | None = None,
    ratio: Fraction = CONSENSUS_RATIO,
) -> Consensus:
    """Verify each node's signatures (keyed by node id; a parse error stands for an unreadable file) and find
    the hashes enough stake agrees on; raises :class:`ConsensusNotReached` when none."""
    weights = node_weights(book, stakes)
    total = weights.total
    if total <= 0:
        raise ConsensusNotReached(file_name, "Invalid total staking weight. Consensus not reached")
    required = weights.required(ratio)
    rejected: list[StreamFileError] = []
    failed: list[int] = []
    groups: dict[tuple[bytes, bytes | None], list[int]] = {}
    for node_id, signature in sorted(signatures.items()):
        node = book.node(node_id)
        if isinstance(signature, StreamFileError):
            rejected.append(signature)
            failed.append(node_id)
            continue
        if node is None:
            rejected.append(SignatureRejected(signature.name, node_id, "node is not in the address book"))
            continue
        try:
            verify_node_signature(signature, node)
        except SignatureRejected as error:
            rejected.append(error)
            failed.append(node_id)
            continue
        groups.setdefault((signature.file_hash, signature.metadata_hash), []).append(node_id)
    ranked = sorted(
        (
            SignedHashes(key[0], key[1], tuple(nodes), sum(weights.of_node[n] for n in nodes))
            for key, nodes in groups.items()
        ),
        key=lambda group: -group.stake,
    )
    agreed = tuple(group for group in ranked if group.stake >= required and group.stake > 0)
    if not agreed:
        largest = ranked[0].stake if ranked else 0
        reasons = "; ".join(error.detail for error in rejected)
        raise ConsensusNotReached(
            file_name,
            f"Consensus not reached for file {file_name} with {largest}/{total} stake"
            + (f" ({reasons})" if reasons else ""),
        )
    verified = tuple(sorted(node for nodes in groups.values() for node in nodes))
    return Consensus(file_name, agreed, total, required, tuple(rejected), verified, tuple(failed))


def verify_record_file(
    record: RecordFile,
    consensus: Consensus,
    previous: ChainLink | None,
    sidecars: Mapping[int, SidecarFile] | None = None,
) -> None:
    """Checks 2-8 of the module docstring on a parsed record file."""
    signed = next((group for group in consensus.agreed if group.file_hash == record.file_hash), None)
    if signed is None:
        raise FileHashMismatch(record.name, consensus.agreed[0].file_hash, record.file_hash)
    if record.metadata_hash is not None and signed.metadata_hash != record.metadata_hash:
        raise MetadataHashMismatch(record.name, signed.metadata_hash or b"", record.metadata_hash)
    verify_record_chain(record, previous, sidecars)


def verify_record_chain(
    record: RecordFile, previous: ChainLink | None, sidecars: Mapping[int, SidecarFile] | None = None
) -> None:
    """Checks 4-8 (what follows from the file and the prior one, not from signatures): previous hash, running
    hash, sidecars, timestamp order, block number. Wrapped record blocks use it after their own proof check."""
    if previous is not None and any(previous.hash) and previous.hash != record.previous_hash:
        raise PreviousHashMismatch(record.name, previous.hash, record.previous_hash)
    if record.has_running_hash:
        if record.folded is not None and record.folded[0] == record.previous_hash:
            computed = record.folded[1]  # folded over the same items while the file was unpacked
        else:
            items = ((item.record_bytes, item.transaction_bytes) for item in record.items)
            computed = running_hash(record.previous_hash, items)
        if computed != record.hash:
            raise RunningHashMismatch(record.name, record.hash, computed)
    _verify_sidecars(record, sidecars or {})
    _verify_order(record, previous)


def _verify_sidecars(record: RecordFile, sidecars: Mapping[int, SidecarFile]) -> None:
    for listed in record.sidecars:
        sidecar = sidecars.get(listed.id)
        if sidecar is None:
            raise SidecarMissing(record.name, f"sidecar {listed.id} is listed but not supplied")
        if sidecar.hash != listed.hash:
            raise SidecarHashMismatch(sidecar.name, listed.hash, sidecar.hash)


def _verify_order(record: RecordFile, previous: ChainLink | None) -> None:
    last = previous.consensus_end if previous is not None else None
    for item in record.items:
        if last is not None and item.consensus_timestamp <= last:
            raise ConsensusTimestampOrder(
                record.name, f"consensus timestamp {item.consensus_timestamp} does not follow {last}"
            )
        last = item.consensus_timestamp
    if previous is None or record.block_number is None or previous.block_number is None:
        return
    if record.block_number != previous.block_number + 1:
        raise BlockNumberMismatch(
            record.name, f"block number {record.block_number} does not follow {previous.block_number}"
        )


def verify_stream_file(
    name: str,
    data: bytes,
    signatures: Mapping[int, tuple[str, bytes]],
    book: AddressBook,
    previous: ChainLink | None,
    *,
    sidecars: Mapping[int, bytes] | None = None,
    stakes: Mapping[int, int] | None = None,
    ratio: Fraction = CONSENSUS_RATIO,
) -> VerifiedRecordFile:
    """Everything for one record file from raw bytes: ``signatures`` maps node id to (signature file name,
    bytes), ``sidecars`` maps sidecar id to its stored bytes. Returns the parsed, verified file."""
    parsed: dict[int, SignatureFile | StreamFileError] = {}
    for node_id, (signature_name, signature_bytes) in signatures.items():
        try:
            parsed[node_id] = read_signature_file(signature_name, signature_bytes)
        except StreamFileError as error:
            parsed[node_id] = error
    consensus = reach_consensus(name, parsed, book, stakes=stakes, ratio=ratio)
    record = read_record_file(name, data)
    sidecar_files = {
        sidecar_id: read_sidecar_file(sidecar_name(name, sidecar_id), raw)
        for sidecar_id, raw in (sidecars or {}).items()
    }
    verify_record_file(record, consensus, previous, sidecar_files)
    return VerifiedRecordFile(record, tuple(sidecar_files[listed.id] for listed in record.sidecars), consensus)
