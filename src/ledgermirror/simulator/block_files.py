"""Wrapped record blocks (HIP-1056 ``Block`` files carrying a v6, v5 or v2 record file) for ``simulate --format
blocks`` and ``--format cutover`` (``fees-and-streams.md`` D and E.6).

Each record file of the run becomes block ``<its block number>``: ``block_header`` (HAPI version, number,
the file's first consensus time, SHA2_384), a ``record_file`` item (creation time, the ``RecordStreamFile``
bytes: a v6 file's exact message, or the one a block node builds from a v5 or v2 file,
:func:`.stream_files.wrapped_contents`; the ``SidecarFile`` bytes), ``block_footer`` (the previous block's
root hash, and two fixed state hashes derived from the seed) and a ``block_proof`` with a
``SignedRecordFileProof`` of the file's version: every node's RSA PKCS#1 v1.5 SHA-384 signature over the
record file's hash (of the original v5 or v2 file for those), the proof the reference verifies (a TSS proof
cannot be made or checked in Python). Files are ``<19-digit number>.blk.zstd`` under
``block/`` with a ``/`` after every 4 digits, the reference's bucket layout.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
from cryptography.hazmat.primitives.hashes import SHA384

from ledgermirror.importer import block_hash
from ledgermirror.importer.block_source import block_bytes, block_key
from ledgermirror.importer.protobuf_wire import message_field
from ledgermirror.simulator.emitter import StreamItem
from ledgermirror.simulator.hapi import set_timestamp
from ledgermirror.simulator.stream_files import RecordFileBytes, wrapped_contents

BLOCK_FOLDER = "block"
ZSTD_LEVEL = 3
HASH_LENGTH = 48


@dataclass(frozen=True, slots=True)
class WrappedBlock:
    number: int
    stored: bytes
    """zstd-compressed ``Block``."""
    root_hash: bytes


def _modules() -> Any:
    class Modules:
        header = importlib.import_module("hiero_sdk_python.hapi.block.stream.output.block_header_pb2")
        footer = importlib.import_module("hiero_sdk_python.hapi.block.stream.output.block_footer_pb2")
        proof = importlib.import_module("hiero_sdk_python.hapi.block.stream.block_proof_pb2")
        signed = importlib.import_module("hiero_sdk_python.hapi.block.stream.signed_record_file_proof_pb2")
        timestamp = importlib.import_module("hiero_sdk_python.hapi.services.timestamp_pb2")

    return Modules


def wrapped_block(
    data: RecordFileBytes,
    items: Sequence[StreamItem],
    *,
    previous_root: bytes,
    node_keys: list[rsa.RSAPrivateKey],
    hapi_version: tuple[int, int, int],
    seed: int,
) -> WrappedBlock:
    """The block that wraps one record file (of these items); ``previous_root`` is the previous block's root
    hash."""
    modules = _modules()
    number = data.block_number
    header = modules.header.BlockHeader(number=number, hash_algorithm=0)
    for version in (header.hapi_proto_version, header.software_version):
        version.major, version.minor, version.patch = hapi_version
    first_consensus_timestamp = items[0].consensus_timestamp
    set_timestamp(header.block_timestamp, first_consensus_timestamp)
    stamp = modules.timestamp.Timestamp()
    set_timestamp(stamp, first_consensus_timestamp)
    contents = wrapped_contents(data, items, hapi_version)
    record_item = message_field(1, stamp.SerializeToString()) + message_field(2, contents)
    if data.sidecar is not None:
        record_item += message_field(3, gzip.decompress(data.sidecar.stored))
    footer = modules.footer.BlockFooter(
        previous_block_root_hash=previous_root,
        root_hash_of_all_block_hashes_tree=_derived(seed, "all-blocks", number),
        start_of_block_state_root_hash=_derived(seed, "state", number),
    )
    proof = modules.proof.BlockProof(block=number)
    proof.signed_record_file_proof.version = data.version
    for node_id, key in enumerate(node_keys):
        proof.signed_record_file_proof.record_file_signatures.add(
            signatures_bytes=key.sign(data.file_hash, PKCS1v15(), SHA384()), node_id=node_id
        )
    block_items = [
        (block_hash.BLOCK_HEADER, message_field(block_hash.BLOCK_HEADER, header.SerializeToString())),
        (block_hash.RECORD_FILE, message_field(block_hash.RECORD_FILE, record_item)),
        (block_hash.BLOCK_FOOTER, message_field(block_hash.BLOCK_FOOTER, footer.SerializeToString())),
        (block_hash.BLOCK_PROOF, message_field(block_hash.BLOCK_PROOF, proof.SerializeToString())),
    ]
    root = block_hash.block_root_hash(
        stamp.SerializeToString(),
        block_items,
        footer.previous_block_root_hash,
        footer.root_hash_of_all_block_hashes_tree,
        footer.start_of_block_state_root_hash,
    )
    serialized = block_bytes(item for _, item in block_items)
    stored = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True).compress(serialized)
    return WrappedBlock(number, stored, root)


def _derived(seed: int, what: str, number: int) -> bytes:
    return hashlib.sha384(f"ledgermirror-simulator:{what}:{seed}:{number}".encode()).digest()


def write_block(out: Path, block: WrappedBlock) -> int:
    path = out / BLOCK_FOLDER / block_key(block.number)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(block.stored)
    return len(block.stored)
