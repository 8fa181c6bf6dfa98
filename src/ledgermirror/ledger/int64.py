"""The signed 64-bit range of PostgreSQL ``bigint`` (and of protobuf ``int64``), which every id, amount and
timestamp of the ledger lives in.

>>> to_signed64(1 << 63) == INT64_MIN
True
>>> to_signed64(-1)
-1
"""

from __future__ import annotations

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_UINT64_MASK = (1 << 64) - 1


def to_signed64(value: int) -> int:
    """The low 64 bits of ``value`` read as a two's-complement signed integer."""
    value &= _UINT64_MASK
    return value - (1 << 64) if value > INT64_MAX else value


def to_unsigned64(value: int) -> int:
    """The low 64 bits of ``value`` read as an unsigned integer."""
    return value & _UINT64_MASK
