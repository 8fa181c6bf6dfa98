"""A minimal protobuf wire-format scanner: the exact bytes of embedded messages, without re-serializing.

The running hash is defined over the bytes the node wrote. Parsing with the generated classes and serializing
again gives the same bytes only when the writer used the canonical encoding, so the readers slice the original
bytes instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from ledgermirror.importer.errors import StreamParseError

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5


def read_varint(data: bytes, pos: int, end: int, file_name: str) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    result = 0
    shift = 0
    while pos < end and shift < 70:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
    raise StreamParseError(file_name, "truncated or overlong varint")


def scan_fields(data: bytes, start: int, end: int, file_name: str) -> Iterator[tuple[int, int, int, int]]:
    """Yield ``(field number, wire type, value start, value end)`` for each field in ``data[start:end]``.

    For a varint the value is ``data[value start:value end]`` in its encoded form; callers decode it with
    :func:`read_varint`.
    """
    pos = start
    while pos < end:
        key = data[pos]
        if key < 0x80:  # one-byte keys and lengths are the common case: no call
            pos += 1
        else:
            key, pos = read_varint(data, pos, end, file_name)
        number, wire_type = key >> 3, key & 7
        if wire_type == LENGTH_DELIMITED:
            length = data[pos] if pos < end else 0x80
            if length < 0x80:
                pos += 1
            else:
                length, pos = read_varint(data, pos, end, file_name)
            after = pos + length
        elif wire_type == VARINT:
            _, after = read_varint(data, pos, end, file_name)
        elif wire_type == FIXED64:
            after = pos + 8
        elif wire_type == FIXED32:
            after = pos + 4
        else:
            raise StreamParseError(file_name, f"unsupported protobuf wire type {wire_type} (field {number})")
        if number == 0 or after > end:
            raise StreamParseError(file_name, f"malformed protobuf field {number}")
        yield number, wire_type, pos, after
        pos = after
