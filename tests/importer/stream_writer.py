"""Test-side writer of record streams (v6, v5, v2), signature files and address books, at the byte level.

It writes the formats independently of the readers (hand-built wire bytes and structs), so a test can sign a
file that is wrong in exactly one way. Only the running hash fold is shared with the reader; the real
fixtures check that fold on their own.
"""

from __future__ import annotations

import gzip
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
from cryptography.hazmat.primitives.hashes import SHA384
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hiero_sdk_python.hapi.services import (  # type: ignore[import-untyped]
    basic_types_pb2,
    timestamp_pb2,
    transaction_record_pb2,
)

from ledgermirror.importer.running_hash import running_hash

HASH_OBJECT_CLASS_ID = 0xF422DA83A251741E
RECORD_STREAM_OBJECT_CLASS_ID = 0xE370929BA5429D8B
SIGNATURE_CLASS_ID = 0x13DC4B399B245C69
SHA_384_DIGEST_TYPE = 0x58FF811B


@dataclass(frozen=True)
class Item:
    record: bytes
    transaction: bytes


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def varint_field(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def item(nanos: int, memo: str = "", *, canonical: bool = True) -> Item:
    """A record with that consensus time (and memo), and a transaction carrying a few opaque bytes.

    ``canonical=False`` writes the record's memo before its timestamp: the same message, bytes that Python
    protobuf would not reproduce by serializing it again.
    """
    stamp = timestamp_pb2.Timestamp(seconds=nanos // 1_000_000_000, nanos=nanos % 1_000_000_000)
    stamp_part = transaction_record_pb2.TransactionRecord(consensusTimestamp=stamp).SerializeToString()
    memo_part = transaction_record_pb2.TransactionRecord(memo=memo).SerializeToString() if memo else b""
    record = stamp_part + memo_part if canonical else memo_part + stamp_part
    transaction = field(5, f"signed transaction {nanos}".encode())  # Transaction.signedTransactionBytes
    return Item(record, transaction)


def hash_object(digest: bytes) -> bytes:
    """A v6 ``HashObject`` (SHA_384, 48, hash)."""
    return varint_field(1, 1) + varint_field(2, len(digest)) + field(3, digest)


@dataclass(frozen=True)
class Written:
    content: bytes
    """Decompressed bytes (for v6) or the file itself."""
    stored: bytes
    end_hash: bytes
    file_hash: bytes
    metadata_hash: bytes | None


def v6(
    items: Sequence[Item],
    start: bytes,
    block_number: int,
    *,
    hapi: tuple[int, int, int] = (0, 28, 0),
    sidecars: Sequence[tuple[int, bytes, Sequence[int]]] = (),
    end: bytes | None = None,
) -> Written:
    end_hash = end if end is not None else running_hash(start, [(i.record, i.transaction) for i in items])
    version = b"".join(varint_field(n, v) for n, v in zip((1, 2, 3), hapi, strict=True) if v)
    body = field(1, version) + field(2, hash_object(start))
    for entry in items:
        body += field(3, field(1, entry.transaction) + field(2, entry.record))
    body += field(4, hash_object(end_hash)) + varint_field(5, block_number)
    for sidecar_id, digest, types in sidecars:
        listed = field(1, hash_object(digest)) + varint_field(2, sidecar_id)
        listed += field(3, b"".join(varint(t) for t in types)) if types else b""
        body += field(6, listed)
    content = struct.pack(">i", 6) + body
    metadata = hashlib.sha384(struct.pack(">iiii", 6, *hapi) + start + end_hash + struct.pack(">q", block_number))
    stored = gzip.compress(content, mtime=0)
    return Written(content, stored, end_hash, hashlib.sha384(content).digest(), metadata.digest())


def v5_hash_object(digest: bytes) -> bytes:
    return struct.pack(">Qiii", HASH_OBJECT_CLASS_ID, 1, SHA_384_DIGEST_TYPE, len(digest)) + digest


def v5(items: Sequence[Item], start: bytes, *, hapi: tuple[int, int, int] = (0, 11, 0)) -> Written:
    end_hash = running_hash(start, [(i.record, i.transaction) for i in items])
    head = struct.pack(">iiiii", 5, *hapi, 1)
    body = b"".join(
        struct.pack(">Qii", RECORD_STREAM_OBJECT_CLASS_ID, 1, len(i.record))
        + i.record
        + struct.pack(">i", len(i.transaction))
        + i.transaction
        for i in items
    )
    content = head + v5_hash_object(start) + body + v5_hash_object(end_hash)
    metadata = hashlib.sha384(head + v5_hash_object(start) + v5_hash_object(end_hash)).digest()
    return Written(content, content, end_hash, hashlib.sha384(content).digest(), metadata)


def v2(items: Sequence[Item], previous: bytes, *, version: int = 2, hapi: int = 3) -> Written:
    header = struct.pack(">ii", version, hapi) + b"\x01" + previous
    body = b"".join(
        b"\x02"
        + struct.pack(">i", len(i.transaction))
        + i.transaction
        + struct.pack(">i", len(i.record))
        + i.record
        for i in items
    )
    content = header + body
    if version == 2:
        file_hash = hashlib.sha384(header + hashlib.sha384(body).digest()).digest()
    else:
        file_hash = hashlib.sha384(content).digest()
    return Written(content, content, file_hash, file_hash, None)


def sign(key: rsa.RSAPrivateKey, digest: bytes) -> bytes:
    return key.sign(digest, PKCS1v15(), SHA384())


def signature_v6(key: rsa.RSAPrivateKey, file_hash: bytes, metadata_hash: bytes) -> bytes:
    def signature_object(digest: bytes) -> bytes:
        signed = sign(key, digest)
        return (
            varint_field(1, 1)
            + varint_field(2, len(signed))
            + varint_field(3, 101 - len(signed))
            + field(4, signed)
            + field(5, hash_object(digest))
        )

    return b"\x06" + field(1, signature_object(file_hash)) + field(2, signature_object(metadata_hash))


def signature_v5(key: rsa.RSAPrivateKey, file_hash: bytes, metadata_hash: bytes) -> bytes:
    def signature_object(digest: bytes) -> bytes:
        signed = sign(key, digest)
        return struct.pack(">Qiiii", SIGNATURE_CLASS_ID, 1, 1, len(signed), 101 - len(signed)) + signed

    out = b"\x05" + struct.pack(">i", 1)
    for digest in (file_hash, metadata_hash):
        out += v5_hash_object(digest) + signature_object(digest)
    return out


def signature_v2(key: rsa.RSAPrivateKey, file_hash: bytes) -> bytes:
    signed = sign(key, file_hash)
    return b"\x04" + file_hash + b"\x03" + struct.pack(">i", len(signed)) + signed


def address_book(keys: Sequence[rsa.RSAPrivateKey], stakes: Sequence[int] | None = None) -> bytes:
    book = basic_types_pb2.NodeAddressBook()
    for index, key in enumerate(keys):
        der = key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        entry = book.nodeAddress.add(nodeId=index, RSA_PubKey=der.hex(), memo=f"0.0.{index + 3}".encode())
        entry.nodeAccountId.accountNum = index + 3
        if stakes is not None:
            entry.stake = stakes[index]
    return bytes(book.SerializeToString())
