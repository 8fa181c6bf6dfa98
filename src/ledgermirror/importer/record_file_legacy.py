"""Record files before protobuf: v5 (platform object stream) and v1/v2 (type-marked records), struct readers.

v5, all integers big-endian::

    int32 5, int32 hapi major, minor, patch, int32 object stream version,
    hash object (start running hash),
    record stream objects: int64 class id, int32 class version, int32 + TransactionRecord, int32 + Transaction,
    hash object (end running hash)

where a hash object is int64 class id, int32 class version, int32 digest type, int32 length (48), 48 bytes.
The file hash covers every byte; the metadata hash covers the 20 header bytes and both hash objects.

v1 and v2::

    int32 version, int32 hapi version, byte 1, 48-byte previous file hash,
    repeated: byte 2, int32 + Transaction, int32 + TransactionRecord

v2's file hash is SHA-384(header ‖ SHA-384(body)), v1's is SHA-384 of every byte. Both chain by file hash.
"""

from __future__ import annotations

import hashlib
import struct

from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.record_file import RecordFile, SemanticVersion, parse_items
from ledgermirror.importer.running_hash import HASH_LENGTH, RECORD_STREAM_OBJECT_CLASS_ID
from ledgermirror.importer.stream_names import instant_of

SHA_384_DIGEST_TYPE = 0x58FF811B
"""The platform's ``DigestType.SHA_384`` id in a v5 hash object."""

_V5_HEADER = struct.Struct(">iiiii")
_HASH_OBJECT = struct.Struct(">qiii")
_HASH_OBJECT_SIZE = _HASH_OBJECT.size + HASH_LENGTH
_OBJECT_HEAD = struct.Struct(">Qi")
_INT = struct.Struct(">i")
_PREVIOUS_HASH_MARKER = 1
_RECORD_MARKER = 2
_V2_HEADER_SIZE = 4 + 4 + 1 + HASH_LENGTH


class _Cursor:
    """Reads big-endian values from ``data``, naming the file in every error."""

    def __init__(self, name: str, data: bytes, pos: int = 0) -> None:
        self.name = name
        self.data = data
        self.pos = pos

    def take(self, count: int, what: str) -> bytes:
        end = self.pos + count
        if count < 0 or end > len(self.data):
            raise StreamParseError(self.name, f"truncated {what}")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def int32(self, what: str) -> int:
        (value,) = _INT.unpack(self.take(4, what))
        return int(value)

    def sized(self, what: str) -> bytes:
        length = self.int32(what + " length")
        if length < 1:
            raise StreamParseError(self.name, f"{what} length {length}")
        return self.take(length, what)

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos


def read_v5(name: str, content: bytes, size: int) -> RecordFile:
    cursor = _Cursor(name, content)
    _, major, minor, patch, _stream_version = _V5_HEADER.unpack(cursor.take(_V5_HEADER.size, "header"))
    start_object = cursor.take(_HASH_OBJECT_SIZE, "start running hash object")
    start_class_id = _hash_of_object(name, "start", start_object)[0]
    pairs: list[tuple[bytes, bytes]] = []
    while True:
        if cursor.remaining < 8:
            raise StreamParseError(name, "truncated before the end running hash object")
        (class_id,) = struct.unpack_from(">q", content, cursor.pos)
        if class_id == start_class_id:
            break
        object_class_id, _ = _OBJECT_HEAD.unpack(cursor.take(_OBJECT_HEAD.size, "record stream object"))
        if object_class_id != RECORD_STREAM_OBJECT_CLASS_ID:
            raise StreamParseError(name, f"unexpected class id {object_class_id:#x}")
        record_bytes = cursor.sized("record")
        pairs.append((record_bytes, cursor.sized("transaction")))
    end_object = cursor.take(_HASH_OBJECT_SIZE, "end running hash object")
    if cursor.remaining:
        raise StreamParseError(name, f"{cursor.remaining} bytes after the end running hash object")
    if not pairs:
        raise StreamParseError(name, "no record stream objects")
    items = parse_items(name, pairs)
    start_hash = _hash_of_object(name, "start", start_object)[1]
    end_hash = _hash_of_object(name, "end", end_object)[1]
    return RecordFile(
        name=name,
        version=5,
        hapi_version=SemanticVersion(major, minor, patch),
        previous_hash=start_hash,
        hash=end_hash,
        file_hash=hashlib.sha384(content).digest(),
        metadata_hash=hashlib.sha384(content[: _V5_HEADER.size] + start_object + end_object).digest(),
        block_number=None,
        items=tuple(items),
        sidecars=(),
        size=size,
        consensus_start=items[0].consensus_timestamp,
        consensus_end=items[-1].consensus_timestamp,
    )


def _hash_of_object(name: str, what: str, hash_object: bytes) -> tuple[int, bytes]:
    class_id, _, digest_type, length = _HASH_OBJECT.unpack_from(hash_object)
    if digest_type != SHA_384_DIGEST_TYPE or length != HASH_LENGTH:
        raise StreamParseError(name, f"{what} running hash object is not SHA-384 ({digest_type:#x}, {length})")
    return class_id, hash_object[_HASH_OBJECT.size :]


def read_v2(name: str, content: bytes, size: int, version: int) -> RecordFile:
    cursor = _Cursor(name, content, pos=8)
    if cursor.take(1, "previous hash marker")[0] != _PREVIOUS_HASH_MARKER:
        raise StreamParseError(name, "missing previous hash marker")
    previous_hash = cursor.take(HASH_LENGTH, "previous hash")
    pairs: list[tuple[bytes, bytes]] = []
    while cursor.remaining:
        if cursor.take(1, "record marker")[0] != _RECORD_MARKER:
            raise StreamParseError(name, f"bad record marker at byte {cursor.pos - 1}")
        transaction_bytes = cursor.sized("transaction")
        pairs.append((cursor.sized("record"), transaction_bytes))
    items = parse_items(name, pairs)
    if version == 2:
        body_hash = hashlib.sha384(content[_V2_HEADER_SIZE:]).digest()
        file_hash = hashlib.sha384(content[:_V2_HEADER_SIZE] + body_hash).digest()
    else:
        file_hash = hashlib.sha384(content).digest()
    return RecordFile(
        name=name,
        version=version,
        hapi_version=None,
        previous_hash=previous_hash,
        hash=file_hash,
        file_hash=file_hash,
        metadata_hash=None,
        block_number=None,
        items=tuple(items),
        sidecars=(),
        size=size,
        consensus_start=items[0].consensus_timestamp if items else instant_of(name),
        consensus_end=items[-1].consensus_timestamp if items else instant_of(name),
    )
