"""Verification of one block before anything of it is written (``fees-and-streams.md`` D, "Verification").

In order, each failure a :class:`~ledgermirror.importer.errors.StreamFileError` naming the block and the check:

1. **parse**: the block is well formed (:func:`~.block_file.read_block`);
2. **block number**: the header's number is the one the name (or block node) gives, and the previous block's
   number plus one (``Non-consecutive block number, previous = X, current = Y``);
3. **previous hash**: the footer's previous block root hash is the root hash computed for the previous block
   (skipped when the previous block's root is not known: the first block, or the first after a record file);
4. **block proof**: a ``signed_record_file_proof`` (only on a wrapped record block) carries per-node RSA
   signatures (PKCS#1 v1.5, SHA-384) over the wrapped file's hash, verified with the address book in force;
   they must hold one third of the stake (:func:`.verify.reach_consensus`). A TSS ``signed_block_proof`` or a
   ``block_state_proof`` cannot be verified here (no hinTS/WRAPS library): the block is accepted as
   **chain-verified only** (:attr:`VerifiedBlock.proof_verified` is False; the pipeline logs it and the
   import status reports it). A block without a proof is refused;
5. wrapped record blocks: the inner record file, in the version the proof names (v2 and v5 files rebuilt from
   the wrapped contents, their amendments merged first: :mod:`.wrapped_record_file`), has the signed file
   hash, then the record chain checks of :func:`.verify.verify_record_chain` (previous hash, running hash
   recomputed for v5 and v6, sidecars, timestamp order, block number = the header's); then a v6 file's
   amendments are applied (:func:`amended`);
6. native blocks: transaction timestamps strictly increase, after the previous block's last.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from ledgermirror.importer.address_book import AddressBook
from ledgermirror.importer.block_file import BlockDigest, BlockFile, read_block
from ledgermirror.importer.block_items import record_file_of_block
from ledgermirror.importer.block_source import SourceBlock
from ledgermirror.importer.errors import (
    BlockNumberMismatch,
    BlockProofRejected,
    ConsensusNotReached,
    ConsensusTimestampOrder,
    FileHashMismatch,
    PreviousHashMismatch,
    StreamFileError,
)
from ledgermirror.importer.record_file import RecordFile, read_stream_item
from ledgermirror.importer.sidecar_file import SidecarFile, read_sidecar_file
from ledgermirror.importer.signature_file import SignatureFile
from ledgermirror.importer.stream_names import sidecar_name
from ledgermirror.importer.verify import (
    CONSENSUS_RATIO,
    ChainLink,
    Consensus,
    reach_consensus,
    verify_record_chain,
)
from ledgermirror.importer.wrapped_record_file import read_wrapped_record_file

SIGNED_RECORD_FILE = "signed record file"
TSS = "tss"
STATE_PROOF = "block state proof"
_LEGACY_SIGNATURE_VERSION = 2
_CURRENT_RECORD_VERSION = 6
"""The record file version of a wrapped block whose proof does not name one (a TSS or state proof)."""
"""A signature over the file hash only (no metadata signature), as the v2 signature files were."""


@dataclass(frozen=True, slots=True)
class BlockLink:
    """What the next block is checked against."""

    number: int | None
    root_hash: bytes | None
    """The previous block's root hash; None after a record file (its wrapped root is not known)."""
    record: ChainLink | None
    """The record chain (name, end running hash, last consensus time, block number)."""


@dataclass(frozen=True, slots=True)
class VerifiedBlock:
    block: BlockFile
    root_hash: bytes
    record: RecordFile
    """What is written: the wrapped record file, or the native block as a version-7 file."""
    sidecars: tuple[SidecarFile, ...]
    proof: str
    """``signed record file``, ``tss`` or ``block state proof``."""
    proof_verified: bool
    """False: accepted on the hash chain only (a TSS or state proof, which cannot be verified here)."""
    consensus: Consensus | None

    def link(self) -> BlockLink:
        return BlockLink(self.block.number, self.root_hash, ChainLink.of(self.record))


def verify_block(
    source: SourceBlock,
    book: AddressBook,
    previous: BlockLink | None,
    *,
    stakes: Mapping[int, int] | None = None,
    ratio: Fraction = CONSENSUS_RATIO,
) -> VerifiedBlock:
    """Every check of the module docstring on one block as delivered by a source."""
    digest = source.digest
    block = read_block(source.name, source.data, source.size, digest.subtree_roots if digest is not None else None)
    if block.number != source.number:
        raise BlockNumberMismatch(
            block.name, f"Block number mismatch, from filename = {source.number}, from content = {block.number}"
        )
    if previous is not None and previous.number is not None and block.number != previous.number + 1:
        raise BlockNumberMismatch(
            block.name, f"Non-consecutive block number, previous = {previous.number}, current = {block.number}"
        )
    root = block.root_hash()
    if previous is not None and previous.root_hash is not None and block.previous_root_hash != previous.root_hash:
        raise PreviousHashMismatch(block.name, previous.root_hash, block.previous_root_hash)
    proof = block.proof.WhichOneof("proof")
    if proof is None:
        raise BlockProofRejected(block.name, "the block proof carries no proof")
    if block.proof.block != block.number:
        raise BlockProofRejected(block.name, f"the proof is for block {block.proof.block}")
    record_link = previous.record if previous is not None else None
    if block.wrapped is not None:
        return _verify_wrapped(block, root, proof, book, record_link, stakes, ratio, digest)
    if proof == "signed_record_file_proof":
        raise BlockProofRejected(block.name, "a signed record file proof on a block without a record file")
    record, sidecar = record_file_of_block(block, root)
    last = record_link.consensus_end if record_link is not None else None
    for item in record.items:
        if last is not None and item.consensus_timestamp <= last:
            raise ConsensusTimestampOrder(
                block.name, f"consensus timestamp {item.consensus_timestamp} does not follow {last}"
            )
        last = item.consensus_timestamp
    kind = TSS if proof == "signed_block_proof" else STATE_PROOF
    return VerifiedBlock(block, root, record, (sidecar,) if sidecar.records else (), kind, False, None)


def _verify_wrapped(  # noqa: PLR0917
    block: BlockFile,
    root: bytes,
    proof: str,
    book: AddressBook,
    previous: ChainLink | None,
    stakes: Mapping[int, int] | None,
    ratio: Fraction,
    digest: BlockDigest | None,
) -> VerifiedBlock:
    wrapped = block.wrapped
    assert wrapped is not None
    verified = proof == "signed_record_file_proof"
    version = block.proof.signed_record_file_proof.version if verified else _CURRENT_RECORD_VERSION
    record = read_wrapped_record_file(wrapped, version, block.size, digest)
    name = record.name
    if record.block_number != block.number:
        raise BlockNumberMismatch(
            block.name, f"the wrapped record file is block {record.block_number}, the header says {block.number}"
        )
    consensus: Consensus | None = None
    if verified:
        listed_signatures = block.proof.signed_record_file_proof.record_file_signatures
        if not listed_signatures:
            raise ConsensusNotReached(
                block.name,
                f"No record file signatures for the wrapped record block {name} with block number {block.number}",
            )
        signatures: dict[int, SignatureFile | StreamFileError] = {}
        for entry in listed_signatures:
            signatures[int(entry.node_id)] = SignatureFile(
                block.name, _LEGACY_SIGNATURE_VERSION, record.file_hash, bytes(entry.signatures_bytes), None, None
            )
        consensus = reach_consensus(block.name, signatures, book, stakes=stakes, ratio=ratio)
        if consensus.agreed[0].file_hash != record.file_hash:
            raise FileHashMismatch(block.name, consensus.agreed[0].file_hash, record.file_hash)
    ids = [entry.id for entry in record.sidecars]
    sidecars: dict[int, SidecarFile] = {}
    for index, raw in enumerate(wrapped.sidecars):
        sidecar_id = ids[index] if index < len(ids) else index + 1
        sidecars[sidecar_id] = read_sidecar_file(sidecar_name(name, sidecar_id), raw)
    verify_record_chain(record, previous, sidecars)
    if wrapped.amendments and record.version == _CURRENT_RECORD_VERSION:
        record = amended(record, wrapped.amendments)
    kind = SIGNED_RECORD_FILE if verified else (TSS if proof == "signed_block_proof" else STATE_PROOF)
    listed = tuple(sidecars[entry.id] for entry in record.sidecars if entry.id in sidecars)
    return VerifiedBlock(block, root, record, listed, kind, verified, consensus)


def amended(record: RecordFile, amendments: tuple[bytes, ...]) -> RecordFile:
    """The wrapped file's items with its amendments applied: an amendment replaces the item of the same
    consensus time, or is inserted in time order. The file's signatures and hashes cover the items as the file
    has them (checked before); amendments are covered by the block's root hash only."""
    items = {item.consensus_timestamp: item for item in record.items}
    for data in amendments:
        item = read_stream_item(record.name, data)
        items[item.consensus_timestamp] = item
    ordered = tuple(items[stamp] for stamp in sorted(items))
    return dataclasses.replace(
        record,
        items=ordered,
        consensus_start=ordered[0].consensus_timestamp if ordered else record.consensus_start,
        consensus_end=ordered[-1].consensus_timestamp if ordered else record.consensus_end,
    )
