"""A minimal protobuf writer, enough for the system files the generator stores (address books, the fee schedule
and the exchange rate file). Fields are written in the order given; only varints and length-delimited values.
"""

from __future__ import annotations

from collections.abc import Iterable

_VARINT = 0
_BYTES = 2


def varint(value: int) -> bytes:
    """Base-128 varint; negative values as their 64-bit two's complement, as protobuf does for int64."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def int_field(number: int, value: int) -> bytes:
    """A varint field; proto3 leaves zero values out."""
    return b"" if value == 0 else varint(number << 3 | _VARINT) + varint(value)


def bytes_field(number: int, value: bytes) -> bytes:
    return varint(number << 3 | _BYTES) + varint(len(value)) + value


def text_field(number: int, value: str) -> bytes:
    return bytes_field(number, value.encode())


def message(*fields: bytes) -> bytes:
    return b"".join(fields)


def repeated(number: int, values: Iterable[bytes]) -> bytes:
    return b"".join(bytes_field(number, value) for value in values)
