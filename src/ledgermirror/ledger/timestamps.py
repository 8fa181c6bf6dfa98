"""Consensus timestamps: int nanoseconds in the database, ``seconds.nanos`` strings on the wire.

>>> format_ns(1234567890000000001)
'1234567890.000000001'
>>> parse_timestamp("1234567890.5")
1234567890500000000
"""

from __future__ import annotations

import re

_TIMESTAMP = re.compile(r"^(\d{1,17})(?:\.(\d{1,9}))?$", re.ASCII)


class InvalidTimestamp(ValueError):
    """The text is not ``seconds[.nanos]``."""


def parse_timestamp(text: str) -> int:
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        raise InvalidTimestamp(text)
    seconds, fraction = match.groups()
    nanos = int(seconds) * 1_000_000_000 + int((fraction or "0").ljust(9, "0"))
    if nanos >= 1 << 63:
        raise InvalidTimestamp(text)
    return nanos


def format_ns(value: int | None) -> str | None:
    if value is None:
        return None
    sign = "-" if value < 0 else ""
    seconds, nanos = divmod(abs(value), 1_000_000_000)
    return f"{sign}{seconds}.{nanos:09d}"
