"""Node signature files (``.rcd_sig``): the hashes a node signed and its RSA signatures over them.

The first byte tells the format:

* 6: a ``SignatureFile`` protobuf follows (file signature and metadata signature, each with its hash);
* 5: int32 object stream signature version, then hash object, signature object (file), hash object, signature
  object (metadata); a hash object is int64 class id, int32 class version, int32 digest type, int32 48, 48
  bytes; a signature object is int64 class id, int32 class version, int32 type (1), int32 length,
  int32 checksum (101 - length), signature bytes;
* 4 (legacy v2): the 48-byte file hash, byte 3, int32 length, signature bytes. No metadata hash.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from ledgermirror.importer._proto import protos
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.record_file_legacy import SHA_384_DIGEST_TYPE
from ledgermirror.importer.running_hash import HASH_LENGTH

SHA_384_WITH_RSA = 1
"""Signature type of every supported format."""
MAX_SIGNATURE_LENGTH = 384
"""The reference's bound for v2/v5 signatures (RSA-3072)."""

_V2_FILE_HASH_MARKER = 4
_V2_SIGNATURE_MARKER = 3
_CLASS_HEAD = struct.Struct(">qi")
_INT = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class SignatureFile:
    name: str
    version: int
    """6, 5 or 2 (every first byte up to 4 is the legacy format)."""
    file_hash: bytes
    file_signature: bytes
    metadata_hash: bytes | None
    metadata_signature: bytes | None


def read_signature_file(name: str, data: bytes) -> SignatureFile:
    if not data:
        raise StreamParseError(name, "empty signature file")
    version = data[0]
    if version == 6:
        return _read_v6(name, data)
    if version == 5:
        return _read_v5(name, data)
    if version <= _V2_FILE_HASH_MARKER:
        return _read_v2(name, data)
    raise StreamParseError(name, f"Unsupported signature file version: {version}")


def _read_v6(name: str, data: bytes) -> SignatureFile:
    modules = protos()
    try:
        message = modules.signature_file.SignatureFile.FromString(data[1:])
    except modules.decode_error as error:
        raise StreamParseError(name, f"bad SignatureFile: {error}") from error
    if not message.HasField("file_signature"):
        raise StreamParseError(name, f"The file {name} does not have a file signature")
    if not message.HasField("metadata_signature"):
        raise StreamParseError(name, f"The file {name} does not have a file metadata signature")
    file_hash, file_signature = _signature_object(name, "file", message.file_signature)
    metadata_hash, metadata_signature = _signature_object(name, "metadata", message.metadata_signature)
    return SignatureFile(name, 6, file_hash, file_signature, metadata_hash, metadata_signature)


def _signature_object(name: str, what: str, signature: Any) -> tuple[bytes, bytes]:
    if signature.type != SHA_384_WITH_RSA:
        raise StreamParseError(name, f"{what} signature type {signature.type} is not SHA_384_WITH_RSA")
    hash_object = signature.hash_object
    if hash_object.algorithm != 1 or len(hash_object.hash) != HASH_LENGTH:
        raise StreamParseError(name, f"{what} signature's hash is not a SHA-384 hash")
    if not signature.signature:
        raise StreamParseError(name, f"empty {what} signature")
    return bytes(hash_object.hash), bytes(signature.signature)


class _Reader:
    def __init__(self, name: str, data: bytes, pos: int) -> None:
        self.name, self.data, self.pos = name, data, pos

    def take(self, count: int, what: str) -> bytes:
        end = self.pos + count
        if count < 0 or end > len(self.data):
            raise StreamParseError(self.name, f"truncated {what}")
        chunk, self.pos = self.data[self.pos : end], end
        return chunk

    def int32(self, what: str) -> int:
        return int(_INT.unpack(self.take(4, what))[0])

    def expect(self, value: int, actual: int, what: str) -> None:
        if value != actual:
            raise StreamParseError(self.name, f"{what} is {actual}, expected {value}")

    def hash_object(self, what: str) -> bytes:
        self.take(_CLASS_HEAD.size, what + " hash object")
        self.expect(SHA_384_DIGEST_TYPE, self.int32(what + " digest type"), what + " digest type")
        self.expect(HASH_LENGTH, self.int32(what + " hash length"), what + " hash length")
        return self.take(HASH_LENGTH, what + " hash")

    def signature_object(self, what: str) -> bytes:
        self.take(_CLASS_HEAD.size, what + " signature object")
        self.expect(SHA_384_WITH_RSA, self.int32(what + " signature type"), what + " signature type")
        length = self.int32(what + " signature length")
        if not 1 <= length <= MAX_SIGNATURE_LENGTH:
            raise StreamParseError(self.name, f"{what} signature length {length}")
        self.expect(101 - length, self.int32(what + " checksum"), what + " checksum")
        return self.take(length, what + " signature")

    def end(self) -> None:
        if self.pos != len(self.data):
            raise StreamParseError(self.name, f"{len(self.data) - self.pos} extra bytes at the end")


def _read_v5(name: str, data: bytes) -> SignatureFile:
    reader = _Reader(name, data, 1)
    reader.int32("object stream signature version")
    file_hash = reader.hash_object("file")
    file_signature = reader.signature_object("file")
    metadata_hash = reader.hash_object("metadata")
    metadata_signature = reader.signature_object("metadata")
    reader.end()
    return SignatureFile(name, 5, file_hash, file_signature, metadata_hash, metadata_signature)


def _read_v2(name: str, data: bytes) -> SignatureFile:
    reader = _Reader(name, data, 0)
    reader.expect(_V2_FILE_HASH_MARKER, reader.take(1, "hash marker")[0], "hash marker")
    file_hash = reader.take(HASH_LENGTH, "file hash")
    reader.expect(_V2_SIGNATURE_MARKER, reader.take(1, "signature marker")[0], "signature marker")
    length = reader.int32("signature length")
    if length < 1:
        raise StreamParseError(name, f"signature length {length}")
    signature = reader.take(length, "signature")
    reader.end()
    return SignatureFile(name, 2, file_hash, signature, None, None)
