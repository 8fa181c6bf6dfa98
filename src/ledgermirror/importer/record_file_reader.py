"""Reading a record file of any supported version: v6 (:mod:`.record_file`), v1, v2 and v5
(:mod:`.record_file_legacy`)."""

from __future__ import annotations

import hashlib
import struct
import time
from dataclasses import dataclass

from ledgermirror.importer import record_file_legacy
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.record_file import (
    V6_HEADER,
    RecordFile,
    RecordStreamLayout,
    decompress,
    lay_out_v6,
    read_v6,
)


@dataclass(frozen=True, slots=True)
class Unpacked:
    """A record file's stored bytes made ready to parse (:func:`unpack_record_file`)."""

    content: bytes
    """The decompressed bytes."""
    content_hash: bytes | None
    """A v6 file's file hash, the SHA-384 of ``content``; None for the other versions (hashed otherwise)."""
    seconds: float
    """The time the unpacking took."""
    layout: RecordStreamLayout | None = None
    """A v6 file's layout (:func:`unpack_v6_file`), or None: read while parsing."""
    folded: tuple[bytes, bytes] | None = None
    """A v6 file's running hash folded over its items (:func:`unpack_v6_file`), or None: folded when verified."""


def unpack_record_file(name: str, data: bytes) -> Unpacked:
    """Decompress the stored bytes and hash a v6 file's content: the part of reading a file that runs without
    Python's GIL (zlib and hashlib release it for large buffers), so the importer runs it on another thread while
    it builds the rows of earlier files (``downloader.download``)."""
    started = time.perf_counter()
    content = decompress(name, data)
    digest = hashlib.sha384(content).digest() if content.startswith(V6_HEADER) else None
    return Unpacked(content, digest, time.perf_counter() - started)


def unpack_v6_file(name: str, data: bytes) -> Unpacked:
    """:func:`unpack_record_file`, and for a v6 file its layout (with what its items give ahead:
    ``items_read_ahead``) and its running hash folded over its items too: everything of reading and verifying a
    v6 file that needs neither the address book nor the import's state, for ``stream_unpacker``'s process. A
    file these wire-level reads refuse comes back as from :func:`unpack_record_file`; parsing it again then
    refuses it with the whole file's checks."""
    unpacked = unpack_record_file(name, data)
    if unpacked.content_hash is None:
        return unpacked
    started = time.perf_counter()
    laid_out = lay_out_v6(name, unpacked.content)
    if laid_out is None:
        return unpacked
    layout, folded = laid_out
    seconds = unpacked.seconds + time.perf_counter() - started
    return Unpacked(unpacked.content, unpacked.content_hash, seconds, layout, folded)


def read_record_file(name: str, data: bytes, unpacked: Unpacked | None = None) -> RecordFile:
    """Parse a record file of any supported version (1, 2, 5, 6) from its stored bytes (``unpacked``: their
    :func:`unpack_record_file`, made already)."""
    if unpacked is None:
        unpacked = unpack_record_file(name, data)
    content = unpacked.content
    if len(content) < 4:
        raise StreamParseError(name, "shorter than its version header")
    (version,) = struct.unpack_from(">i", content)
    if version == 6:
        return read_v6(
            name,
            content,
            size=len(data),
            content_hash=unpacked.content_hash,
            layout=unpacked.layout,
            folded=unpacked.folded,
        )
    if version == 5:
        return record_file_legacy.read_v5(name, content, size=len(data))
    if version in (1, 2):
        return record_file_legacy.read_v2(name, content, size=len(data), version=version)
    raise StreamParseError(name, f"unsupported record file version {version}")
