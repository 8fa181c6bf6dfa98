"""The record file a wrapped record block carries, in the version its ``SignedRecordFileProof`` names.

A block node serves every record file of the network's history as a ``RecordStreamFile`` inside a block,
whatever the file's original version; the proof's ``version`` says which (2, 5 or 6), and its node signatures
sign the **original** file's hash. So a v2 or v5 file is rebuilt byte for byte from the wrapped content, as the
reference's ``RecordFileItemReaderV2``/``V5`` do, and read by the record path's own readers
(:mod:`.record_file_legacy`), which give its file hash and chain hashes as for a file from a bucket:

* v2: ``int32 2``, ``int32 hapi_proto_version.minor``, ``0x01``, the start running hash (the previous file's
  hash); per item ``0x02``, the transaction, the record (each with an int32 length). File hash
  SHA-384(header ‖ SHA-384(body)), which is also the file's ``hash``; no HAPI version (as the v2 reader);
* v5: ``int32 5``, HAPI major, minor, patch, ``int32 1``, the start running hash object; per item the record
  stream object (class id, version 1, record, transaction); the end running hash object. File hash SHA-384 of
  every byte; ``hash`` the end running hash;
* v6: ``int32 6`` followed by the contents as they are (the v6 path, unchanged).

A v2 or v5 file's amendments (``RecordStreamItem`` s outside the signed contents) are merged into its items
*before* it is rebuilt, as the reference does: an amendment earlier than an item is inserted before it, one at
the same consensus time replaces it, the rest are appended; the signed hash then covers the merged items.
(A v6 file's amendments are applied after its checks, :func:`.block_verify.amended`.) The metadata hash is not
computed: the proof signs the file hash only.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Sequence

from ledgermirror.importer.block_file import BlockDigest, WrappedRecordFile
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.record_file import (
    RecordFile,
    RecordStreamContents,
    parse_items,
    read_record_stream_contents,
    read_stream_item,
    read_v6,
)
from ledgermirror.importer.record_file_legacy import SHA_384_DIGEST_TYPE, read_v2, read_v5
from ledgermirror.importer.running_hash import CLASS_VERSION, HASH_OBJECT_CLASS_ID, RECORD_STREAM_OBJECT_CLASS_ID
from ledgermirror.importer.stream_names import stem_of

WRAPPED_VERSIONS = (2, 5, 6)
_OBJECT_STREAM_VERSION = 1
_PREVIOUS_HASH_MARKER = b"\x01"
_RECORD_MARKER = b"\x02"


def wrapped_file_name(creation_time: int, version: int = 6) -> str:
    """The record file's name: ``<instant>.rcd.gz`` for v6 (as the bucket has it), ``<instant>.rcd`` before."""
    return stem_of(creation_time) + (".rcd.gz" if version >= 6 else ".rcd")


def read_wrapped_record_file(
    wrapped: WrappedRecordFile, version: int, size: int, digest: BlockDigest | None = None
) -> RecordFile:
    """The record file of version ``version`` (the proof's) that ``wrapped`` carries; ``size`` is the block
    file's, ``digest`` the block's when computed ahead (a v6 file's hash, layout and folded running hash are
    taken from it). Raises :class:`StreamParseError` for another version or malformed contents."""
    name = wrapped_file_name(wrapped.creation_time, version)
    if version not in WRAPPED_VERSIONS:
        raise StreamParseError(name, f"Unsupported record file version {version}")
    if version == 6:
        content = wrapped.record_file_bytes
        if digest is not None and digest.record_layout is not None:
            record = read_v6(
                name,
                content,
                size,
                digest.record_file_hash,
                layout=digest.record_layout,
                folded=digest.record_folded,
            )
        else:
            record = read_v6(name, content, size=size)
        return dataclasses.replace(record, metadata_hash=None)
    contents = read_record_stream_contents(name, wrapped.contents, end_hash_required=version == 5)
    pairs = merged_items(name, contents.pairs, wrapped.amendments)
    if version == 2:
        record = read_v2(name, original_v2(contents, pairs), size=size, version=2)
    else:
        record = read_v5(name, original_v5(contents, pairs), size=size)
    return dataclasses.replace(
        record, metadata_hash=None, block_number=contents.block_number, sidecars=contents.sidecars
    )


def merged_items(
    name: str, pairs: Sequence[tuple[bytes, bytes]], amendments: Sequence[bytes]
) -> list[tuple[bytes, bytes]]:
    """The items with the amendments merged in by consensus time (the reference's order of merging)."""
    if not amendments:
        return list(pairs)
    items = parse_items(name, pairs)
    extra = [read_stream_item(name, data) for data in amendments]
    out = []
    taken = 0
    for item in items:
        while taken < len(extra) and extra[taken].consensus_timestamp < item.consensus_timestamp:
            out.append(extra[taken])
            taken += 1
        if taken < len(extra) and extra[taken].consensus_timestamp == item.consensus_timestamp:
            out.append(extra[taken])
            taken += 1
        else:
            out.append(item)
    out.extend(extra[taken:])
    return [(item.record_bytes, item.transaction_bytes) for item in out]


def original_v2(contents: RecordStreamContents, pairs: Sequence[tuple[bytes, bytes]]) -> bytes:
    """The v2 record file the contents came from."""
    parts = [
        struct.pack(">ii", 2, contents.hapi_version.minor),
        _PREVIOUS_HASH_MARKER,
        contents.start_running_hash,
    ]
    for record, transaction in pairs:
        parts += (_RECORD_MARKER, _sized(transaction), _sized(record))
    return b"".join(parts)


def original_v5(contents: RecordStreamContents, pairs: Sequence[tuple[bytes, bytes]]) -> bytes:
    """The v5 record file the contents came from."""
    assert contents.end_running_hash is not None
    hapi = contents.hapi_version
    parts = [struct.pack(">iiiii", 5, *hapi, _OBJECT_STREAM_VERSION), _hash_object(contents.start_running_hash)]
    for record, transaction in pairs:
        parts += (
            struct.pack(">Qi", RECORD_STREAM_OBJECT_CLASS_ID, CLASS_VERSION),
            _sized(record),
            _sized(transaction),
        )
    parts.append(_hash_object(contents.end_running_hash))
    return b"".join(parts)


def _sized(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


def _hash_object(digest: bytes) -> bytes:
    return struct.pack(">Qiii", HASH_OBJECT_CLASS_ID, CLASS_VERSION, SHA_384_DIGEST_TYPE, len(digest)) + digest
