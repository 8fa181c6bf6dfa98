"""The bytes of the stream files a node writes: record files of v6 (protobuf, gzipped), v5 (platform object
stream) and v2 (type-marked records), their signature files, and v6 sidecar files (``fees-and-streams.md``
B.1-B.5), and their names (B.7).

The record file is assembled field by field around the exact item bytes, so the running hash a reader
recomputes from the file is the one folded here over the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
from cryptography.hazmat.primitives.hashes import SHA384

from ledgermirror.importer.protobuf_wire import encode_varint, message_field, varint_field
from ledgermirror.importer.running_hash import running_hash
from ledgermirror.importer.stream_names import stem_of
from ledgermirror.simulator.emitter import StreamItem
from ledgermirror.simulator.hapi import Hapi

RECORD_FILE_VERSION = 6
RECORD_FILE_VERSIONS = (6, 5, 2)
HASH_OBJECT_CLASS_ID = 0xF422DA83A251741E
RECORD_STREAM_OBJECT_CLASS_ID = 0xE370929BA5429D8B
SIGNATURE_CLASS_ID = 0x13DC4B399B245C69
SHA_384_DIGEST_TYPE = 0x58FF811B
V2_HAPI_VERSION = 3
"""The HAPI "version" int of a v2 header (no major/minor/patch before v5)."""
SHA_384 = 1
SHA_384_WITH_RSA = 1
SIDECAR_ID = 1
GZIP_LEVEL = 6


def _item_field(record: bytes, transaction: bytes) -> bytes:
    """A record stream item (field 3): its transaction, then its record."""
    return message_field(3, message_field(1, transaction) + message_field(2, record))


def _hash_object(digest: bytes) -> bytes:
    return varint_field(1, SHA_384) + varint_field(2, len(digest)) + message_field(3, digest)


def file_name(consensus_timestamp: int) -> str:
    """``2026-01-01T00_00_00.123456789Z``: the instant with ``:`` as ``_`` and 9 fraction digits."""
    return stem_of(consensus_timestamp)


@dataclass(frozen=True, slots=True)
class Sidecar:
    stored: bytes
    """Gzip-compressed ``SidecarFile``."""
    hash: bytes
    types: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RecordFileBytes:
    stem: str
    """The file name without extension: ``<instant>``."""
    stored: bytes
    file_hash: bytes
    metadata_hash: bytes | None
    """None for v2 (its signature covers the file hash only)."""
    start_running_hash: bytes
    """v5/v6: the start running hash; v2: the previous file's hash."""
    end_running_hash: bytes
    """v5/v6: the end running hash; v2: the file hash (what the next file names as previous)."""
    block_number: int
    sidecar: Sidecar | None
    version: int = RECORD_FILE_VERSION

    @property
    def name(self) -> str:
        """The data file name: ``.rcd.gz`` from v6 on, ``.rcd`` before."""
        return self.stem + (".rcd.gz" if self.version >= RECORD_FILE_VERSION else ".rcd")


def sidecar_file(hapi: Hapi, items: Sequence[StreamItem]) -> Sidecar | None:
    """One sidecar file holding every sidecar record of the record file's items, or ``None``."""
    records = [record for item in items for record in item.sidecars]
    if not records:
        return None
    content = hapi.sidecar.SidecarFile(sidecar_records=records).SerializeToString()
    types = sorted({field for record in records for field in _sidecar_types(record)})
    return Sidecar(gzip.compress(content, GZIP_LEVEL, mtime=0), hashlib.sha384(content).digest(), tuple(types))


def _sidecar_types(record: Any) -> tuple[int, ...]:
    kind = record.WhichOneof("sidecar_records")
    return {"state_changes": (1,), "actions": (2,), "bytecode": (3,)}.get(kind, ())


def record_file(
    items: Sequence[StreamItem],
    start_running_hash: bytes,
    block_number: int,
    hapi_version: tuple[int, int, int],
    sidecar: Sidecar | None,
) -> RecordFileBytes:
    pairs = [(item.record_bytes, item.transaction_bytes) for item in items]
    end_hash = running_hash(start_running_hash, pairs)
    version = b"".join(varint_field(n, v) for n, v in zip((1, 2, 3), hapi_version, strict=True) if v)
    parts = [message_field(1, version), message_field(2, _hash_object(start_running_hash))]
    parts.extend(_item_field(record, transaction) for record, transaction in pairs)
    parts.append(message_field(4, _hash_object(end_hash)))
    parts.append(varint_field(5, block_number))
    if sidecar is not None:
        listed = message_field(1, _hash_object(sidecar.hash)) + varint_field(2, SIDECAR_ID)
        listed += message_field(3, b"".join(encode_varint(kind) for kind in sidecar.types))
        parts.append(message_field(6, listed))
    content = struct.pack(">i", RECORD_FILE_VERSION) + b"".join(parts)
    metadata = hashlib.sha384(
        struct.pack(">iiii", RECORD_FILE_VERSION, *hapi_version)
        + start_running_hash
        + end_hash
        + struct.pack(">q", block_number)
    ).digest()
    return RecordFileBytes(
        stem=file_name(items[0].consensus_timestamp),
        stored=gzip.compress(content, GZIP_LEVEL, mtime=0),
        file_hash=hashlib.sha384(content).digest(),
        metadata_hash=metadata,
        start_running_hash=start_running_hash,
        end_running_hash=end_hash,
        block_number=block_number,
        sidecar=sidecar,
    )


def _v5_hash_object(digest: bytes) -> bytes:
    return struct.pack(">Qiii", HASH_OBJECT_CLASS_ID, 1, SHA_384_DIGEST_TYPE, len(digest)) + digest


def record_file_v5(
    items: Sequence[StreamItem], start_running_hash: bytes, block_number: int, hapi_version: tuple[int, int, int]
) -> RecordFileBytes:
    """A v5 file: header ints, the start hash object, one record stream object per item (record, then
    transaction), the end hash object; the metadata hash covers the header and both hash objects."""
    pairs = [(item.record_bytes, item.transaction_bytes) for item in items]
    end_hash = running_hash(start_running_hash, pairs)
    head = struct.pack(">iiiii", 5, *hapi_version, 1)
    body = b"".join(
        struct.pack(">Qii", RECORD_STREAM_OBJECT_CLASS_ID, 1, len(record))
        + record
        + struct.pack(">i", len(transaction))
        + transaction
        for record, transaction in pairs
    )
    start, end = _v5_hash_object(start_running_hash), _v5_hash_object(end_hash)
    content = head + start + body + end
    return RecordFileBytes(
        stem=file_name(items[0].consensus_timestamp),
        stored=content,
        file_hash=hashlib.sha384(content).digest(),
        metadata_hash=hashlib.sha384(head + start + end).digest(),
        start_running_hash=start_running_hash,
        end_running_hash=end_hash,
        block_number=block_number,
        sidecar=None,
        version=5,
    )


def record_file_v2(items: Sequence[StreamItem], previous_hash: bytes, block_number: int) -> RecordFileBytes:
    """A v2 file: version, HAPI int, ``0x01`` and the previous file's hash, then per item ``0x02``, the
    transaction and the record; its hash is SHA-384(header ‖ SHA-384(body))."""
    header = struct.pack(">ii", 2, V2_HAPI_VERSION) + b"\x01" + previous_hash
    body = b"".join(
        b"\x02"
        + struct.pack(">i", len(item.transaction_bytes))
        + item.transaction_bytes
        + struct.pack(">i", len(item.record_bytes))
        + item.record_bytes
        for item in items
    )
    file_hash = hashlib.sha384(header + hashlib.sha384(body).digest()).digest()
    return RecordFileBytes(
        stem=file_name(items[0].consensus_timestamp),
        stored=header + body,
        file_hash=file_hash,
        metadata_hash=None,
        start_running_hash=previous_hash,
        end_running_hash=file_hash,
        block_number=block_number,
        sidecar=None,
        version=2,
    )


def wrapped_contents(
    data: RecordFileBytes, items: Sequence[StreamItem], hapi_version: tuple[int, int, int]
) -> bytes:
    """The ``RecordStreamFile`` a block node serves for this record file (a wrapped record block's
    ``record_file_contents``): a v6 file's own message; for a v5 or v2 file the same fields built from it (its
    HAPI version, or for v2 the header's HAPI int as the minor version; its start hash, which for v2 is the
    previous file's hash; its items; v5's end running hash; the block number), from which a reader rebuilds
    the original file and its hash."""
    if data.version >= RECORD_FILE_VERSION:
        return gzip.decompress(data.stored)[4:]
    semantic = hapi_version if data.version == 5 else (0, V2_HAPI_VERSION, 0)
    version = b"".join(varint_field(n, v) for n, v in zip((1, 2, 3), semantic, strict=True) if v)
    parts = [message_field(1, version), message_field(2, _hash_object(data.start_running_hash))]
    parts.extend(_item_field(item.record_bytes, item.transaction_bytes) for item in items)
    if data.version == 5:
        parts.append(message_field(4, _hash_object(data.end_running_hash)))
    parts.append(varint_field(5, data.block_number))
    return b"".join(parts)


def signature_file_for(key: rsa.RSAPrivateKey, data: RecordFileBytes) -> bytes:
    """The node's signature file of a record file, in the format of the record file's version."""
    if data.version >= RECORD_FILE_VERSION and data.metadata_hash is not None:
        return signature_file(key, data.file_hash, data.metadata_hash)
    if data.version == 5 and data.metadata_hash is not None:
        out = b"\x05" + struct.pack(">i", 1)
        for digest in (data.file_hash, data.metadata_hash):
            signed = key.sign(digest, PKCS1v15(), SHA384())
            header = struct.pack(">Qiiii", SIGNATURE_CLASS_ID, 1, SHA_384_WITH_RSA, len(signed), 101 - len(signed))
            out += _v5_hash_object(digest) + header + signed
        return out
    signed = key.sign(data.file_hash, PKCS1v15(), SHA384())
    return b"\x04" + data.file_hash + b"\x03" + struct.pack(">i", len(signed)) + signed


def signature_file(key: rsa.RSAPrivateKey, file_hash: bytes, metadata_hash: bytes) -> bytes:
    """Byte 6, then a ``SignatureFile``: RSA PKCS#1 v1.5 SHA-384 over the file hash and the metadata hash."""

    def signature_object(digest: bytes) -> bytes:
        signed = key.sign(digest, PKCS1v15(), SHA384())
        return (
            varint_field(1, SHA_384_WITH_RSA)
            + varint_field(2, len(signed))
            + varint_field(3, 101 - len(signed))
            + message_field(4, signed)
            + message_field(5, _hash_object(digest))
        )

    return (
        bytes((RECORD_FILE_VERSION,))
        + message_field(1, signature_object(file_hash))
        + message_field(2, signature_object(metadata_hash))
    )
