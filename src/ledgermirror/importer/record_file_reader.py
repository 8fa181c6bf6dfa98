"""Reading a record file of any supported version: v6 (:mod:`.record_file`), v1, v2 and v5
(:mod:`.record_file_legacy`)."""

from __future__ import annotations

import struct

from ledgermirror.importer import record_file_legacy
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.record_file import RecordFile, decompress, read_v6


def read_record_file(name: str, data: bytes) -> RecordFile:
    """Parse a record file of any supported version (1, 2, 5, 6) from its stored bytes."""
    content = decompress(name, data)
    if len(content) < 4:
        raise StreamParseError(name, "shorter than its version header")
    (version,) = struct.unpack_from(">i", content)
    if version == 6:
        return read_v6(name, content, size=len(data))
    if version == 5:
        return record_file_legacy.read_v5(name, content, size=len(data))
    if version in (1, 2):
        return record_file_legacy.read_v2(name, content, size=len(data), version=version)
    raise StreamParseError(name, f"unsupported record file version {version}")
