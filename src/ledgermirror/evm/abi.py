"""The few ABI encodings the system contracts answer with (Solidity's ABI: 32-byte words, dynamic values after an
offset)."""

from __future__ import annotations


def uint(value: int) -> bytes:
    return (value % (1 << 256)).to_bytes(32, "big")


def boolean(value: bool) -> bytes:
    return uint(1 if value else 0)


def address(value: bytes) -> bytes:
    return bytes(12) + value


def string(text: str) -> bytes:
    """One ``string`` return value: its offset, its length, its bytes padded to whole words."""
    data = text.encode()
    padded = data + bytes(-len(data) % 32)
    return uint(32) + uint(len(data)) + padded


def word(data: bytes, index: int) -> int | None:
    """The ``index``-th 32-byte word of call arguments (after the selector), None when the data is too short."""
    start = 4 + 32 * index
    if len(data) < start + 32:
        return None
    return int.from_bytes(data[start : start + 32], "big")


def address_argument(data: bytes, index: int) -> bytes | None:
    value = word(data, index)
    return None if value is None or value >> 160 else value.to_bytes(20, "big")
