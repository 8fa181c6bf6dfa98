"""What a revert says: the reference's ``detail`` is the string of an ABI ``Error(string)`` and nothing else."""

from __future__ import annotations

ERROR_SELECTOR = bytes.fromhex("08c379a0")


def revert_reason(data: bytes) -> str:
    """The message of ``Error(string)`` revert data; ``""`` for anything else (custom errors, ``Panic(uint256)``,
    an empty revert) or for data that does not decode."""
    if len(data) < 4 + 64 or data[:4] != ERROR_SELECTOR:
        return ""
    body = data[4:]
    offset = int.from_bytes(body[:32], "big")
    if offset + 32 > len(body):
        return ""
    length = int.from_bytes(body[offset : offset + 32], "big")
    start = offset + 32
    if start + length > len(body):
        return ""
    return body[start : start + length].decode("utf-8", errors="replace")
