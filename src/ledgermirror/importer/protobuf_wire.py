"""A minimal protobuf wire-format scanner: the exact bytes of embedded messages, without re-serializing.

The running hash is defined over the bytes the node wrote. Parsing with the generated classes and serializing
again gives the same bytes only when the writer used the canonical encoding, so the readers slice the original
bytes instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ledgermirror.importer.errors import StreamParseError

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5
_MAX_VARINT_BYTES = 10
_UINT64_MASK = (1 << 64) - 1


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


def encode_varint(value: int) -> bytes:
    """``value`` as a varint; a negative one as its 64-bit two's complement (ten bytes), as protobuf writes an
    ``int64``."""
    value &= _UINT64_MASK
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key_of(number: int, wire_type: int) -> bytes:
    """The encoded key (tag) of field ``number`` with ``wire_type``."""
    return encode_varint(number << 3 | wire_type)


def length_delimited(key: bytes, payload: bytes) -> bytes:
    """A length-delimited field: ``key`` (:func:`key_of`), the payload's length, the payload."""
    size = len(payload)
    if size < 0x80:
        return b"".join((key, bytes((size,)), payload))
    if size < 0x4000:
        return b"".join((key, bytes((size & 0x7F | 0x80, size >> 7)), payload))
    return b"".join((key, encode_varint(size), payload))


def message_field(number: int, payload: bytes) -> bytes:
    """Field ``number`` holding ``payload`` (bytes, a string or an encoded message)."""
    return length_delimited(key_of(number, LENGTH_DELIMITED), payload)


def varint_field(number: int, value: int) -> bytes:
    """Field ``number`` holding the varint ``value``."""
    return key_of(number, VARINT) + encode_varint(value)


def retagged(data: bytes, keys: Mapping[int, bytes], file_name: str) -> tuple[list[bytes], dict[int, bytes]]:
    """Move fields of the message ``data`` to other field numbers without parsing them.

    Returns, in order, for each field whose decoded key (``number << 3 | wire type``) is in ``keys``: the new
    key ``keys[key]`` and the field's encoded value (a length-delimited value with its length), as two parts
    to join; and, for every other key, the encoded value of its last occurrence. Parsing the joined parts gives
    the fields the parsed ``data`` holds, under the new numbers (a message field that occurs twice is merged
    then, as it is in ``data``). The wire type stays the key's, so a field of the wrong wire type for its
    number, which protobuf keeps as unknown, is among the others here too.
    """
    parts: list[bytes] = []
    others: dict[int, bytes] = {}
    pos = 0
    end = len(data)
    while pos < end:  # scan_fields, inlined: this runs for every transaction of a native block
        key = data[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = read_varint(data, pos, end, file_name)
        wire_type = key & 7
        start = pos
        if wire_type == LENGTH_DELIMITED:
            length = data[pos] if pos < end else 0x80
            if length < 0x80:
                pos += 1
            else:
                length, pos = read_varint(data, pos, end, file_name)
            after = pos + length
        elif wire_type == VARINT:
            after = pos
            while after < end and data[after] >= 0x80:
                after += 1
            after += 1  # past its last byte
            if after - pos > _MAX_VARINT_BYTES:
                raise StreamParseError(file_name, "truncated or overlong varint")
        elif wire_type == FIXED64:
            after = pos + 8
        elif wire_type == FIXED32:
            after = pos + 4
        else:
            raise StreamParseError(file_name, f"unsupported protobuf wire type {wire_type} (field {key >> 3})")
        if key < 8 or after > end:  # field number 0, or a value past the end
            raise StreamParseError(file_name, f"malformed protobuf field {key >> 3}")
        new_key = keys.get(key)
        if new_key is not None:
            parts.append(new_key)
            parts.append(data[start:after])
        else:
            others[key] = data[start:after]
        pos = after
    return parts, others


def whole_field(data: bytes, start: int, end: int, file_name: str) -> tuple[int, int] | None:
    """``(key, value start)`` when ``data[start:end]`` is one length-delimited field with a one-byte key (field
    numbers up to 15), as a ``BlockItem`` is; None otherwise (the callers then scan)."""
    if end - start < 2:
        return None
    key = data[start]
    if key >= 0x80 or key & 7 != LENGTH_DELIMITED:
        return None
    length = data[start + 1]
    value_start = start + 2
    if length >= 0x80:
        length, value_start = read_varint(data, start + 1, end, file_name)
    return (key, value_start) if value_start + length == end else None


def sole_field(data: bytes, number: int, file_name: str) -> bytes:
    """The value of the last length-delimited field ``number`` of ``data`` (b"" when there is none); quick
    when that field is all of ``data`` (:func:`whole_field`)."""
    whole = whole_field(data, 0, len(data), file_name)
    if whole is not None and whole[0] == number << 3 | LENGTH_DELIMITED:
        return data[whole[1] :]
    found = b""
    for field_number, wire_type, start, end in scan_fields(data, 0, len(data), file_name):
        if field_number == number and wire_type == LENGTH_DELIMITED:
            found = data[start:end]
    return found
